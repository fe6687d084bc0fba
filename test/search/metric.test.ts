// --metric ip and cosine against a numpy reference (float64, exact top-10): the exact k-NN by the
// metric (search/metric.ts, L2 on vectors one dimension longer, rescored exactly), the same over
// blocks of the base (each block its own R²), the exhaustive search over a file's decoded vectors,
// and the index search (search/index.ts) with every anchor probed, whose candidates are scored
// from each codec's L2 scorer (int8's and pq's own, bits' decoded rows), against that exhaustive search. Odd sizes throughout.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuKnn as cpu } from '../../dist/backend/cpu/knn.js';
import { compress } from '../../dist/api/compress.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { blockKnn } from '../../dist/backend/block-knn.js';
import { searchDecoded } from '../../dist/search/exhaustive.js';
import { searchCompressed, vlcSearchIndex } from '../../dist/search/index.js';
import { withMetric } from '../../dist/search/metric.js';
import { PYTHON_WITH_NUMPY, tempDir, writeNpy } from '../cli/helpers.js';
import { decodeVlc, encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { reconstruct, reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { pqContent } from '../format/pq-content.js';
import { rng } from '../rng.js';

/** The lists' internal distances (−⟨q, x⟩, −cos) as scores. */
const scoresInPlace = (_: string, dists: Float32Array) => dists.map((v) => -v);
const n = 1013, d = 45, nq = 19, K = 10;
const dir = tempDir('metric');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Clustered rows of very different lengths (so ip and cosine rank apart), one of them zero. */
function data(count: number, seed: number, zero = -1): Float32Array {
  const r = rng(seed);
  const centres = Array.from({ length: 7 }, () => Array.from({ length: d }, () => (r() - 0.5) * 6));
  const x = new Float32Array(count * d);
  for (let i = 0; i < count; i++) {
    const len = 0.2 + 3 * r();
    for (let k = 0; k < d; k++) x[i * d + k] = i === zero ? 0 : len * (centres[i % 7][k] + (r() - 0.5) * 2);
  }
  return x;
}
const base = data(n, 3, 500);
const queries = data(nq, 4);

/** numpy's exact top-K of the queries over `x` (an .npy file) by ip and cosine (a zero row's cosine 0). */
function numpyTop(file: string): Record<'ip' | 'cosine', { ids: number[][]; scores: number[][] }> {
  const qf = writeNpy(path.join(dir, 'queries.npy'), queries, nq, d);
  const script = `
import json, numpy as np
x = np.load(${JSON.stringify(file)}).astype(np.float64)
q = np.load(${JSON.stringify(qf)}).astype(np.float64)
def unit(a):
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return np.divide(a, n, out=np.zeros_like(a), where=n > 0)
out = {}
for name, s in (('ip', q @ x.T), ('cosine', unit(q) @ unit(x).T)):
    i = np.argsort(-s, axis=1, kind='stable')[:, :${K}]
    out[name] = {'ids': i.tolist(), 'scores': np.take_along_axis(s, i, axis=1).tolist()}
print(json.dumps(out))`;
  return JSON.parse(execFileSync(PYTHON_WITH_NUMPY!, ['-c', script]).toString());
}

/**
 * vlc's lists equal numpy's: the same score at every rank (f32 against f64), and each id vlc
 * returns scores that much by numpy too (so near ties may swap, nothing else).
 */
function expectSame(got: { ids: Int32Array; dists: Float32Array }, want: { ids: number[][]; scores: number[][] }, all: (q: number, id: number) => number, tol: number) {
  let same = 0, untied = 0;
  for (let q = 0; q < nq; q++) {
    const w = want.scores[q];
    const scale = Math.abs(w[0]) + 1e-3;
    for (let r = 0; r < K; r++) {
      const id = got.ids[q * K + r];
      expect(Math.abs(got.dists[q * K + r] - w[r])).toBeLessThanOrEqual(tol * scale);
      expect(Math.abs(all(q, id) - w[r])).toBeLessThanOrEqual(tol * scale);
      // Where no neighbour ties within the tolerance (without residuals a cell's vectors share one direction), the very id.
      if ((r === 0 || w[r - 1] - w[r] > tol * scale) && (r === K - 1 || w[r] - w[r + 1] > tol * scale)) {
        untied++;
        if (id === want.ids[q][r]) same++;
      }
    }
  }
  if (untied > 0) expect(same / untied).toBeGreaterThan(0.97);
}

/** Exact score of query q against row id of x (f64), by metric. */
function scorer(x: Float32Array, metric: 'ip' | 'cosine') {
  return (q: number, id: number) => {
    let s = 0, qq = 0, xx = 0;
    for (let k = 0; k < d; k++) {
      s += queries[q * d + k] * x[id * d + k];
      qq += queries[q * d + k] ** 2;
      xx += x[id * d + k] ** 2;
    }
    if (metric === 'ip') return s;
    return qq > 0 && xx > 0 ? s / Math.sqrt(qq * xx) : 0;
  };
}

describe.skipIf(!PYTHON_WITH_NUMPY)('--metric ip / cosine against numpy (n = 1,013, d = 45, 19 queries)', () => {
  const want = () => numpyTop(writeNpy(path.join(dir, 'base.npy'), base, n, d));

  it.each(['ip', 'cosine'] as const)('%s: the exact k-NN, whole and over blocks of 97 rows', async (metric) => {
    const ref = want()[metric];
    const whole = await withMetric(cpu, metric).knn(base, n, queries, nq, d, K);
    expectSame({ ids: whole.ids, dists: scoresInPlace(metric, whole.dists) }, ref, scorer(base, metric), 1e-5);
    const block = (r0: number, r1: number, out: Float32Array) => out.subarray(0, (r1 - r0) * d).fill(0).map((_, t) => base[r0 * d + t]);
    const blocks = await blockKnn(queries, nq, d, K, n, block, withMetric(cpu, metric), 97 * d);
    expect(Array.from(blocks.ids)).toEqual(Array.from(whole.ids));
  });

  for (const residual of ['none', 'int8', 'pq', 'bits'] as const) {
    it.each(['ip', 'cosine'] as const)(`%s, ${residual}: exhaustive over the decoded vectors = numpy over decompress's; probing every anchor = exhaustive`, async (metric) => {
      const input = writeNpy(path.join(dir, `x-${metric}-${residual}.npy`), base, n, d);
      const out = path.join(dir, `x-${metric}-${residual}.vlc`);
      await compress(input, { output: out, anchors: 23, device: 'cpu', iters: 6, effort: 'fast', residual, metric, ...(residual === 'pq' ? { pq: 3, pqBits: 4 } : {}) });
      const file = await readVlc(out);
      expect(file.manifest.metric).toBe(metric);
      expect(file.version).toBe(6);
      expect(file.norms !== undefined).toBe(metric === 'cosine');
      // The decoded vectors (what decompress writes: cosine's at their stored norms), and numpy's exact lists over them.
      const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
      const ref = numpyTop(writeNpy(path.join(dir, `decoded-${metric}-${residual}.npy`), decoded, n, d))[metric];
      const exhaustive = await searchDecoded(file, queries, nq, K, cpu);
      expectSame({ ids: exhaustive.ids, dists: scoresInPlace(metric, Float32Array.from(exhaustive.dists)) }, ref, scorer(decoded, metric), 1e-5);
      // The index search with every anchor probed scores every vector from the codec's scorer: the same lists.
      const probed = await searchCompressed(vlcSearchIndex(file), queries, nq, { k: K, nprobe: 23 }, cpu);
      expectSame({ ids: probed.ids, dists: scoresInPlace(metric, probed.dists) }, ref, scorer(decoded, metric), 2e-4);
    });
  }

  it('cosine: decoding restores each vector\'s length; the zero row stays zero', async () => {
    const file = await readVlc(path.join(dir, 'x-cosine-int8.vlc'));
    const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
    for (const i of [0, 1, 499, 500, 501, n - 1]) {
      let a = 0, b = 0;
      for (let k = 0; k < d; k++) {
        a += base[i * d + k] ** 2;
        b += decoded[i * d + k] ** 2;
      }
      if (i === 500) expect(b).toBe(0);
      else expect(Math.abs(Math.sqrt(b) / Math.sqrt(a) - 1)).toBeLessThan(0.02);
    }
    expect(file.norms![500]).toBe(0);
  });
});

/** −⟨q, x_i⟩ of one query against n rows (f64), and the k best ids (ties: the lower id). */
function bruteIp(query: Float32Array, base: Float32Array, n: number, k: number): { s: Float64Array; want: number[] } {
  const d = query.length;
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let t = 0;
    for (let j = 0; j < d; j++) t += query[j] * base[i * d + j];
    s[i] = -t;
  }
  return { s, want: Array.from(s.keys()).sort((a, b) => s[a] - s[b] || a - b).slice(0, k) };
}

describe('ip when the base rows are far longer than the queries', () => {
  it('the exact k-NN keeps the true top 10 (the queries are scaled before the reduction to L2: float32 once lost the 10th)', async () => {
    const [n, d, nq, k] = [6_007, 37, 23, 10];
    const r = rng(11);
    // Rows of every length from 1 to about 10^6, queries of length about 3.
    const base = Float32Array.from({ length: n * d }, (_, i) => (r() - 0.5) * 10 ** (Math.floor(i / d) % 7));
    const queries = Float32Array.from({ length: nq * d }, () => r() - 0.5);
    const got = await withMetric(cpu, 'ip').knn(base, n, queries, nq, d, k);
    for (let q = 0; q < nq; q++) {
      const { want } = bruteIp(queries.subarray(q * d, (q + 1) * d), base, n, k);
      expect(Array.from(got.ids.subarray(q * k, (q + 1) * k)), `query ${q}`).toEqual(want);
    }
  });
});

describe('ip probed over pq codes when the anchors are far longer than the queries', () => {
  it('every anchor probed gives the brute-force top 10 of the decoded vectors (the scorers\' L2 carries the query scaled to the base\'s length)', async () => {
    // 1,001 rows of d = 23 over 13 anchors of lengths about 10^0 to 10^5, pq residuals (5 subspaces of
    // 8 bits, scales up to 1); queries of length about 0.3: their inner products differ by far less
    // than float32's resolution of an anchor's squared length, where the asymmetric tables are summed.
    const [n, d, m, nq, k] = [1_001, 23, 13, 17, 10];
    const { content } = pqContent(n, d, m, 5, 8);
    content.anchors = content.anchors.map((v, i) => v * 10 ** (Math.floor(i / d) % 6));
    content.manifest = { ...content.manifest, metric: 'ip' };
    const file = decodeVlc(encodeVlcBytes(content));
    const r = rng(29);
    const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 0.1);
    const x = reconstruct(file);
    const got = await searchCompressed(vlcSearchIndex(file), queries, nq, { k, nprobe: m, threads: 1 }, cpu);
    let wrong = 0;
    for (let q = 0; q < nq; q++) {
      const { s, want } = bruteIp(queries.subarray(q * d, (q + 1) * d), x, n, k);
      const ids = Array.from(got.ids.subarray(q * k, (q + 1) * k));
      for (let c = 0; c < k; c++) {
        // The same neighbour, or one whose exact score ties the true one's within f32.
        if (ids[c] !== want[c] && Math.abs(s[ids[c]] - s[want[c]]) > 1e-6 * Math.abs(s[want[c]])) wrong++;
        expect(Math.abs(got.dists[q * k + c] - s[want[c]])).toBeLessThanOrEqual(1e-4 * Math.abs(s[want[c]]) + 1e-6);
      }
    }
    expect(wrong).toBe(0);
  });
});
