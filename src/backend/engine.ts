// The training-engine contract: the one interface between the algorithm (src/anneal/, backend-free)
// and the machines that run it (src/backend/cpu/, src/backend/cuda/, sharded/; the search and codec
// kernels are the other contract, device.ts). The algorithm never sees n-sized arrays during the loop:
// an Engine keeps the vectors, the assignments and the per-point state resident, and hands back
// only scalars per iteration and m-sized statistics when maintenance asks for them.
//
// THE MATH (both backends implement exactly this; tests compare them):
//
//   X: n×d vectors (f32, or f16 decoded exactly to f32). C: m×d anchors (f32).
//   dist(i, j) = Σ_k (x_ik − c_jk)²   — direct differences, never ‖x‖² − 2x·c + ‖c‖² (docs/algorithm.md §1).
//
//   iterate({ temperature: T, step: s, huber: h }):
//     for every point i:
//       j1 = argmin_j dist(i, j)      (ties: lowest j),  d1 = dist(i, j1)
//       j2 = runner-up (lowest j ≠ j1 among the minima of the rest), d2 = dist(i, j2); m = 1: none
//       soft share of the runner-up: w2 = (T > 0 && m > 1) ? 1 / (1 + exp((d2 − d1) / T)) : 0
//         shares below 2⁻²⁰ count as 0 (MIN_SOFT_SHARE: the GPU's fixed-point sums cannot resolve them)
//       w1 = 1 − w2
//       robust weight (Huber on the distance, threshold from the previous pass's statistics):
//         H_j = h² · sse_j / count_j of the previous iterate()/finalize() (h <= 0, no previous
//               pass, or count_j = 0: H_j = +∞)
//         r(d, j) = d <= H_j ? 1 : sqrt(H_j / d)
//       W[j1] += w1·r(d1, j1);  S[j1] += w1·r(d1, j1)·x_i
//       W[j2] += w2·r(d2, j2);  S[j2] += w2·r(d2, j2)·x_i            (when w2 > 0)
//       count[j1] += 1;  sse[j1] += d1
//       changed += (assign[i] != j1);  assign[i] = j1   (assign starts as "none": all change)
//       far[j1] = the i with the largest d1 among points assigned to j1 (ties: lowest i)
//     energy = Σ_i d1 / n      (w.r.t. the anchors *before* the update, like Lloyd's inertia)
//     then for every j with W[j] > 0:  c_j ← c_j + s·(S[j] / W[j] − c_j)
//   finalize(): the same assignment pass with s = 0 and T = 0 (hard, exact): fills assign,
//     count, sse, far; anchors unchanged.
//   nearestOther() (maintenance's m²·d search, src/anneal/maintenance.ts): for the current
//     anchors C (what getAnchors() returns), every anchor a as a point against all of C:
//       (j1, d1, j2, d2) = the top-2 of c_a as above, in f32 (ties: lowest j)
//       idx[a] = j1 == a ? j2 : j1,  dist[a] = the matching distance   (nearest-other.ts, shared)
//     i.e. the nearest other anchor; dist(a, a) = 0, so j1 is a itself unless an exact duplicate
//     with a lower index came first, which is then the answer (distance 0). m < 2: +∞ and −1.
//
// HOW THE SUMS ARE TAKEN (fixed.ts). Every sum over points that a later decision reads — S, W,
// count, sse, the energy, changed, and the k-means++ sums — is a sum of integers: each term is
// rounded once to an integer at a power-of-two scale chosen from the WHOLE data's n and largest
// |x| (told to the engine by setGlobal when it holds a shard), and integers add exactly in any
// order; far combines by a max. So an engine's results do not depend on threads, blocks, tiles,
// or on how the rows are split between engines: a sharded engine (sharded/engine.ts) over any
// number of engines of one kind gives exactly the bytes of one engine of that kind. The GPU sums
// in int64 with 61 bits of range, the CPU in doubles with 52 (exact integers); their rounding
// differs, so the two backends agree to the parity test's tolerances (docs/cuda.md), not bit for bit.
//
// AN ITERATION in two steps, so that shards can combine between them:
//   accumulate(p) -> Partials: the pass over this engine's rows (assignments updated, the sums
//     taken), nothing applied;
//   applyUpdate(total, p) -> IterStats: the combined Partials of every shard become this pass's
//     statistics (stats(), the next pass's Huber thresholds) and move the anchors (p.step).
// iterate(p) is the two in one on a single engine, without the partials leaving the device (the
// GPU's hot path: one wait and a 24-byte download per iteration); it gives the same result as
// applyUpdate(accumulate(p), p).

import type { Dataset } from '../vectors/dataset.js';

/** Soft shares below this are dropped by every backend (see the math above). */
export const MIN_SOFT_SHARE = 2 ** -20;

export interface IterParams {
  /** Temperature in units of squared distance; 0 = hard assignment. */
  temperature: number;
  /** Fraction of the way each anchor moves toward its (robust) weighted mean, in (0, 1]. */
  step: number;
  /** Huber factor h (threshold h² × the anchor's mean squared distance); <= 0 disables. */
  huber: number;
}

export interface IterStats {
  /** Mean over points of d1 (squared distance to the nearest anchor before the update). */
  energy: number;
  /** Points whose nearest anchor changed in this pass. */
  changed: number;
  /** Wall milliseconds of this pass as the backend measured it (CUDA events on the GPU). */
  ms: number;
}

/** Per-anchor statistics of the last iterate()/finalize() pass (m-sized; a download on the GPU). */
export interface AnchorStats {
  count: Float64Array;
  sse: Float64Array;
  /** Index of the point farthest from anchor j among its points, -1 when the anchor is empty. */
  far: Int32Array;
  /** dist of that point, 0 when empty. */
  farDist: Float64Array;
}

/**
 * One pass's sums over an engine's rows, in the fixed point of the pass (every shard the same
 * scales): combined across shards by adding `sums` and taking the max of `far`, element-wise
 * (exact either way), which is all sharded/comm.ts needs to know.
 */
export interface Partials {
  /**
   * int64: S (m×d, row-major), then W (m), count (m), sse (m), changed (1) — see partialLayout;
   * the energy sum is Σ sse (the same integer terms). S and W are zero for a pass with step 0.
   */
  sums: BigInt64Array;
  /** Per anchor its farthest point, packed by fixed.ts packFar (0 = no point): combined by max. */
  far: BigInt64Array;
}

/**
 * The members of a sharded engine that can combine their passes among themselves, without the
 * host (several GPUs of one process: cuda/peer.ts): iterate() is the sharded iterate, the same
 * numbers as accumulate → combine → applyUpdate.
 */
export interface DeviceGroup {
  iterate(p: IterParams): Promise<IterStats>;
  dispose(): Promise<void>;
}

/** A DeviceGroup over these engines, or undefined when they cannot form one (then the host combines). */
export type DeviceGroupFactory = (members: Engine[]) => DeviceGroup | undefined;

/** Where each quantity sits in Partials.sums for m anchors of d dimensions. */
export function partialLayout(m: number, d: number) {
  const S = 0, W = m * d, count = W + m, sse = count + m, changed = sse + m;
  return { S, W, count, sse, changed, length: changed + 1 };
}

/** The whole data's figures, for an engine that holds rows [rowOffset, rowOffset + its n) of it. */
export interface GlobalFigures {
  n: number;
  maxAbs: number;
  rowOffset: number;
}

/** Each anchor's nearest other anchor: squared distance (f32 kernel values) and index. */
export interface NearestAnchors {
  dist: Float64Array;
  idx: Int32Array;
}

/**
 * A dataset (or one shard of it: rows [rowOffset, rowOffset + n) of the whole) loaded on one
 * device, with m anchors. Every method may be awaited.
 */
export interface Engine {
  /** Rows this engine holds (a shard's own rows; a sharded engine's: all of them). */
  readonly n: number;
  readonly d: number;
  readonly m: number;
  /** Largest |x| over this engine's rows, measured when it was opened. */
  readonly maxAbs: number;
  /**
   * Tell a shard the whole data's figures before its first seeding call or pass: the fixed-point
   * scales, the energy's mean and the farthest points' indexes use them. Default: its own rows.
   */
  setGlobal(g: GlobalFigures): void;

  // --- k-means++ seeding (D² sampling). D[i] is a resident per-point array. ---
  // The sums count each D[i] as floor(D[i] / seedUnit) units (fixed.ts), so they are exact
  // multiples of seedUnit that add up exactly across shards.
  /** D[i] = dist(x_i, c) for one candidate c (length d); returns Σ D. Sets seedUnit (from c's range). */
  seedBegin(c: Float32Array): Promise<number>;
  /** For each of L candidates (L×d, row-major) return Σ_i min(D[i], dist(x_i, c_l)); D unchanged. */
  seedTry(cands: Float32Array): Promise<Float64Array>;
  /** D[i] = min(D[i], dist(x_i, c)); returns the new Σ D. */
  seedAdd(c: Float32Array): Promise<number>;
  /**
   * The smallest i (of this engine's rows) whose prefix sum D[0] + … + D[i], in units, exceeds
   * target (target in [0, Σ D)); at or past Σ D, the last i with a non-zero share.
   */
  seedPick(target: number): Promise<number>;
  /**
   * D[i] = min(D[i], min over the L candidates (L×d, row-major) of dist(x_i, c_l)); returns the new
   * Σ D: L seedAdds in one pass (k-means++ in rounds, init.ts).
   */
  seedAddMany(cands: Float32Array): Promise<number>;
  /** seedPick of each target, all against the same D (the order given; any number, none included). */
  seedPickMany(targets: Float64Array): Promise<Int32Array>;
  /** The unit of the seeding sums since the last seedBegin. */
  readonly seedUnit: number;
  /** Vector i as f32 (length d). */
  row(i: number): Promise<Float32Array>;
  /**
   * Vectors list[0], list[1], … as f32, one after another (list.length × d), into `out` when given
   * (else a fresh array), which is returned: row() of many at once (init's rounds).
   */
  rows(list: ArrayLike<number>, out?: Float32Array): Promise<Float32Array>;
  /**
   * An engine over some of this engine's rows (indices into them, distinct, ascending) on the same
   * device, with the same m: init runs k-means++ and a few Lloyd passes on a sample through it
   * (src/anneal/init.ts). The caller disposes it; this engine is not changed.
   */
  subset(rows: Int32Array): Promise<Engine>;

  // --- the loop ---
  setAnchors(anchors: Float32Array): Promise<void>;
  getAnchors(): Promise<Float32Array>;
  /** One pass: accumulate(p) then applyUpdate of its own partials, kept on the device. */
  iterate(p: IterParams): Promise<IterStats>;
  /** iterate({ temperature: 0, step: 0, huber: 0 }): the exact hard pass, anchors unchanged. */
  finalize(): Promise<IterStats>;
  /**
   * The pass over this engine's rows: assignments updated, sums taken, nothing applied. The arrays
   * may be the engine's own, written again by its next accumulate (the GPU's: m×d int64 a pass).
   */
  accumulate(p: IterParams): Promise<Partials>;
  /** The combined partials of every shard become this pass's statistics; the anchors move by p.step. */
  applyUpdate(total: Partials, p: IterParams): Promise<IterStats>;
  /** Statistics of the last pass (of the whole data once applyUpdate has installed them). */
  stats(): Promise<AnchorStats>;
  /** The assignment of every point (n-sized download; call once, at the end). */
  assignments(): Promise<Uint32Array>;
  /**
   * Each current anchor's nearest other anchor (the math above), computed where the anchors are.
   * Backends sum the d terms in their own order, so distances agree up to the last f32 bits.
   */
  nearestOther(): Promise<NearestAnchors>;

  /** Free everything this engine holds. Safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * The training side of a backend (types.ts Backend): Engines over a dataset on its device(s).
 * Both members are always there: a device that cannot read rows in place copies them on the host.
 */
export interface TrainEngine {
  open(data: Dataset, m: number): Promise<Engine>;
  /**
   * The engine open(selectRows(data, rows), m) gives — the listed rows (indices into data, in the
   * order given) — without a host copy of them where the backend can avoid one: a GPU gathers
   * them into its own memory (cuda/host-rows.ts); the CPU copies them (init's sample, api/train.ts).
   */
  openRows(data: Dataset, rows: Int32Array, m: number): Promise<Engine>;
  /**
   * How many small independent engines (pq's subspaces: a few MB each) may train at once. A GPU's
   * engine spends most of a small problem's time waiting on the host, which another engine's
   * launches can fill; the CPU runs each engine on every core, so one at a time (1).
   */
  readonly smallEnginesAtOnce: number;
}
