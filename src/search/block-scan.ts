// Steps 2 and 3 of the search (index.ts) for an index whose rows are read from a file a block at a
// time (SearchIndex.blocks): the same work as scan.ts in another order. Which anchors each query
// visits depends only on the lists' sizes (the probing rule, backend/neighbours.ts anchorsVisited),
// so it is settled before any row is read — the queries that would run short ranked again against
// every anchor first. An inverted map, anchor → the queries that visit it
// (with the anchor's distance to each), then lets one pass over the rows in order score each row
// against the queries that visit its anchor, each block of rows read once. Each query keeps its k
// best in the bounded list scan.ts keeps (ascending distance, ties to the lower id: a total order,
// so the order rows arrive in does not change the result): the ids and distances are scan.ts's.
import type { Neighbours } from '../backend/device.js';
import { anchorsVisited, keepBest, writeBest } from '../backend/neighbours.js';
import { checkpoint } from '../interrupt.js';
import { metricScoring } from './metric.js';
import type { Ranking } from './scan.js';
import type { SearchIndex, SearchOptions } from './types.js';

/** Per query, the anchors it visits and their distances to it (flattened: query q's are at start[q] .. start[q + 1]). */
interface Visits {
  start: Int32Array;
  anchors: Int32Array;
  dists: Float32Array;
}

/**
 * The anchors each query of `list` (rows of `ranked`) visits, by the probing rule (anchorsVisited),
 * put in `into[q]`; returns the queries that found fewer than k vectors while more anchors exist (unless `final`).
 */
function visitsOf(
  index: SearchIndex, ranked: Ranking, o: SearchOptions & { nprobe: number }, list: ArrayLike<number>, final: boolean,
  into: Array<{ anchors: number[]; dists: number[] }>,
): number[] {
  const { width } = ranked;
  const short: number[] = [];
  for (let r = 0; r < list.length; r++) {
    const q = list[r];
    const skip = o.exclude ? o.exclude[q] : -1;
    const visits = anchorsVisited(ranked.ids, r * width, width, index.lists, o.k, o.nprobe, skip, !final && width < index.m);
    if (visits < 0) short.push(q);
    else
      into[q] = {
        anchors: Array.from(ranked.ids.subarray(r * width, r * width + visits)),
        dists: Array.from(ranked.dists.subarray(r * width, r * width + visits)),
      };
  }
  return short;
}

/** The visits as flat arrays, and the inverted map: anchor j → the queries visiting it (probeStart[j] .. probeStart[j + 1]). */
function invert(per: Array<{ anchors: number[]; dists: number[] }>, m: number) {
  const probeStart = new Int32Array(m + 1);
  let total = 0;
  for (const v of per) {
    for (const j of v.anchors) probeStart[j + 1]++;
    total += v.anchors.length;
  }
  for (let j = 0; j < m; j++) probeStart[j + 1] += probeStart[j];
  const fill = probeStart.slice(0, m);
  const probeQuery = new Int32Array(total);
  const probeDist = new Float32Array(total);
  per.forEach((v, q) =>
    v.anchors.forEach((j, t) => {
      const p = fill[j]++;
      probeQuery[p] = q;
      probeDist[p] = v.dists[t];
    }),
  );
  return { probeStart, probeQuery, probeDist };
}

/**
 * The search's steps 2 and 3 over an index read in blocks: `ranked` holds every query's first
 * ranking (FIRST_RANKING wide); `rankAll` ranks the given queries against all m anchors (the ones
 * that would run short). Results into out at q·k.
 */
export async function scanBlocks(
  index: SearchIndex, queries: Float32Array, nq: number, ranked: Ranking, o: SearchOptions & { nprobe: number }, out: Neighbours,
  rankAll: (sub: Float32Array, count: number) => Promise<Ranking>,
): Promise<void> {
  const blocks = index.blocks!;
  const { n, d, m } = index;
  const { k } = o;
  const per = new Array<{ anchors: number[]; dists: number[] }>(nq);
  const short = visitsOf(index, ranked, o, Array.from({ length: nq }, (_, q) => q), false, per);
  if (short.length) {
    const sub = new Float32Array(short.length * d);
    short.forEach((q, r) => sub.set(queries.subarray(q * d, (q + 1) * d), r * d));
    visitsOf(index, await rankAll(sub, short.length), o, short, true, per);
  }
  const { probeStart, probeQuery, probeDist } = invert(per, m);

  // Per query: the query the scorer takes (ip / cosine: scaled, metric.ts) and its k best so far.
  const metric = index.metric ?? 'l2';
  const scoring = metric !== 'l2' ? metricScoring(metric, index.anchors, m, d, index.normSq!) : undefined;
  const query = Array.from({ length: nq }, (_, q) => queries.subarray(q * d, (q + 1) * d));
  const metricOf = scoring ? query.map((v) => scoring(v)) : undefined;
  const topD = Array.from({ length: nq }, () => new Float64Array(k));
  const topI = Array.from({ length: nq }, () => new Int32Array(k));
  const count = new Int32Array(nq);
  const { assignments, rows } = blocks;
  const nBlocks = Math.ceil(n / rows);
  for (let b = 0; b < nBlocks; b++) {
    const r0 = b * rows, r1 = Math.min(n, r0 + rows);
    let hit = false;
    for (let i = r0; i < r1 && !hit; i++) hit = probeStart[assignments[i] + 1] > probeStart[assignments[i]];
    if (hit) {
      // Block b's scorer, and each query's distance function over it, made when first needed.
      const scorer = blocks.scorer(b);
      const fns: Array<((id: number, anchorDist: number) => number) | undefined> = new Array(nq);
      const distanceFn = (q: number) => {
        const pm = metricOf?.[q];
        const l2To = scorer.forQuery(pm ? pm.query : query[q]);
        return pm ? (id: number, anchorDist: number) => pm.distance(id, l2To(id, pm.anchorL2(assignments[id], anchorDist))) : l2To;
      };
      for (let i = r0; i < r1; i++) {
        // A block's rows can meet many queries each (every query probing their anchor): yield within it too.
        if ((i & 31) === 31) await checkpoint();
        const j = assignments[i];
        for (let p = probeStart[j]; p < probeStart[j + 1]; p++) {
          const q = probeQuery[p];
          if (o.exclude && o.exclude[q] === i) continue;
          const f = (fns[q] ??= distanceFn(q));
          count[q] = keepBest(topD[q], topI[q], count[q], k, f(i, probeDist[p]), i);
        }
      }
    }
    if (b + 1 < nBlocks) {
      o.onProgress?.(Math.floor((nq * (b + 1)) / nBlocks));
      await checkpoint(); // a long scan yields now and then, so Ctrl-C is heard
    }
  }
  for (let q = 0; q < nq; q++) writeBest(out, q, k, topD[q], topI[q], count[q]);
}
