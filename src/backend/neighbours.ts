// Merging k-NN answers (Neighbours, ./device.ts) of consecutive pieces of a base: the GPU's k-NN
// over a base in pieces (cuda/knn.ts), and search/exact.ts, quality/recall.ts over large data; and
// the bounded list of the k best candidates that the compressed searches keep (search/scan.ts,
// cpu/pq-search.ts).
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

/**
 * Offer candidate `id` at `dist` to the k best so far (topD/topI[0..count), ascending distance,
 * ties to the lower id); returns the new count. Most candidates are turned away by the first test.
 */
export function keepBest(topD: Float64Array, topI: Int32Array, count: number, k: number, dist: number, id: number): number {
  if (count === k && !(dist < topD[k - 1] || (dist === topD[k - 1] && id < topI[k - 1]))) return count;
  let at = count < k ? count++ : k - 1;
  while (at > 0 && (topD[at - 1] > dist || (topD[at - 1] === dist && topI[at - 1] > id))) {
    topD[at] = topD[at - 1];
    topI[at] = topI[at - 1];
    at--;
  }
  topD[at] = dist;
  topI[at] = id;
  return count;
}
