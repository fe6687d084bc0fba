// The wasm steps of the pq search (backend/cpu/pq-kernel.ts, wasm/kernel.c) against the JS they
// replaced, bit for bit: the lookup tables (f64 sums in dimension order, one rounding to f32),
// the nearest anchors of a row (knn-core.ts's insertion rule: ties to the lower id, +inf and NaN
// never ranked) and a list's asymmetric distances (pq-adc.ts's formula, f64 sums in subspace order).
import { describe, expect, it } from 'vitest';
import { subspaceBounds } from '../../dist/codecs/pq.js';
import { codesFromArray } from '../../dist/vectors/codes.js';
import { PqKernel } from '../../dist/backend/cpu/pq-kernel.js';
import type { PqIndex } from '../../dist/backend/types.js';
import { rng } from '../rng.js';

/** Values of mixed scale and sign, zeros among them: any difference of order or rounding shows. */
const valueFrom = (rand: () => number) => () => (rand() < 0.05 ? 0 : (rand() * 2 - 1) * 10 ** Math.floor(rand() * 6 - 3));
const signed = (a: ArrayLike<number>) => Array.from(a, (v) => (Object.is(v, -0) ? '-0' : v));

/** An index of n vectors in one list over m anchors (d dims, M subspaces of K centroids), random codes. */
function indexOf(n: number, d: number, m: number, M: number, K: number, seed: number): PqIndex {
  const rand = rng(seed);
  const value = valueFrom(rand);
  const start = new Uint32Array(m + 1).fill(n);
  start[0] = 0;
  return {
    n, d, m,
    anchors: Float32Array.from({ length: m * d }, value),
    lists: { start, members: Uint32Array.from({ length: n }, (_, i) => i) },
    pq: {
      M, K, bounds: subspaceBounds(d, M), codebooks: Float32Array.from({ length: K * d }, value),
      codes: codesFromArray(Uint8Array.from({ length: n * M }, () => Math.floor(rand() * K)), M),
      extra: Float32Array.from({ length: n }, value), scale: Float32Array.from({ length: m }, () => rand()),
    },
  };
}

function jsTables(index: PqIndex, query: Float32Array): Float32Array {
  const { M, K, bounds, codebooks } = index.pq;
  const table = new Float32Array(M * K);
  for (let t = 0; t < M; t++) {
    const lo = bounds[t];
    const w = bounds[t + 1] - lo;
    for (let c = 0; c < K; c++) {
      let s = 0;
      for (let k = 0; k < w; k++) s += query[lo + k] * codebooks[K * lo + c * w + k];
      table[t * K + c] = s;
    }
  }
  return table;
}

describe('the pq search kernel', () => {
  for (const [d, M, K] of [[128, 28, 256], [13, 5, 16], [7, 7, 256], [40, 3, 16]] as const) {
    it(`tables and list distances equal the JS loops exactly (d = ${d}, M = ${M}, K = ${K})`, () => {
      const n = 37; // not a multiple of the kernel's four vectors at a time
      const index = indexOf(n, d, 3, M, K, d * 100 + M);
      const kernel = new PqKernel(index, 4);
      const value = valueFrom(rng(d));
      for (let r = 0; r < 20; r++) {
        const query = Float32Array.from({ length: d }, value);
        kernel.tables(query);
        const table = jsTables(index, query);
        expect(signed(kernel.lastTables())).toEqual(signed(table));
        const anchorDist = Math.fround(value() ** 2);
        const j = r % 3;
        kernel.scanList(5, n - 5, anchorDist, index.pq.scale[j]);
        const want = Array.from({ length: n - 5 }, (_, e) => {
          let dot = 0;
          for (let t = 0; t < M; t++) dot += table[t * K + index.pq.codes.get(5 + e, t)];
          return anchorDist + index.pq.extra[5 + e] - 2 * index.pq.scale[j] * dot;
        });
        expect(signed(kernel.dists.subarray(0, n - 5))).toEqual(signed(want));
      }
    });
  }

  it('ranks the nearest anchors as the exact k-NN does: ascending, ties to the lower id, +inf and NaN never', () => {
    const m = 203;
    const rand = rng(9);
    const index = indexOf(4, 8, m, 2, 16, 1);
    const kernel = new PqKernel(index, 2);
    const queries = Float32Array.from({ length: 2 * 8 }, () => rand());
    kernel.rankBlock(queries, 0, 2);
    const row = Array.from({ length: m }, (_, j) => kernel.anchorDist(1, j));
    // The distances are the kernel's; the selection must order them as a stable sort does.
    for (const w of [1, 8, 50, m]) {
      kernel.selectNearest(1, w);
      const want = row.map((v, j) => [v, j]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, w).map((e) => e[1]);
      expect(Array.from(kernel.order.subarray(0, w))).toEqual(want);
    }
  });

  it('the selection rule itself on crafted rows (equal values, +inf, NaN) and the full sort agree with it', () => {
    const m = 23;
    // One query, one dimension, the anchors at chosen points: distances (x - a)^2 with repeats, +inf (overflow) and NaN.
    const points = [3, 1, 1, 2, 3, 0, 5, 1e30, NaN, 2, 1, 4, 0, 3, 1e30, 2, 6, 1, 0, 3, 2, NaN, 1];
    const index = indexOf(4, 1, m, 1, 16, 2);
    index.anchors = Float32Array.from(points);
    const kernel = new PqKernel(index, 1);
    kernel.rankBlock(Float32Array.of(0), 0, 1);
    const row = points.map((_, j) => kernel.anchorDist(0, j));
    const finite = row.map((v, j) => [v, j]).filter((e) => e[0] < Infinity).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((e) => e[1]);
    for (const w of [1, 3, 7, 19, 20, 21, m]) {
      kernel.selectNearest(0, w);
      const want = Array.from({ length: w }, (_, i) => (i < finite.length ? finite[i] : -1));
      expect(Array.from(kernel.order.subarray(0, w))).toEqual(want);
    }
    kernel.sortAll(0);
    expect(Array.from(kernel.order)).toEqual(Array.from({ length: m }, (_, i) => (i < finite.length ? finite[i] : -1)));
  });
});
