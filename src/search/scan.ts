// Step 2 and 3 of the search (index.ts) for a range of queries: the anchors each query visits
// (its ranked anchors nearest first, by the probing rule, backend/neighbours.ts anchorsVisited),
// every vector of their lists scored, and the exact k best kept (ascending distance, ties to the
// lower id) in a bounded insertion list (keepBest) — no candidate array, no sort.
// Runs on the main thread or in a worker (worker.ts) over the same arrays.
import { anchorsVisited, keepBest, writeBest } from '../backend/neighbours.js';
import type { Neighbours } from '../backend/device.js';
import { metricScoring } from './metric.js';
import type { SearchIndex, SearchOptions } from './types.js';

export interface Ranking extends Neighbours {
  /** Anchors ranked per query (row length of ids/dists). */
  width: number;
}

/**
 * Queries q0..q1 (rows of `queries` and of `ranked`, which may be a subset: `rowOf(q)` says which
 * row is q's) into out.ids/out.dists at q·k. Returns the queries that found fewer than k vectors
 * among their ranked anchors while more anchors exist (nothing written for them), unless `final`.
 */
export function scanQueries(
  index: SearchIndex,
  queries: Float32Array,
  ranked: Ranking,
  o: SearchOptions & { nprobe: number },
  out: Neighbours,
  list: ArrayLike<number>,
  final: boolean,
): number[] {
  const { d, m } = index;
  const { k, nprobe } = o;
  const { start, members } = index.lists;
  const { width } = ranked;
  const topD = new Float64Array(k);
  const topI = new Int32Array(k);
  const short: number[] = [];
  // ip / cosine with a scorer: the scorer's L2 turned into the metric's distance (metric.ts).
  const metric = index.metric ?? 'l2';
  const scoring = index.scorer && metric !== 'l2' ? metricScoring(metric, index.anchors, m, d, index.normSq!) : undefined;
  for (let r = 0; r < list.length; r++) {
    const q = list[r];
    const skip = o.exclude ? o.exclude[q] : -1;
    const visits = anchorsVisited(ranked.ids, r * width, width, index.lists, k, nprobe, skip, !final && width < m);
    if (visits < 0) {
      short.push(q);
      continue;
    }
    const query = queries.subarray(r * d, (r + 1) * d);
    const per = scoring?.(query);
    const l2To = index.scorer?.forQuery(per ? per.query : query);
    let distanceTo = l2To;
    let anchorId = 0;
    if (per && l2To) distanceTo = (id, anchorDist) => per.distance(id, l2To(id, per.anchorL2(anchorId, anchorDist)));
    let count = 0;
    for (let a = 0; a < visits; a++) {
      const j = ranked.ids[r * width + a];
      anchorId = j;
      const anchorDist = ranked.dists[r * width + a]; // = every member's distance without a scorer
      for (let p = start[j]; p < start[j + 1]; p++) {
        const id = members[p];
        if (id === skip) continue;
        count = keepBest(topD, topI, count, k, distanceTo ? distanceTo(id, anchorDist) : anchorDist, id);
      }
    }
    writeBest(out, q, k, topD, topI, count);
  }
  return short;
}
