// The CPU engine against a naive transcription of the math in src/backend/engine.ts, on odd sizes.
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { datasetFromArray, f16ToF32, f32ToF16, viewAll } from '../../dist/vectors/dataset.js';
import type { Dataset } from '../../src/vectors/dataset.js';
import { naiveInit, naivePass, naiveDist } from './naive.js';
import { randomDataset } from './data.js';

function expectRel(got: number, want: number, tol = 1e-6) {
  expect(Math.abs(got - want)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(want)));
}

function firstRows(ds: Dataset, m: number): Float32Array {
  // Anchors: rows spread over the data (i·7 mod n), so some are duplicated when m > n.
  const x = viewAll(ds) as Float32Array;
  const out = new Float32Array(m * ds.d);
  for (let j = 0; j < m; j++) out.set(x.subarray(((j * 7) % ds.n) * ds.d, ((j * 7) % ds.n + 1) * ds.d), j * ds.d);
  return out;
}

const PASSES = [
  { temperature: 0.3, step: 0.7, huber: 1.2 },
  { temperature: 0, step: 1, huber: 0.8 },
  { temperature: 0.05, step: 0.5, huber: 0 },
  { temperature: 0, step: 1, huber: 0 },
];

describe('cpu engine vs naive math', () => {
  const cases = [
    { n: 37, d: 5, m: 3 },
    { n: 101, d: 1, m: 7 },
    { n: 50, d: 13, m: 1 },
    { n: 613, d: 17, m: 11 },
    { n: 9, d: 3, m: 9 },
  ];
  for (const { n, d, m } of cases) {
    it(`n=${n} d=${d} m=${m}`, async () => {
      const ds = randomDataset(n, d, n * 31 + d * 7 + m);
      const init = firstRows(ds, m);
      const backend = createCpuBackend({ threads: 2 });
      const engine = await backend.open(ds, m);
      try {
        await engine.setAnchors(init);
        const ref = naiveInit(viewAll(ds) as Float32Array, n, d, m, init);
        for (const p of PASSES) {
          const got = await engine.iterate(p);
          const want = naivePass(ref, p.temperature, p.step, p.huber, true);
          expectRel(got.energy, want.energy);
          expect(got.changed).toBe(want.changed);
          const a = await engine.getAnchors();
          for (let k = 0; k < m * d; k++) expect(Math.abs(a[k] - ref.c[k])).toBeLessThan(1e-5);
          const st = await engine.stats();
          expect(Array.from(st.count)).toEqual(Array.from(ref.count));
          expect(Array.from(st.far)).toEqual(Array.from(ref.far));
          for (let j = 0; j < m; j++) expectRel(st.sse[j], ref.sse[j]);
        }
        const fin = await engine.finalize();
        const want = naivePass(ref, 0, 0, 0, false);
        expectRel(fin.energy, want.energy);
        expect(Array.from(await engine.assignments())).toEqual(Array.from(ref.assign));
      } finally {
        await backend.close();
      }
    });
  }
});

describe('cpu engine determinism', () => {
  it('gives identical anchors with 1 or 3 threads and with the wasm or the js kernel', async () => {
    const ds = randomDataset(1500, 19, 5);
    const init = firstRows(ds, 13);
    const results: Float32Array[] = [];
    for (const o of [{ threads: 1 }, { threads: 3 }, { threads: 2, kernel: 'js' as const }]) {
      const backend = createCpuBackend(o);
      const e = await backend.open(ds, 13);
      await e.setAnchors(init);
      for (const p of PASSES) await e.iterate(p);
      results.push(await e.getAnchors());
      await backend.close();
    }
    expect(Array.from(results[1])).toEqual(Array.from(results[0]));
    expect(Array.from(results[2])).toEqual(Array.from(results[0]));
  });
});

describe('cpu engine seeding', () => {
  it('seedBegin / seedTry / seedAdd / seedPick follow their definitions', async () => {
    const n = 777, d = 6;
    const ds = randomDataset(n, d, 99);
    const x = viewAll(ds) as Float32Array;
    const backend = createCpuBackend({ threads: 2 });
    const e = await backend.open(ds, 4);
    try {
      const ref = naiveInit(x, n, d, 1, new Float32Array(d));
      const dist = (i: number, c: Float32Array) => {
        ref.c = Float64Array.from(c);
        return naiveDist(ref, i, 0);
      };
      const c0 = await e.row(3), c1 = await e.row(500), c2 = await e.row(10);
      expect(Array.from(c0)).toEqual(Array.from(x.subarray(3 * d, 4 * d)));
      const D = Array.from({ length: n }, (_, i) => Math.fround(dist(i, c0))); // the engine keeps D in f32
      expectRel(await e.seedBegin(c0), D.reduce((a, b) => a + b));
      const cands = new Float32Array(2 * d);
      cands.set(c1, 0); cands.set(c2, d);
      const tried = await e.seedTry(cands);
      for (const [l, c] of [c1, c2].entries()) {
        expectRel(tried[l], D.reduce((a, v, i) => a + Math.min(v, Math.fround(dist(i, c))), 0));
      }
      for (let i = 0; i < n; i++) D[i] = Math.min(D[i], Math.fround(dist(i, c1)));
      const total = await e.seedAdd(c1);
      expectRel(total, D.reduce((a, b) => a + b));
      // seedPick: the first i whose prefix sum exceeds the target.
      for (const frac of [0, 0.1, 0.5, 0.93, 0.999999]) {
        const target = frac * total;
        let acc = 0, want = -1;
        for (let i = 0; i < n && want < 0; i++) if ((acc += D[i]) > target) want = i;
        expect(await e.seedPick(target)).toBe(want);
      }
    } finally {
      await backend.close();
    }
  });

  it('decodes f16 datasets exactly', async () => {
    const n = 40, d = 7;
    const f32 = randomDataset(n, d, 3, 20, 100);
    const half = new Uint16Array(new SharedArrayBuffer(n * d * 2));
    (viewAll(f32) as Float32Array).forEach((v, i) => (half[i] = f32ToF16(v)));
    const backend = createCpuBackend({ threads: 2 });
    const e = await backend.open(datasetFromArray(half, n, d), 2);
    try {
      const row = await e.row(5);
      for (let k = 0; k < d; k++) expect(Math.abs(row[k] - (viewAll(f32) as Float32Array)[5 * d + k])).toBeLessThan(0.07);
      expect(f32ToF16(row[0])).toBe(half[5 * d]);
    } finally {
      await backend.close();
    }
  });

  /** Energies, anchors and assignments of a few passes (T > 0, Huber, a final one) from fixed anchors. */
  async function passes(ds: Dataset, m: number, init: Float32Array) {
    const backend = createCpuBackend({ threads: 3 });
    const e = await backend.open(ds, m);
    try {
      await e.setAnchors(init);
      const energies = [];
      for (const p of PASSES) energies.push((await e.iterate(p)).energy);
      energies.push((await e.finalize()).energy);
      return { energies, anchors: Array.from(await e.getAnchors()), assign: Array.from(await e.assignments()) };
    } finally {
      await backend.close();
    }
  }

  it('keeps f16 data f16 (rows decoded as used) with the results of the same values given as f32', async () => {
    const n = 700, d = 9, m = 5;
    const half = Uint16Array.from(viewAll(randomDataset(n, d, 8, 3, 1)) as Float32Array, f32ToF16);
    const asF32 = Float32Array.from(half, (h) => f16ToF32(h));
    const init = firstRows(datasetFromArray(asF32, n, d), m);
    expect(await passes(datasetFromArray(half, n, d), m, init)).toEqual(await passes(datasetFromArray(asF32, n, d), m, init));
  });

  it('reads vectors lying past 4 GiB in their shared buffer (workers make their own views)', async (ctx) => {
    const n = 600, d = 5, m = 4;
    const small = randomDataset(n, d, 9);
    let buffer: SharedArrayBuffer;
    try {
      buffer = new SharedArrayBuffer(2 ** 32 + n * d * 4); // lazily zeroed: only the last pages are touched
    } catch {
      ctx.skip(); // no 4 GiB of address space to reserve here
      return;
    }
    const far: Dataset = { ...small, buffer, byteOffset: 2 ** 32 };
    new Float32Array(buffer, 2 ** 32, n * d).set(viewAll(small) as Float32Array);
    const init = firstRows(small, m);
    expect(await passes(far, m, init)).toEqual(await passes(small, m, init));
  });
});

describe('cpu engine bounds (skipping settled points at T = 0)', () => {
  // m = 12: two anchor groups; m = 45: six; m = 120: fifteen (groups.ts); Hamerly's bounds at T > 0.
  it.each([12, 45, 120])('gives exactly the brute-force results through Lloyd runs, anchor jumps and finalize (m = %i)', async (m) => {
    const { blobs } = await import('./data.js');
    const ds = blobs(9, 70, 13, 21, 0.8);
    const init = firstRows(ds, m);
    const runs: Array<{ anchors: number[]; energies: number[]; changed: number[]; sse: number[]; assign: number[]; far: number[] }> = [];
    const work: number[] = [];
    for (const bounds of [true, false]) {
      const backend = createCpuBackend({ threads: 2, bounds });
      const e = await backend.open(ds, m);
      try {
        await e.setAnchors(init);
        const energies: number[] = [], changed: number[] = [];
        const step = async (p: { temperature: number; step: number; huber: number }) => {
          const s = await e.iterate(p);
          energies.push(s.energy);
          changed.push(s.changed);
        };
        // Warm passes (the nearest two skip when provably unchanged), then cold ones.
        for (let k = 0; k < 8; k++) await step({ temperature: 2 * 0.7 ** k, step: 0.6, huber: 1.5 });
        for (let k = 0; k < 15; k++) await step({ temperature: 0, step: 1, huber: 0 });
        // A maintenance-like jump: move anchor 3 onto anchor 5, then settle again, warm then cold.
        const a = await e.getAnchors();
        a.copyWithin(3 * ds.d, 5 * ds.d, 6 * ds.d);
        await e.setAnchors(a);
        for (let k = 0; k < 4; k++) await step({ temperature: 0.3, step: 0.8, huber: 0 });
        for (let k = 0; k < 10; k++) await step({ temperature: 0, step: 0.7, huber: 1.5 });
        // Several anchors jump at once (a swap trial), then Lloyd settles with the group bounds.
        const b = await e.getAnchors();
        for (const [to, from] of [[0, 7], [4, 9], [m - 1, 2]]) b.copyWithin(to * ds.d, from * ds.d, (from + 1) * ds.d);
        await e.setAnchors(b);
        for (let k = 0; k < 8; k++) await step({ temperature: 0, step: 1, huber: 0 });
        await e.finalize();
        work.push((e as unknown as { profile: { distances: number } }).profile.distances);
        runs.push({
          anchors: Array.from(await e.getAnchors()), energies, changed,
          sse: Array.from((await e.stats()).sse),
          assign: Array.from(await e.assignments()), far: Array.from((await e.stats()).far),
        });
      } finally {
        await backend.close();
      }
    }
    expect(runs[0]).toEqual(runs[1]);
    expect(work[0]).toBeLessThan(0.6 * work[1]); // the bounds did skip searches
  });
});

describe('cpu engine lifecycle', () => {
  it('dispose() during a pass rejects it instead of hanging, and is safe twice', async () => {
    const ds = randomDataset(20000, 64, 4);
    const backend = createCpuBackend({ threads: 2 });
    const e = await backend.open(ds, 300);
    await e.setAnchors((viewAll(ds) as Float32Array).slice(0, 300 * 64));
    const pass = e.iterate({ temperature: 0, step: 1, huber: 0 }).then(
      () => 'finished',
      (err: Error) => err.message,
    );
    await new Promise((r) => setTimeout(r, 5));
    await e.dispose();
    await e.dispose();
    expect(await pass).toMatch(/disposed/);
    await expect(e.iterate({ temperature: 0, step: 1, huber: 0 })).rejects.toThrow(/disposed/);
  });

  it('vectors with a NaN or an infinity are a usage error (exit 2) when the engine opens', async () => {
    const backend = createCpuBackend({ threads: 2 });
    for (const bad of [NaN, Infinity]) {
      const ds = randomDataset(600, 3, 5);
      (viewAll(ds) as Float32Array)[1000] = bad;
      await expect(backend.open(ds, 4)).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/NaN or infinite values.*--drop-invalid/) });
    }
    await backend.close();
  });
});

describe('cpu engine nearestOther', () => {
  /** Naive f64 transcription of engine.ts nearestOther: argmin over b ≠ a, ties to the lowest b. */
  function naiveNearestOther(C: Float32Array, m: number, d: number) {
    const idx = new Int32Array(m).fill(-1), dist = new Float64Array(m).fill(Infinity);
    for (let a = 0; a < m; a++) {
      for (let b = 0; b < m; b++) {
        if (b === a) continue;
        let t = 0;
        for (let k = 0; k < d; k++) t += (C[a * d + k] - C[b * d + k]) ** 2;
        if (t < dist[a]) { dist[a] = t; idx[a] = b; }
      }
    }
    return { idx, dist };
  }

  // m = 1100 spans two of nearest.ts's 1024-anchor tiles; every seventh anchor j repeats anchor j / 2.
  for (const [m, d, kernel] of [[1, 4, 'wasm'], [2, 3, 'js'], [5, 1, 'wasm'], [97, 13, 'js'], [1100, 6, 'wasm']] as const) {
    it(`m=${m} d=${d} (${kernel} kernel, exact duplicates) follows the rule`, async () => {
      const ds = randomDataset(Math.max(m, 4), d, m + d);
      const C = firstRows(ds, m);
      for (let j = 6; j < m; j += 7) C.copyWithin(j * d, (j >> 1) * d, ((j >> 1) + 1) * d);
      const backend = createCpuBackend({ threads: 2, kernel });
      try {
        const e = await backend.open(ds, m);
        await e.setAnchors(C);
        const got = await e.nearestOther();
        const want = naiveNearestOther(C, m, d);
        expect(Array.from(got.idx)).toEqual(Array.from(want.idx));
        for (let j = 0; j < m; j++) {
          if (want.dist[j] === 0 || !Number.isFinite(want.dist[j])) expect(got.dist[j]).toBe(want.dist[j]);
          else expectRel(got.dist[j], want.dist[j], 1e-5);
        }
        if (m >= 7) expect(got.dist[6]).toBe(0);
      } finally {
        await backend.close();
      }
    });
  }
});
