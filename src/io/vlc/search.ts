// k-NN over a compressed index (`vlc search`, and the recall figures of `vlc eval`):
//   1. rank the anchors by exact squared L2 distance to the query;
//   2. walk them nearest first, collecting the vectors assigned to each ("candidates"), until at
//      least k candidates are in hand and at least `nprobe` anchors were visited;
//   3. rank candidates by the distance from the query to their reconstruction.
// With no residual section a vector's reconstruction is its anchor, so step 3's distance is the
// anchor's distance and candidates of one anchor tie (broken by the lower id). With residuals each
// candidate has its own reconstruction, and visiting more anchors (nprobe) finds neighbours that
// fell just across a cell boundary.
import { knn } from '../../backend/cpu/index.js';
import type { VlcFile } from './format.js';
import { reconstructInto } from './reconstruct.js';

/** Anchors visited at least, by default: with residuals, neighbours in nearby cells are findable. */
export function defaultNprobe(file: VlcFile): number {
  return file.residuals ? 8 : 1;
}

export interface SearchOptions {
  k: number;
  /** Visit at least this many anchors (default: defaultNprobe). */
  nprobe?: number;
  /** Per query, one vector id to leave out of its results (eval: the query itself), or -1. */
  exclude?: Int32Array;
}

export interface SearchResult {
  /** nq×k ids, ascending distance; -1 where fewer than k vectors exist. */
  ids: Int32Array;
  /** nq×k squared L2 distances to the reconstructions; +Infinity with id -1. */
  dists: Float32Array;
}

/** Vectors grouped by anchor: ids of anchor j are members[start[j] .. start[j+1]), ascending. */
export interface InvertedLists {
  start: Uint32Array;
  members: Uint32Array;
}

export function invertedLists(file: VlcFile): InvertedLists {
  const { n, m } = file.manifest;
  const a = file.assignments;
  const start = new Uint32Array(m + 1);
  for (let i = 0; i < n; i++) start[a[i] + 1]++;
  for (let j = 0; j < m; j++) start[j + 1] += start[j];
  const fill = start.slice(0, m);
  const members = new Uint32Array(n);
  for (let i = 0; i < n; i++) members[fill[a[i]]++] = i;
  return { start, members };
}

export async function searchCompressed(
  file: VlcFile,
  queries: Float32Array,
  nq: number,
  o: SearchOptions,
  lists: InvertedLists = invertedLists(file),
): Promise<SearchResult> {
  const { d, m } = file.manifest;
  const k = o.k;
  const nprobe = Math.min(m, Math.max(1, o.nprobe ?? defaultNprobe(file)));
  const row = new Float32Array(d);
  const ids = new Int32Array(nq * k).fill(-1);
  const dists = new Float32Array(nq * k).fill(Infinity);

  // Most queries find k candidates among a few dozen anchors; the rare query that does not
  // (many empty or tiny anchors) is ranked again against all m.
  const firstTry = Math.min(m, Math.max(nprobe, 32));
  let ranked = await knn(file.anchors, m, queries, nq, d, firstTry);
  let width = firstTry;
  const retry: number[] = [];
  for (let q = 0; q < nq; q++) if (!collect(q, false)) retry.push(q);
  if (retry.length) {
    const sub = new Float32Array(retry.length * d);
    retry.forEach((q, r) => sub.set(queries.subarray(q * d, (q + 1) * d), r * d));
    ranked = await knn(file.anchors, m, sub, retry.length, d, m);
    width = m;
    retry.forEach((q, r) => collect(q, true, r));
  }
  return { ids, dists };

  /** Fill query q's results from its ranked anchors (row `rankRow` of `ranked`); false if it ran short. */
  function collect(q: number, final: boolean, rankRow = q): boolean {
    const skip = o.exclude ? o.exclude[q] : -1;
    const cand: Array<[number, number]> = []; // [distance, id]
    let visited = 0;
    for (let r = 0; r < width; r++) {
      const j = ranked.ids[rankRow * width + r];
      if (j < 0) break;
      if (cand.length >= k && visited >= nprobe) break;
      visited++;
      const anchorDist = ranked.dists[rankRow * width + r]; // = every member's distance without residuals
      for (let p = lists.start[j]; p < lists.start[j + 1]; p++) {
        const id = lists.members[p];
        if (id === skip) continue;
        cand.push([file.residuals ? distanceToReconstruction(q, id) : anchorDist, id]);
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

  function distanceToReconstruction(q: number, id: number): number {
    reconstructInto(file, id, row);
    let s = 0;
    for (let k = 0; k < d; k++) {
      const e = queries[q * d + k] - row[k];
      s += e * e;
    }
    return s;
  }
}
