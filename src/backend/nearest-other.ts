// The rule of Engine.nearestOther (engine.ts), written once for every backend: given each anchor's
// top-2 among all anchors (itself included), its nearest OTHER anchor.
import type { NearestAnchors } from './types.js';

/** Top-2 lists as the backends' assignment passes produce them (entry p: nearest j1/d1, runner-up j2/d2). */
export interface Top2Lists {
  j1: ArrayLike<number>;
  d1: ArrayLike<number>;
  j2: ArrayLike<number>;
  d2: ArrayLike<number>;
}

/** Every anchor with no other: distance +∞, index −1 (the whole answer when m < 2). */
export function noNearestAnchors(m: number): NearestAnchors {
  return { dist: new Float64Array(m).fill(Infinity), idx: new Int32Array(m).fill(-1) };
}

/**
 * Fill anchors first … first + count − 1 of `out` from their top-2 (entry p of `top2` is anchor
 * first + p): dist(a, a) = 0, so a's nearest is a itself and its runner-up is the answer — unless
 * an exact duplicate with a lower index won the tie, which is then the answer (at distance 0).
 */
export function nearestOtherFromTop2(out: NearestAnchors, first: number, count: number, top2: Top2Lists): void {
  for (let p = 0; p < count; p++) {
    const a = first + p;
    const self = top2.j1[p] === a;
    out.idx[a] = self ? top2.j2[p] : top2.j1[p];
    out.dist[a] = self ? top2.d2[p] : top2.d1[p];
  }
}
