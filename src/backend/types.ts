// The one interface between the algorithm (src/anneal/, backend-free) and the machines that run it
// (src/backend/cpu/, src/backend/cuda/). The algorithm never sees n-sized arrays during the loop:
// an Engine keeps the vectors, the assignments and the per-point state resident, and hands back
// only scalars per iteration and m-sized statistics when maintenance asks for them.
//
// THE MATH (both backends implement exactly this; tests compare them):
//
//   X: n×d vectors (f32, or f16 decoded exactly to f32). C: m×d anchors (f32).
//   dist(i, j) = Σ_k (x_ik − c_jk)²   — direct differences, never ‖x‖² − 2x·c + ‖c‖² (SPEC §3.5).
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
// Each backend sums in its own way (S and W as 64-bit fixed-point atomics on the GPU,
// cuda/reduce.cu; f64 in point order on the CPU); the two backends agree to the tolerances of
// SPEC §3.4, not bit for bit.

import type { Dataset } from '../io/dataset.js';

/** Soft shares below this are dropped by every backend (see the math above). */
export const MIN_SOFT_SHARE = 2 ** -20;

export type BackendKind = 'cpu' | 'cuda';

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

/** Each anchor's nearest other anchor: squared distance (f32 kernel values) and index. */
export interface NearestAnchors {
  dist: Float64Array;
  idx: Int32Array;
}

/** One dataset loaded on one device, with m anchors. Every method may be awaited. */
export interface Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;

  // --- k-means++ seeding (D² sampling). D[i] is a resident per-point array. ---
  /** D[i] = dist(x_i, c) for one candidate c (length d); returns Σ D. */
  seedBegin(c: Float32Array): Promise<number>;
  /** For each of L candidates (L×d, row-major) return Σ_i min(D[i], dist(x_i, c_l)); D unchanged. */
  seedTry(cands: Float32Array): Promise<Float64Array>;
  /** D[i] = min(D[i], dist(x_i, c)); returns the new Σ D. */
  seedAdd(c: Float32Array): Promise<number>;
  /** The smallest i whose prefix sum D[0] + … + D[i] exceeds target (target in [0, Σ D)). */
  seedPick(target: number): Promise<number>;
  /** Vector i as f32 (length d). */
  row(i: number): Promise<Float32Array>;

  // --- the loop ---
  setAnchors(anchors: Float32Array): Promise<void>;
  getAnchors(): Promise<Float32Array>;
  iterate(p: IterParams): Promise<IterStats>;
  finalize(): Promise<IterStats>;
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

export interface Backend {
  readonly kind: BackendKind;
  /** Human-readable device name, e.g. "cpu (2 threads)" or "NVIDIA H100 80GB HBM3 (cuda:0)". */
  readonly label: string;
  open(data: Dataset, m: number): Promise<Engine>;
  close(): Promise<void>;
}

/** k nearest neighbours per query: nq×k ids and squared L2 distances, ascending (ties: lower id). */
export interface Neighbours {
  /** −1 where fewer than k base vectors exist. */
  ids: Int32Array;
  /** +∞ with id −1. */
  dists: Float32Array;
}

/**
 * Exact brute-force k-NN, the primitive src/search/ ranks anchors with (and `eval` its ground
 * truth): for each of nq queries the k nearest of nb base vectors (row-major, d dims), by direct
 * squared differences in f32. The CPU backend implements it (cpu/knn.ts); a device may too.
 */
export interface ExactKnn {
  knn(base: Float32Array, nb: number, queries: Float32Array, nq: number, d: number, k: number): Promise<Neighbours>;
}
