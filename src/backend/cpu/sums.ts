// One pass's sums on the CPU, as integers held in doubles (../fixed.ts: each term rounded once at
// a power-of-two scale, totals below 2^52, so every addition is exact and the order of the
// points, threads or shards does not matter), and their conversions to and from the Partials of
// ../engine.ts that a sharded engine combines.
import { doublesFromInt64, int64FromDoubles, packFar, unpackFar, type PassScales } from '../fixed.js';
import { partialLayout, type AnchorStats, type Partials } from '../types.js';
import type { SharedState } from './shared.js';

export interface PassSums {
  /** m×d weighted sums (units 1/s), W (1/w), count, sse (1/e): integers. */
  S: Float64Array;
  W: Float64Array;
  count: Float64Array;
  sse: Float64Array;
  /** Per anchor its farthest point (index in the whole data, -1 when empty) and that distance. */
  far: Int32Array;
  farDist: Float64Array;
  changed: number;
}

/**
 * The main thread's walk over this engine's points: count, sse, W, far and the changed count;
 * updates `assign`. S is the workers' (filled by then, or left as it is when not needed).
 */
export function passSums(st: SharedState, assign: Int32Array, sc: PassScales, rowOffset: number, S: Float64Array): PassSums {
  const { n, m } = st;
  const out: PassSums = {
    S, W: new Float64Array(m), count: new Float64Array(m), sse: new Float64Array(m),
    far: new Int32Array(m).fill(-1), farDist: new Float64Array(m), changed: 0,
  };
  const { W, count, sse, far, farDist } = out;
  const { j1, d1, j2, w1, w2 } = st;
  let changed = 0;
  for (let i = 0; i < n; i++) {
    const a = j1[i], da = d1[i];
    count[a] += 1;
    sse[a] += Math.round(da * sc.e);
    // Largest distance; among equal ones the lowest index (the first in this order).
    if (far[a] < 0 || da > farDist[a]) {
      far[a] = rowOffset + i;
      farDist[a] = da;
    }
    if (assign[i] !== a) {
      changed++;
      assign[i] = a;
    }
    W[a] += Math.round(w1[i] * sc.w);
    if (w2[i] > 0) W[j2[i]] += Math.round(w2[i] * sc.w);
  }
  out.changed = changed;
  return out;
}

/** The per-anchor statistics ../engine.ts promises (sse back in units of squared distance). */
export function statsOf(s: PassSums, eScale: number): AnchorStats {
  return { count: s.count.slice(), sse: s.sse.map((v) => v / eScale), far: s.far.slice(), farDist: s.farDist.slice() };
}

/** Σ sse in units (exact): the pass's energy times n, in units. */
export function energyUnits(s: PassSums): number {
  let e = 0;
  for (const v of s.sse) e += v;
  return e;
}

export function toPartials(s: PassSums, m: number, d: number): Partials {
  const L = partialLayout(m, d);
  const sums = new BigInt64Array(L.length);
  int64FromDoubles(s.S.subarray(0, m * d), sums.subarray(L.S, L.S + m * d));
  int64FromDoubles(s.W, sums.subarray(L.W, L.W + m));
  int64FromDoubles(s.count, sums.subarray(L.count, L.count + m));
  int64FromDoubles(s.sse, sums.subarray(L.sse, L.sse + m));
  sums[L.changed] = BigInt(s.changed);
  const far = new BigInt64Array(m);
  for (let j = 0; j < m; j++) if (s.far[j] >= 0) far[j] = packFar(s.farDist[j], s.far[j]);
  return { sums, far };
}

export function fromPartials(p: Partials, m: number, d: number): PassSums {
  const L = partialLayout(m, d);
  const v = doublesFromInt64(p.sums); // integers below 2^52: exact
  const out: PassSums = {
    S: v.subarray(L.S, L.S + m * d), W: v.subarray(L.W, L.W + m), count: v.subarray(L.count, L.count + m),
    sse: v.subarray(L.sse, L.sse + m), far: new Int32Array(m).fill(-1), farDist: new Float64Array(m), changed: v[L.changed],
  };
  for (let j = 0; j < m; j++) {
    const f = unpackFar(p.far[j]);
    out.far[j] = f.index;
    out.farDist[j] = f.dist;
  }
  return out;
}
