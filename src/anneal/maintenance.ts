// Maintenance, decided on the host from m-sized statistics only (count, sse, far point per anchor)
// and the anchors themselves. Two kinds of move, both "take an anchor that is worth little where it
// is and use it to split a cluster that costs a lot":
//   - refill: an empty anchor (or an exact duplicate of another) is worth nothing: always move it;
//   - swap: the anchors whose removal would cost least are moved into the clusters with the largest
//     squared error. Lloyd's iterations cannot do this (they only move anchors locally), which is
//     why plain k-means stays in local minima; anneal() accepts a swap only if the energy drops.
import type { AnchorStats, NearestAnchors } from '../backend/engine.js';

export interface Move {
  /** The anchor that moves... */
  from: number;
  /** ...to split the cluster of this anchor. */
  to: number;
}

/** Indices sorted by key (ascending), ties by index: decisions must not depend on sort stability. */
function order(keys: Float64Array, descending: boolean): number[] {
  const ix = Array.from(keys, (_, i) => i);
  ix.sort((a, b) => (keys[a] === keys[b] ? a - b : descending ? keys[b] - keys[a] : keys[a] - keys[b]));
  return ix;
}

/** Clusters worth splitting, largest squared error first (at least two distinct points). */
function splitTargets(s: AnchorStats): number[] {
  return order(s.sse, true).filter((j) => s.count[j] >= 2 && s.farDist[j] > 0);
}

/** Empty anchors and exact duplicates (the later of each equal pair): they serve no point. */
function uselessAnchors(s: AnchorStats, nn: NearestAnchors): number[] {
  const out: number[] = [];
  for (let j = 0; j < s.count.length; j++) {
    if (s.count[j] === 0 || (nn.dist[j] === 0 && nn.idx[j] < j)) out.push(j);
  }
  return out;
}

/** One refill move per useless anchor, into distinct clusters by decreasing error. */
export function planRefills(s: AnchorStats, nn: NearestAnchors): Move[] {
  const useless = uselessAnchors(s, nn);
  const targets = splitTargets(s).filter((j) => !useless.includes(j));
  const moves: Move[] = [];
  for (let t = 0; t < useless.length && t < targets.length; t++) moves.push({ from: useless[t], to: targets[t] });
  return moves;
}

/**
 * Up to k swaps. Removal cost of anchor j ≈ count_j · ‖c_j − c_nn(j)‖²: the cost if all its points
 * moved to its nearest anchor (an upper bound: they may spread over several). Measured better at
 * ranking than Ward's merge cost, which favours tiny clusters next to big ones. Gain of a split ≈ a
 * share of the cluster's sse. Pairs the cheapest anchors with the costliest clusters (the caller
 * keeps a swap only if it lowers the energy), never touching one anchor twice in a round and never
 * removing an anchor and the neighbour that would absorb its points together.
 */
export function planSwaps(
  s: AnchorStats, nn: NearestAnchors, k: number, excluded: Set<number>,
): Move[] {
  const m = s.count.length;
  const partner = nn.idx;
  const cost = new Float64Array(m);
  for (let j = 0; j < m; j++) cost[j] = s.count[j] * nn.dist[j];
  const cheap = order(cost, false);
  const targets = splitTargets(s);
  const busy = new Set<number>();
  const moves: Move[] = [];
  let t = 0;
  for (const from of cheap) {
    if (moves.length >= k) break;
    if (excluded.has(from) || busy.has(from) || busy.has(partner[from])) continue;
    while (t < targets.length && (busy.has(targets[t]) || excluded.has(targets[t]) || targets[t] === from)) t++;
    if (t >= targets.length) break;
    const to = targets[t];
    moves.push({ from, to });
    busy.add(from).add(to).add(partner[from]);
    t++;
  }
  return moves;
}

/**
 * Apply moves: the moved anchor goes part of the way from the target's centre toward the target's
 * farthest point, so the next assignment splits that cluster in two along its longest extent.
 */
export function applyMoves(
  anchors: Float32Array, d: number, moves: Move[], farRows: Float32Array[], fraction: number,
): void {
  moves.forEach(({ from, to }, q) => {
    const far = farRows[q];
    for (let k = 0; k < d; k++) {
      const c = anchors[to * d + k];
      anchors[from * d + k] = c + fraction * (far[k] - c);
    }
  });
}
