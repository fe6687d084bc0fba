// Exact brute-force k-NN for a range of queries (runs inside a worker; knn.ts splits the queries).
import type { Kernel } from './kernel.js';

const BASE_TILE = 1024; // base vectors per kernel call (they play the kernel's "anchors")
const QUERY_BLOCK = 64; // queries per kernel call

export interface KnnRange {
  base: Float32Array;
  nb: number;
  queries: Float32Array;
  q0: number;
  q1: number;
  d: number;
  k: number;
  /** nq×k outputs (shared); rows q0..q1 are written. Missing neighbours (k > nb): id -1, +inf. */
  ids: Int32Array;
  dists: Float32Array;
}

export function knnRange(kernel: Kernel, r: KnnRange): void {
  const { base, nb, queries, d, k, ids, dists } = r;
  const out = new Float32Array(QUERY_BLOCK * BASE_TILE);
  for (let qb = r.q0; qb < r.q1; qb += QUERY_BLOCK) {
    const nq = Math.min(QUERY_BLOCK, r.q1 - qb);
    const topD = new Float32Array(nq * k).fill(Infinity);
    const topI = new Int32Array(nq * k).fill(-1);
    const qs = queries.subarray(qb * d, (qb + nq) * d);
    for (let b0 = 0; b0 < nb; b0 += BASE_TILE) {
      const bt = Math.min(BASE_TILE, nb - b0);
      kernel.dists(qs, nq, base.subarray(b0 * d, (b0 + bt) * d), bt, d, out);
      for (let q = 0; q < nq; q++) {
        const o = q * k;
        let worst = topD[o + k - 1];
        for (let b = 0; b < bt; b++) {
          const v = out[q * bt + b];
          if (!(v < worst)) continue; // equal distances keep the lower id (scanned first)
          // Insertion into the sorted list, after any equal entries.
          let pos = k - 1;
          while (pos > 0 && topD[o + pos - 1] > v) {
            topD[o + pos] = topD[o + pos - 1];
            topI[o + pos] = topI[o + pos - 1];
            pos--;
          }
          topD[o + pos] = v;
          topI[o + pos] = b0 + b;
          worst = topD[o + k - 1];
        }
      }
    }
    ids.set(topI, qb * k);
    dists.set(topD, qb * k);
  }
}
