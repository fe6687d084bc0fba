// Merging k-NN answers (Neighbours, ./types.ts) of consecutive pieces of a base: the GPU's k-NN
// over a base in pieces (cuda/knn.ts), and search/exact.ts, quality/recall.ts over large data.
import type { Neighbours } from './types.js';

/** Per query, the k best of two ascending lists; on equal distances `a`'s entry first. */
export function mergeLists(a: Neighbours, b: Neighbours, nq: number, k: number): Neighbours {
  const ids = new Int32Array(nq * k);
  const dists = new Float32Array(nq * k);
  for (let q = 0; q < nq; q++) {
    let i = q * k, j = q * k;
    for (let o = q * k; o < (q + 1) * k; o++) {
      const takeA = j >= (q + 1) * k || (i < (q + 1) * k && !(b.dists[j] < a.dists[i]));
      if (takeA) {
        ids[o] = a.ids[i];
        dists[o] = a.dists[i++];
      } else {
        ids[o] = b.ids[j];
        dists[o] = b.dists[j++];
      }
    }
  }
  return { ids, dists };
}
