// k-NN over a compressed index (`vlc search`, and the recall figures of `vlc eval`):
//   1. rank the anchors by exact squared L2 distance to the query (the injected ExactKnn);
//   2. probe: walk them nearest first, collecting the vectors assigned to each ("candidates"),
//      until at least k candidates are in hand and at least `nprobe` anchors were visited;
//   3. rank the candidates by the distance from the query to their reconstruction (the index's
//      scorer). Without one a vector's reconstruction is its anchor, so step 3's distance is the
//      anchor's distance and candidates of one anchor tie (broken by the lower id). With residuals
//      each candidate has its own reconstruction, and visiting more anchors (nprobe) finds
//      neighbours that fell just across a cell boundary.
// The index comes from an adapter (vlc.ts); the search knows no file format and no device.
import { checkpoint } from '../interrupt.js';
import type { ExactKnn, Neighbours } from '../backend/types.js';
import type { SearchIndex, SearchOptions, SearchResult } from './types.js';

export type { CandidateScorer, InvertedLists, SearchIndex, SearchOptions, SearchResult } from './types.js';
export { invertedLists } from './lists.js';
export { vlcSearchIndex } from './vlc.js';

/** Anchors visited at least, by default: with a scorer (residuals), neighbours in nearby cells are findable. */
export function defaultNprobe(index: SearchIndex): number {
  return index.scorer ? 8 : 1;
}

/**
 * Most queries find k candidates among a few dozen anchors: the first ranking keeps this many;
 * the rare query that runs short (many empty or tiny anchors) is ranked again against all m.
 */
const FIRST_RANKING = 32;

/** Queries between two progress reports (and chances for Ctrl-C to be heard). */
const QUERIES_PER_REPORT = 64;

export async function searchCompressed(
  index: SearchIndex,
  queries: Float32Array,
  nq: number,
  o: SearchOptions,
  exact: ExactKnn,
): Promise<SearchResult> {
  const { d, m, anchors } = index;
  const k = o.k;
  const nprobe = Math.min(m, Math.max(1, o.nprobe ?? defaultNprobe(index)));
  const ids = new Int32Array(nq * k).fill(-1);
  const dists = new Float32Array(nq * k).fill(Infinity);

  const firstTry = Math.min(m, Math.max(nprobe, FIRST_RANKING));
  const ranked = await exact.knn(anchors, m, queries, nq, d, firstTry);
  const retry: number[] = [];
  for (let q = 0; q < nq; q++) {
    if (!collect(q, queries.subarray(q * d, (q + 1) * d), ranked, firstTry, q, false)) retry.push(q);
    if (q % QUERIES_PER_REPORT === QUERIES_PER_REPORT - 1) {
      o.onProgress?.(q + 1);
      await checkpoint(); // a long search yields now and then, so Ctrl-C is heard
    }
  }
  o.onProgress?.(nq);
  if (retry.length) {
    const sub = new Float32Array(retry.length * d);
    retry.forEach((q, r) => sub.set(queries.subarray(q * d, (q + 1) * d), r * d));
    const all = await exact.knn(anchors, m, sub, retry.length, d, m);
    retry.forEach((q, r) => collect(q, sub.subarray(r * d, (r + 1) * d), all, m, r, true));
  }
  return { ids, dists };

  /**
   * Query q's results from row `row` of `ranked` (its anchors, `width` per row, nearest first),
   * written into ids/dists; false (nothing written) when it ran short and a full ranking may help.
   */
  function collect(q: number, query: Float32Array, ranked: Neighbours, width: number, row: number, final: boolean): boolean {
    const skip = o.exclude ? o.exclude[q] : -1;
    const distanceTo = index.scorer?.forQuery(query);
    const { start, members } = index.lists;
    const cand: Array<[number, number]> = []; // [distance, id]
    let visited = 0;
    for (let r = 0; r < width; r++) {
      const j = ranked.ids[row * width + r];
      if (j < 0) break;
      if (cand.length >= k && visited >= nprobe) break;
      visited++;
      const anchorDist = ranked.dists[row * width + r]; // = every member's distance without a scorer
      for (let p = start[j]; p < start[j + 1]; p++) {
        const id = members[p];
        if (id === skip) continue;
        cand.push([distanceTo ? distanceTo(id) : anchorDist, id]);
      }
    }
    if (cand.length < k && !final && width < m) return false;
    cand.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    for (let r = 0; r < Math.min(k, cand.length); r++) {
      ids[q * k + r] = cand[r][1];
      dists[q * k + r] = cand[r][0];
    }
    return true;
  }
}
