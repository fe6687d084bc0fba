// The pieces behind the commands, tested directly: default m, the progress line, the query sample,
// compressed search against brute force over the reconstructions, and eval's figures on files whose
// answers are known.
import { describe, expect, it } from 'vitest';
import { defaultAnchors } from '../../dist/api/compress.js';
import { evaluateFile as evaluate } from '../../dist/api/evaluate.js';
import { sampleIndices } from '../../dist/quality/sample.js';
import { createProgress, formatBytes, formatDuration, progressLine, stepLine } from '../../dist/commands/progress.js';
import { decodeVlc } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { searchCompressed, vlcSearchIndex } from '../../dist/search/index.js';
import { cpuKnn } from '../../dist/backend/cpu/index.js';
import { rng } from '../rng.js';
import { clustered, vlcBytesOf } from './helpers.js';
import { datasetFromArray } from '../../dist/vectors/dataset.js';

function vlcFile(x: Float32Array, n: number, d: number, anchors: Float32Array, assign: Uint32Array) {
  return decodeVlc(vlcBytesOf(d, anchors, assign));
}

/** Nearest-anchor assignment, for building realistic test files. */
function assignNearest(x: Float32Array, n: number, d: number, anchors: Float32Array): Uint32Array {
  const m = anchors.length / d;
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let best = Infinity;
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += (x[i * d + k] - anchors[j * d + k]) ** 2;
      if (s < best) [best, a[i]] = [s, j];
    }
  }
  return a;
}

const dataset = (x: Float32Array, n: number, d: number) => (datasetFromArray(x, n, d, 'test'));

describe('default number of anchors', () => {
  it('is the largest power of two <= 4*sqrt(n), capped at n and 65536', () => {
    expect([1, 2, 5, 1000, 2000, 10_000, 100_000, 1_000_000, 1e10].map(defaultAnchors)).toEqual([
      1, 2, 5, 64, 128, 256, 1024, 2048, 65536,
    ]);
  });
});

describe('progress', () => {
  const rec = { iter: 10, temperature: 0.0123456, energy: 0.28134567, changed: 41, ms: 3 };

  it('shows iteration, temperature, energy, changed and an ETA', () => {
    // iter counts from 0; the ETA assumes --iters are all run, so it is an upper bound
    expect(progressLine(rec, 100, 2.2)).toBe('training  iter 11/100  T 0.0123  energy 0.28135  changed 41  ETA ≤18s');
    expect(formatDuration(125)).toBe('2m05s');
    expect(formatDuration(7300)).toBe('2h01m');
  });

  it('steps: amount of the total, rate, an ETA from the rate; elapsed time when there is no total', () => {
    expect(stepLine('reading x.npy', 'bytes', 512e6, 1.5e9, 410e6, 1.2)).toBe('reading x.npy  512 MB / 1.50 GB  410 MB/s  ETA 3s');
    expect(stepLine('searching', 'queries', 2048, 10_000, 410, 5)).toBe('searching  2,048 / 10,000 queries  410/s  ETA 20s');
    expect(stepLine('reading stdin', 'bytes', 5e8, undefined, 1e8, 5.2)).toBe('reading stdin  500 MB  100 MB/s  6s');
    expect(stepLine('final assignment pass', '', 0, undefined, undefined, 2.1)).toBe('final assignment pass  3s');
    expect(stepLine('searching', 'queries', 10, 100, undefined, 0.1)).toBe('searching  10 / 100 queries  1s'); // no rate yet: no ETA
    // coarse units (a codec measured every few seconds): the ETA counts down between updates
    expect(stepLine('choosing the codec: measuring bits 48B', 'codecs measured', 2, 6, 0.5, 4, 0)).toBe('choosing the codec: measuring bits 48B  2 / 6 codecs measured  0.500/s  ETA 8s');
    expect(stepLine('choosing the codec: measuring bits 48B', 'codecs measured', 2, 6, 0.5, 7, 3)).toMatch(/ETA 5s$/);
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1536)).toBe('1.54 kB');
  });

  it('a step shows only once it has lasted a moment, then redraws in place and erases itself', async () => {
    const written: string[] = [];
    const stream = { write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const p = createProgress({ enabled: true, stream });
    const step = p.step('searching', 'queries', 100);
    step.update(1);
    expect(written).toEqual([]); // a quick step never shows
    await new Promise((r) => setTimeout(r, 700));
    step.update(50);
    expect(written.at(-1)).toMatch(/^\r\x1b\[Ksearching  50 \/ 100 queries/);
    step.end();
    expect(written.at(-1)).toBe('\r\x1b[K');
    p.done();
  });

  it('a step may change its label as it goes (the codec being measured), redrawn at once', async () => {
    const written: string[] = [];
    const stream = { write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const p = createProgress({ enabled: true, stream });
    const step = p.step('choosing the codec', 'codecs measured');
    step.update(0, 5, 'choosing the codec: measuring int4');
    await new Promise((r) => setTimeout(r, 600));
    step.update(1, 5, 'choosing the codec: measuring bits 24B');
    expect(written.at(-1)).toMatch(/^\r\x1b\[Kchoosing the codec: measuring bits 24B  1 \/ 5 codecs measured/);
    step.end();
    p.done();
  });

  it('draws in place on the stream and erases itself; draws nothing when disabled', async () => {
    const written: string[] = [];
    const stream = { write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const p = createProgress({ enabled: true, stream });
    p.onIter(rec, 100);
    await new Promise((r) => setTimeout(r, 600));
    p.onIter({ ...rec, iter: 11 }, 100);
    await new Promise((r) => setTimeout(r, 300)); // within a tick the line shows the latest iteration
    p.done();
    expect(written[0]).toMatch(/^\r\x1b\[Ktraining  iter 1[12]\/100 /);
    expect(written.some((w) => /training  iter 12\/100 /.test(w))).toBe(true);
    expect(written.at(-1)).toBe('\r\x1b[K');
    const quiet: string[] = [];
    const q = createProgress({ enabled: false, stream: { write: (s: string) => quiet.push(s) } as unknown as NodeJS.WriteStream });
    q.onIter(rec, 100);
    q.done();
    expect(quiet).toEqual([]);
  });
});

describe('query sample', () => {
  it('draws distinct indices in range, the same for the same seed', () => {
    const s = sampleIndices(1000, 300, 5);
    expect(new Set(s).size).toBe(300);
    expect(s.every((i) => i >= 0 && i < 1000)).toBe(true);
    expect(sampleIndices(1000, 300, 5)).toEqual(s);
    expect(sampleIndices(1000, 300, 6)).not.toEqual(s);
    expect(sampleIndices(10, 10, 1).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('compressed search', () => {
  const n = 600;
  const d = 12;
  const m = 40;
  const x = clustered(n, d, 11, 8);
  const r = rng(3);
  const anchors = Float32Array.from({ length: m * d }, (_, i) => x[Math.floor(r() * n) * d + (i % d)]);
  const file = vlcFile(x, n, d, anchors, assignNearest(x, n, d, anchors));

  it('equals brute force over the reconstructed vectors when enough anchors are probed', async () => {
    const nq = 25;
    const q = clustered(nq, d, 99, 8);
    const k = 15;
    const got = await searchCompressed(vlcSearchIndex(file), q, nq, { k, nprobe: m }, cpuKnn);
    const rec = reconstruct(file);
    for (let t = 0; t < nq; t++) {
      const all = Array.from({ length: n }, (_, i) => {
        let s = 0;
        for (let c = 0; c < d; c++) s += (q[t * d + c] - rec[i * d + c]) ** 2;
        return [s, i] as const;
      }).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      // Same distances (f32 vs f64 sums aside), ids equal up to exact ties.
      for (let j = 0; j < k; j++) expect(got.dists[t * k + j]).toBeCloseTo(all[j][0], 3);
      expect(new Set(got.ids.subarray(t * k, (t + 1) * k)).size).toBe(k);
    }
  });

  it('fills k results even when the nearest anchors hold fewer than k vectors, and honours exclude', async () => {
    // 1 vector per anchor for the first 39 anchors, the rest on the last: k = 45 needs all 40 anchors.
    const assign = Uint32Array.from({ length: n }, (_, i) => (i < m - 1 ? i : m - 1));
    const f = vlcFile(x, n, d, anchors, assign);
    const q = x.slice(0, 2 * d);
    const res = await searchCompressed(vlcSearchIndex(f), q, 2, { k: 45, exclude: Int32Array.of(0, -1) }, cpuKnn);
    const first = Array.from(res.ids.subarray(0, 45));
    expect(first).not.toContain(0);
    expect(first.every((id) => id >= 0)).toBe(true);
    expect(new Set(first).size).toBe(45);
    expect(Array.from(res.ids.subarray(45, 90))).toContain(0);
  });
});

describe('eval figures', () => {
  const n = 300;
  const d = 6;
  const x = clustered(n, d, 21, 6);

  it('a lossless file (every vector its own anchor) has zero error and recall 1', async () => {
    const f = vlcFile(x, n, d, x.slice(), Uint32Array.from({ length: n }, (_, i) => i));
    const e = await evaluate(dataset(x, n, d), f, { queries: 50, seed: 1, nprobe: 1 });
    expect(e.mse).toBe(0);
    expect(e.relative_error).toBe(0);
    expect(e.mean_cosine).toBeCloseTo(1, 6);
    expect(e.recall_at_1).toBe(1);
    expect(e.recall_at_10).toBe(1);
    expect(e.search).toMatchObject({ nprobe: 1, recall_at_1: 1, recall_at_10: 1 }); // every anchor holds its one vector
    expect(e.queries).toBe(50);
  });

  it('one anchor at the mean: MSE is the variance, relative error and cosine as computed by hand', async () => {
    const mean = new Float32Array(d);
    for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) mean[k] += x[i * d + k] / n;
    const f = vlcFile(x, n, d, mean, new Uint32Array(n));
    const e = await evaluate(dataset(x, n, d), f, { queries: 20, seed: 2, nprobe: 1 });
    let se = 0;
    let sx = 0;
    let cos = 0;
    for (let i = 0; i < n; i++) {
      let xm = 0;
      let xx = 0;
      let mm = 0;
      for (let k = 0; k < d; k++) {
        se += (x[i * d + k] - mean[k]) ** 2;
        sx += x[i * d + k] ** 2;
        xm += x[i * d + k] * mean[k];
        xx += x[i * d + k] ** 2;
        mm += mean[k] ** 2;
      }
      cos += xm / Math.sqrt(xx * mm);
    }
    expect(e.mse).toBeCloseTo(se / n, 4);
    expect(e.relative_error).toBeCloseTo(Math.sqrt(se / sx), 6);
    expect(e.mean_cosine).toBeCloseTo(cos / n, 6);
    // All vectors tie at one anchor: search returns the lowest ids, so recall is near chance.
    expect(e.recall_at_10!).toBeLessThan(0.2);
  });
});
