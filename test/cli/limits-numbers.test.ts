// Numbers that never lie (issue 29, classes 2 and 3): every f16 vlc writes saturates at ±65504
// instead of becoming Inf; quality figures of tiny (1e-40, 1e-20), huge and mixed-scale data are
// computed at a power-of-two scale, so the recall compress prints is the recall `vlc eval` measures
// on the file it wrote; anchors f16 cannot hold are kept in f32.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuKnn } from '../../dist/backend/cpu/index.js';
import { storableAnchorDtype } from '../../dist/api/compress.js';
import { decodedRecall, trueNeighbours } from '../../dist/quality/recall.js';
import { datasetFromF32, f16ToF32, f32ToF16, halfFromFloatBits } from '../../dist/vectors/dataset.js';
import { maxAbsOf, SAFE_BAND, scaleFor } from '../../dist/vectors/scale.js';
import { f32ToF16Into } from '../../dist/io/writers/half.js';
import { npyBytes, readNpy, tempDir, vlc } from './helpers.js';
import { rng } from '../rng.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('limits-numbers');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const isInfOrNaN = (h: number) => (h & 0x7c00) === 0x7c00;

describe('class 2: every narrowing to f16 saturates (vectors/dataset.ts f32ToF16)', () => {
  it('every finite half survives the round trip; beyond ±65504 every finite value saturates; Inf and NaN stay', () => {
    for (let h = 0; h < 0x10000; h++) if (!isInfOrNaN(h)) expect(f32ToF16(f16ToF32(h))).toBe(h);
    const beyond = [65504, 65505, 65519, 65519.99, 65520, 65536, 1e5, 1e10, 3.4e38];
    for (const v of beyond) {
      expect(f32ToF16(v)).toBe(0x7bff);
      expect(f32ToF16(-v)).toBe(0xfbff);
    }
    expect(f32ToF16(Infinity)).toBe(0x7c00);
    expect(f32ToF16(-Infinity)).toBe(0xfc00);
    expect(isInfOrNaN(f32ToF16(NaN)) && (f32ToF16(NaN) & 0x3ff) !== 0).toBe(true);
    // Below the largest value nothing changes: round to nearest even, as before.
    expect(f32ToF16(65503)).toBe(0x7bff);
    expect(f32ToF16(65471)).toBe(0x7bfe);
    expect(f32ToF16(1e-8)).toBe(0); // under f16's smallest subnormal: zero, as IEEE rounding gives
  });
  it('the bulk writer path (f32ToF16Into) and the bits path agree with it on random values over the whole f32 range', () => {
    const r = rng(29);
    const src = Float32Array.from({ length: 20000 }, () => (r() - 0.5) * 2 ** Math.floor(r() * 260 - 130));
    const out = new Uint16Array(src.length);
    f32ToF16Into(src, 0, out);
    const bits = new Uint32Array(src.buffer);
    for (let i = 0; i < src.length; i++) {
      expect(out[i]).toBe(f32ToF16(src[i]));
      expect(halfFromFloatBits(bits[i])).toBe(out[i]);
      expect(isInfOrNaN(out[i])).toBe(false);
    }
  });

  it('an f16 input at ±65504: decompress (f16) and --anchors write no Inf or NaN, for every residual', () => {
    const n = 300, d = 8, r = rng(4);
    const vals = Float32Array.from({ length: n * d }, (_, i) => {
      const edge = [65504, -65504, 65472, -65440][i % 4];
      return i % 3 === 0 ? edge : f16ToF32(f32ToF16(edge * (0.9 + 0.1 * r())));
    });
    const half = Uint16Array.from(vals, f32ToF16);
    fs.writeFileSync(path.join(dir, 'edge.npy'), npyBytes('<f2', [n, d], new Uint8Array(half.buffer)));
    for (const residual of ['none', 'int8', 'int4', 'bits']) {
      const c = vlc(['compress', 'edge.npy', '-o', `edge-${residual}.vlc`, '--residual', residual, '--device', 'cpu', '--anchors', '16', '--iters', '20'], { cwd: dir });
      expect(c.code, c.stderr).toBe(0);
      for (const [extra, out] of [[[], `edge-${residual}.npy`], [['--anchors'], `edge-${residual}.anchors.npy`]] as const) {
        const dcmp = vlc(['decompress', `edge-${residual}.vlc`, '-o', out, ...extra], { cwd: dir });
        expect(dcmp.code, dcmp.stderr).toBe(0);
        const got = readNpy(path.join(dir, out));
        expect(got.descr).toBe('<f2');
        expect(Array.from(got.data as Uint16Array).filter(isInfOrNaN)).toEqual([]);
      }
    }
  });
  it('decompress --dtype f16 of vectors beyond f16 is refused before anything is written', () => {
    const n = 50, d = 4;
    const x = Float32Array.from({ length: n * d }, (_, i) => (i % 7) * 1e6 + i);
    fs.writeFileSync(path.join(dir, 'big.npy'), npyBytes('<f4', [n, d], new Uint8Array(x.buffer)));
    expect(vlc(['compress', 'big.npy', '-o', 'big.vlc', '--residual', 'none', '--device', 'cpu', '--anchors', '4'], { cwd: dir }).code).toBe(0);
    const r = vlc(['decompress', 'big.vlc', '-o', 'big16.npy', '--dtype', 'f16'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^vlc: big\.vlc: its vectors reach .*beyond float16's range \(±65504\); use --dtype f32\n$/);
    expect(fs.existsSync(path.join(dir, 'big16.npy'))).toBe(false);
  });
});

/** n×d f32 rows in 10 clusters, row i at scales[i mod scales.length]. */
function scaled(n: number, d: number, scales: number[], seed = 7): Float32Array {
  const r = rng(seed);
  return Float32Array.from({ length: n * d }, (_, e) => ((Math.floor(e / d) % 10) + r()) * scales[Math.floor(e / d) % scales.length]);
}

describe('class 3: quality figures at any scale (vectors/scale.ts)', () => {
  it('the scale is a power of two, 1 inside the safe band', () => {
    expect(scaleFor(1)).toBe(1);
    expect(scaleFor(SAFE_BAND.lo)).toBe(1);
    expect(scaleFor(SAFE_BAND.hi)).toBe(1);
    expect(scaleFor(0)).toBe(1);
    for (const m of [1e-44, 1e-40, 1e-20, 3e-6, 1e5, 1e17, 3e38]) {
      const s = scaleFor(m);
      expect(Number.isInteger(Math.log2(s))).toBe(true);
      expect(m * s).toBeGreaterThanOrEqual(1);
      expect(m * s).toBeLessThan(2);
    }
  });
  it('maxAbsOf by bits equals the float maximum, for f32 and f16 data', () => {
    const x = scaled(100, 8, [1e-40, 3, -1e-20, 7e9]);
    const ds = datasetFromF32(x, 100, 8);
    expect(maxAbsOf(ds)).toBe(Math.max(...Array.from(x, Math.abs)));
    expect(maxAbsOf(ds, [0, 2])).toBe(Math.max(...Array.from(x.subarray(0, 8), Math.abs), ...Array.from(x.subarray(16, 24), Math.abs)));
  });
  it('at 1e-40 a decoding to zeros measures as lost (the old figure was 1.000), and the truth is that of the data at scale 1', async () => {
    const n = 150, d = 8;
    const tiny = scaled(n, d, [1e-40]);
    const plan = { base: null, queries: [...Array(50).keys()] };
    const truth = await trueNeighbours(tiny, n, d, plan, cpuKnn);
    const unit = Float32Array.from(tiny, (v) => v * 2 ** 133);
    expect(Array.from(truth.ids)).toEqual(Array.from((await trueNeighbours(unit, n, d, plan, cpuKnn)).ids));
    const zeros = await decodedRecall(tiny, n, d, (_i, out) => out.fill(0), plan, truth, cpuKnn);
    expect(zeros.recall_at_10!).toBeLessThan(0.3);
    const exact = await decodedRecall(tiny, n, d, (i, out) => out.set(tiny.subarray(i * d, (i + 1) * d)), plan, truth, cpuKnn);
    expect(exact.recall_at_10).toBe(1);
  });
  it('anchors f16 cannot hold (beyond 65504, below its normal range) are stored as f32; --anchor-dtype f16 then refused', () => {
    expect(storableAnchorDtype(Float32Array.of(0.5, -3), undefined)).toBe('f16');
    expect(storableAnchorDtype(Float32Array.of(0, 0), undefined)).toBe('f16');
    expect(storableAnchorDtype(Float32Array.of(1e-40, 0), undefined)).toBe('f32');
    expect(storableAnchorDtype(Float32Array.of(1e-6, 0), undefined)).toBe('f32');
    expect(storableAnchorDtype(Float32Array.of(1e5, 0), undefined)).toBe('f32');
    expect(() => storableAnchorDtype(Float32Array.of(1e-20), 'f16')).toThrow(/below float16's normal range.*--anchor-dtype f32/);
  });

  // n = 200: compress measures recall with 200 queries among all n, eval --queries 200 asks the same ones.
  const n = 200, d = 16;
  const sets: Array<[string, number[]]> = [
    ['1e-40 (denormals)', [1e-40]],
    ['1e-20', [1e-20]],
    ['1e16 (near the largest accepted at d = 16)', [1e16]],
    ['mixed 1e-20 and 1', [1e-20, 1]],
    ['mixed 1e-38 and 1e10', [1e-38, 1e10]],
  ];
  it.each(sets)('%s: the recall compress prints is the recall eval measures on the written file', (name, scales) => {
    const file = `s${scales.join('_')}.npy`;
    const x = scaled(n, d, scales);
    fs.writeFileSync(path.join(dir, file), npyBytes('<f4', [n, d], new Uint8Array(x.buffer)));
    for (const residual of ['none', 'int8']) {
      const out = `${file}.${residual}.vlc`;
      const c = vlc(['compress', file, '-o', out, '--residual', residual, '--device', 'cpu', '--json', '-q'], { cwd: dir });
      expect(c.code, `${name}: ${c.stderr}`).toBe(0);
      const made = JSON.parse(c.stdout);
      const e = JSON.parse(vlc(['eval', file, out, '--queries', String(n), '--device', 'cpu', '--json'], { cwd: dir }).stdout);
      expect(made.recall_queries ?? n).toBe(n);
      expect(made.recall_at_10).toBeCloseTo(e.recall_at_10, 12);
      // Anchor ids alone give every vector of an anchor one reconstruction: recall cannot be whole.
      // (Underflowing distances made both compress and eval claim 1.000 here.)
      if (residual === 'none') expect(made.recall_at_10).toBeLessThan(0.95);
      else expect(made.recall_at_10).toBeGreaterThan(0.5);
      expect(made.relative_error).toBeCloseTo(e.relative_error, 9);
      if (Math.max(...scales) < 1e-4) expect(made.anchor_dtype).toBe('f32');
      // The file holds the vectors: their decoded magnitudes are those of the input, not 0.
      expect(vlc(['decompress', out, '-o', `${out}.npy`], { cwd: dir }).code).toBe(0);
      const back = readNpy(path.join(dir, `${out}.npy`)).data as Float32Array;
      expect(Math.max(...Array.from(back, Math.abs))).toBeGreaterThan(Math.max(...Array.from(x, Math.abs)) / 4);
    }
  });
  it('1e19 is beyond what float32 distances hold at any d: refused with one line (exit 2), nothing written', () => {
    const x = scaled(n, d, [1e19]);
    fs.writeFileSync(path.join(dir, 'huge.npy'), npyBytes('<f4', [n, d], new Uint8Array(x.buffer)));
    const r = vlc(['compress', 'huge.npy', '-o', 'huge.vlc', '--device', 'cpu'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^vlc: huge\.npy: row 0 has a value too large to compute with .*rescale the data.*\n$/);
    expect(fs.existsSync(path.join(dir, 'huge.vlc'))).toBe(false);
  });
});
