// Merging k-NN answers (Neighbours, ./device.ts) of consecutive pieces of a base: the GPU's k-NN
// over a base in pieces (cuda/knn.ts), and search/exact.ts, quality/recall.ts over large data; and
// what the compressed searches over inverted lists share (search/scan.ts, search/block-scan.ts,
// cpu/pq-search.ts): the probing rule that says which anchors a query visits, the bounded list of
// its k best candidates, and that list written out as its answer.
import type { InvertedLists, Neighbours } from './types.js';

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

/** Query q's k best (topD/topI[0..count)) as its answer in out at q·k, padded with id −1 at distance ∞. */
export function writeBest(out: Neighbours, q: number, k: number, topD: Float64Array, topI: Int32Array, count: number): void {
  for (let t = 0; t < k; t++) {
    out.ids[q * k + t] = t < count ? topI[t] : -1;
    out.dists[q * k + t] = t < count ? topD[t] : Infinity;
  }
}

/**
 * The probing rule: how many of a query's ranked anchors (`ranked[at .. at + width)`, nearest
 * first, −1 past the last) it visits — nearest first, until their lists hold k candidates and
 * nprobe anchors are visited. Vector `skip` (eval's query itself; −1: none) is no candidate. It
 * depends only on the lists' sizes, so a search can settle it before reading any row. Returns −1
 * when the ranked anchors hold fewer than k candidates and `more` says more anchors could be
 * ranked (the caller ranks the query again against all of them).
 */
export function anchorsVisited(
  ranked: ArrayLike<number>, at: number, width: number, lists: InvertedLists, k: number, nprobe: number, skip: number, more: boolean,
): number {
  const { start } = lists;
  let seen = 0;
  let visited = 0;
  for (; visited < width; visited++) {
    const j = ranked[at + visited];
    if (j < 0 || (seen >= k && visited >= nprobe)) break;
    seen += start[j + 1] - start[j];
    // The skipped vector is a member of at most one list, at most once.
    if (skip >= 0 && listHolds(lists, j, skip)) seen--;
  }
  return seen < k && more ? -1 : visited;
}

/** Whether vector `id` is a member of anchor j's list (the lists hold ids ascending). */
function listHolds(lists: InvertedLists, j: number, id: number): boolean {
  const { start, members } = lists;
  let lo = start[j], hi = start[j + 1];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (members[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < start[j + 1] && members[lo] === id;
}
