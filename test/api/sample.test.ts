// --sample: the loop trains on a seeded sample of the rows, then one exact pass assigns every row.
// The file must say so (sample_rows), every row must get its nearest anchor, the energy must be
// that of every row, and the same input + seed must give the same bytes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compress, openVlc } from '../../dist/index.js';
import { parseSample, sampleSize, SAMPLE_PER_ANCHOR } from '../../dist/api/sample.js';
import { sampleRows } from '../../dist/anneal/sample.js';
import { Rng } from '../../dist/anneal/random.js';
import { clustered, tempDir, vlc, writeNpy } from '../cli/helpers.js';

const dir = tempDir('sample');
const n = 3000;
const d = 8;
const m = 6;
const x = clustered(n, d, 3, 9);
const input = writeNpy(path.join(dir, 'x.npy'), x, n, d);

/** Squared distance of row i to anchor j, in f64. */
const dist = (A: Float32Array, i: number, j: number) => {
  let s = 0;
  for (let k = 0; k < d; k++) s += (x[i * d + k] - A[j * d + k]) ** 2;
  return s;
};

describe('--sample', () => {
  it('parses auto, all, counts, fractions and percentages; refuses the rest', () => {
    expect([parseSample('auto'), parseSample('ALL'), parseSample('500'), parseSample('0.25'), parseSample('10%'), parseSample('100%')]).toEqual([
      'auto',
      'all',
      { rows: 500 },
      { fraction: 0.25 },
      { fraction: 0.1 },
      'all',
    ]);
    for (const bad of ['0', '-3', '1.5', 'abc', '0%', '150%', '']) expect(() => parseSample(bad), bad).toThrow(/--sample must be/);
    expect(sampleSize('auto', 10 ** 7, 1024)).toBe(SAMPLE_PER_ANCHOR * 1024);
    expect(sampleSize('auto', 1000, 64)).toBe(1000); // never more than n
    expect(sampleSize({ rows: 3 }, 1000, 64)).toBe(64); // never fewer than m
    expect(sampleSize({ fraction: 0.1 }, 1000, 8)).toBe(100);
    expect(sampleSize('all', 1000, 8)).toBe(1000);
  });

  it('draws the same rows with its bitset (s > 2^20) as Floyd with a Set would', () => {
    const N = 1_500_000, s = 2 ** 20 + 17;
    const got = sampleRows(new Rng(5), N, s);
    const rng = new Rng(5);
    const chosen = new Set<number>();
    for (let j = N - s; j < N; j++) {
      const t = rng.int(j + 1);
      chosen.add(chosen.has(t) ? j : t);
    }
    expect(got.length).toBe(s);
    expect(Array.from(got)).toEqual(Array.from(Int32Array.from(chosen).sort()));
  });

  it('trains on the sample, assigns every row its nearest anchor, reports the energy of every row; same seed, same bytes', async () => {
    const out = (tag: string) => path.join(dir, `${tag}.vlc`);
    const common = { device: 'cpu' as const, anchors: m, iters: 30, anchorDtype: 'f32' as const, sample: { rows: 300 } };
    const a = await compress(input, { ...common, output: out('a'), seed: 7 });
    const b = await compress(input, { ...common, output: out('b'), seed: 7 });
    expect([a.sample_rows, a.n]).toEqual([300, n]);
    expect(a.final_pass_seconds).toBeGreaterThan(0);
    expect(fs.readFileSync(out('a')).equals(fs.readFileSync(out('b')))).toBe(true);

    const file = await openVlc(out('a'));
    expect(file.manifest.config.sampleRows).toBe(300);
    const A = file.anchors;
    const ids = file.assignments;
    let energy = 0;
    for (let i = 0; i < n; i++) {
      let best = Infinity;
      for (let j = 0; j < m; j++) best = Math.min(best, dist(A, i, j));
      const mine = dist(A, i, ids[i]);
      expect(mine, `row ${i}`).toBeLessThanOrEqual(best * (1 + 1e-5) + 1e-12);
      energy += mine;
    }
    expect(a.energy).toBeCloseTo(energy / n, 5);
    // The sample's energy is what the loop saw; the reported energy is over every row.
    expect(a.train_energy).not.toBe(a.energy);

    // Another seed draws another sample (and another init): other anchors.
    const c = await compress(input, { ...common, output: out('c'), seed: 8 });
    expect(fs.readFileSync(out('c')).equals(fs.readFileSync(out('a')))).toBe(false);
    expect(c.sample_rows).toBe(300);
  }, 120_000);

  it('all (and auto on data of fewer than 256 rows per anchor) trains on every row: no final pass of its own', async () => {
    const all = await compress(input, { device: 'cpu', anchors: m, iters: 10, sample: 'all', output: path.join(dir, 'all.vlc') });
    const auto = await compress(input, { device: 'cpu', anchors: 64, iters: 10, output: path.join(dir, 'auto.vlc') });
    expect([all.sample_rows, all.final_pass_seconds, all.train_energy]).toEqual([n, 0, all.energy]);
    expect(auto.sample_rows).toBe(n); // 256 × 64 > 3000
  }, 120_000);

  it('the CLI: --sample 10% says so on stderr; a bad value is one line, exit 2, no file', () => {
    const ok = vlc(['compress', input, '-o', path.join(dir, 'cli.vlc'), '--device', 'cpu', '--anchors', String(m), '--iters', '5', '--sample', '10%', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).sample_rows).toBe(300);
    expect(ok.stderr).toMatch(/training on a sample of 300 of the 3000 vectors/);
    const bad = vlc(['compress', input, '-o', path.join(dir, 'bad.vlc'), '--device', 'cpu', '--sample', '2.5']);
    expect([bad.code, bad.stderr.trim().split('\n').length]).toEqual([2, 1]);
    expect(bad.stderr).toMatch(/--sample must be auto, all, a number of rows/);
    expect(fs.existsSync(path.join(dir, 'bad.vlc'))).toBe(false);
  }, 120_000);
});

describe("--sample auto on each device (resolveSample)", () => {
  it('a GPU trains on every row up to n·m·d = 2^40, the CPU on 256 per anchor; other specs unchanged', async () => {
    const { resolveSample, sampleSize, CUDA_ALL_ROWS_UP_TO } = await import('../../dist/api/sample.js');
    expect(resolveSample('auto', 'cuda', 1_000_000, 128, 2048)).toBe('all');
    expect(resolveSample('auto', 'cpu', 1_000_000, 128, 2048)).toBe('auto');
    expect(sampleSize(resolveSample('auto', 'cpu', 1_000_000, 128, 2048), 1_000_000, 2048)).toBe(524_288);
    expect(resolveSample('auto', 'cuda', 10_000_000, 128, 16384)).toBe('auto'); // 2^44.2: a pass costs tens of ms
    expect(CUDA_ALL_ROWS_UP_TO).toBe(2 ** 40);
    expect(resolveSample({ rows: 300 }, 'cuda', 1000, 8, 4)).toEqual({ rows: 300 });
    expect(resolveSample('all', 'cpu', 1000, 8, 4)).toBe('all');
  });
});

describe('the training sample drawn on a thread (api/sample-draw.ts trainingSampleOffThread)', () => {
  it('gives the rows trainingSample draws on this thread, above and below the size that takes a thread', async () => {
    const { trainingSample } = await import('../../dist/api/train.js');
    const { trainingSampleOffThread } = await import('../../dist/api/sample-draw.js');
    for (const [seed, n, s] of [[7, 5_000_003, 4_194_311], [1234, 9_000_001, 4_194_304], [3, 1000, 300]] as const) {
      const off = await trainingSampleOffThread(seed, n, s);
      const here = trainingSample(seed, n, s);
      expect(off.length).toBe(s);
      expect(Buffer.from(off.buffer, off.byteOffset, off.byteLength).equals(Buffer.from(here.buffer, here.byteOffset, here.byteLength))).toBe(true);
    }
  }, 60_000);

  it('gives the same rows at odd sizes, when most draws repeat and when few do', async () => {
    const { trainingSample } = await import('../../dist/api/train.js');
    const { trainingSampleOffThread } = await import('../../dist/api/sample-draw.js');
    for (const [seed, n, s] of [[11, 1_100_003, 1_099_001], [12, 3_000_037, 1_333_331], [13, 50_021, 1_009]] as const) {
      const off = await trainingSampleOffThread(seed, n, s, 0);
      expect(Array.from(off), `seed ${seed}, ${s} of ${n}`).toEqual(Array.from(trainingSample(seed, n, s)));
    }
  }, 60_000);
});

describe("train() without the sample's own exact pass (TrainEngines.sampleFromFinal)", () => {
  // Against the same run with the sample's pass (sampleFromFinal off): the pass over every row gives
  // the sample's rows their anchors, so the anchors, every row's anchor and the energy must be equal,
  // also when the loop leaves anchors with none of the sample's rows (many anchors, one iteration:
  // the sample's pass then refills them) and when there is nothing to refill with (repeated points).
  it('gives the same anchors, assignments and energies as a run with the sample pass', async () => {
    const { train, enginesOn } = await import('../../dist/api/train.js');
    const { configFor } = await import('../../dist/anneal/config.js');
    const { createCpuBackend } = await import('../../dist/backend/cpu/index.js');
    const { blobs } = await import('../cpu/data.js');
    const { datasetFromF32 } = await import('../../dist/vectors/dataset.js');
    const backend = createCpuBackend({ threads: 1 });
    const spread = blobs(40, 103, 7, 5, 0.8);
    const dup = new Float32Array(3001 * 5);
    for (let i = 0; i < 3001; i++) for (let j = 0; j < 5; j++) dup[i * 5 + j] = ((i % 23) * 7 + j * 3) % 11;
    const cases = [
      { ds: spread, m: 37, rows: 1200, iters: 40 }, // settles: no anchor empty
      { ds: spread, m: 900, rows: 1001, iters: 1 }, // anchors left empty, refilled by the sample's pass
      { ds: datasetFromF32(dup, 3001, 5), m: 40, rows: 700, iters: 3 }, // 23 distinct points: empty anchors stay empty
    ];
    let refilled = 0;
    for (const c of cases) {
      const cfg = configFor('default', c.m, { seed: 11, maxIters: c.iters });
      const skip = await train(enginesOn(backend, c.ds, c.m), cfg, { rows: c.rows }, {});
      const full = await train({ ...enginesOn(backend, c.ds, c.m), sampleFromFinal: false }, cfg, { rows: c.rows }, {});
      expect(Buffer.from(skip.anchors.buffer).equals(Buffer.from(full.anchors.buffer))).toBe(true);
      expect(Buffer.from(skip.assignments.buffer).equals(Buffer.from(full.assignments.buffer))).toBe(true);
      expect(skip.energy).toBe(full.energy);
      const used = new Set(full.assignments);
      if (used.size < c.m) refilled++;
    }
    expect(refilled).toBeGreaterThan(0); // a case really left anchors empty
  }, 120_000);
});
