// Inner product and cosine through the exact k-NN every backend has, which ranks by squared L2.
//
// Inner product: with R² the largest ‖b‖² of the base, the base rows get one more coordinate,
// √(R² − ‖b‖²), and the queries a 0 there; then ‖q' − b'‖² = ‖q‖² + R² − 2⟨q, b⟩, so the L2
// ranking of the augmented vectors is the inner-product ranking (the usual reduction of maximum
// inner product search to nearest neighbours). Any ExactKnn runs it — the CPU's SIMD kernel, a
// GPU's — on d + 1 dimensions. The L2 values carry R², which costs f32 digits, so each query's
// few more than k candidates are scored again exactly (f64 dot products) and the k best kept:
// the scores returned are exact, and the ranking too unless many candidates tie within f32.
// Cosine: the same over the queries and base rows scaled to unit length (a zero row stays zero,
// its cosine to anything 0).
//
// Every list stays ascending in a "distance": squared L2, −⟨q, x⟩ for ip, −cos(q, x) for cosine,
// so merges, bounded lists and ties (the lower id) work as for L2; reportedDistance says them to users.
import { BLOCK_FLOATS, decodedKnn } from '../backend/block-knn.js';
import type { ExactKnn, Neighbours } from '../backend/device.js';
import { normalizeRows, type Metric } from '../vectors/metric.js';

export type { Metric };

/** Candidates per query beyond k that the exact rescoring sees (the kernel's f32 ranking errs only among near ties). */
const EXTRA = 8;
/**
 * The extra candidates stay within the lists a GPU keeps (GPU_KNN_MAX_K, backend/cuda/knn.ts), so
 * a k the GPU serves stays on the GPU (above it the host's k-NN serves, as for L2).
 */
const DEVICE_MAX_K = 128;

/**
 * The exact k-NN by `metric` (l2: `exact` itself). Its lists are ascending in the metric's
 * distance (−⟨q, x⟩ for ip, −cos for cosine); it offers no pq pass and no device decoding of its
 * own (those rank by L2), so callers take their generic steps.
 */
export function withMetric(exact: ExactKnn, metric: Metric): ExactKnn {
  if (metric === 'l2') return exact;
  const knn: ExactKnn['knn'] = (base, nb, queries, nq, d, k) => ipKnn(exact, base, nb, queries, nq, d, k, metric === 'cosine');
  return {
    knn,
    // The pq pass ranks by L2: search/index.ts takes its generic steps under another metric.
    searchPq: () => Promise.reject(new Error(`the pq search pass ranks by l2, not ${metric}`)),
    // Decoded on the host a block at a time and ranked by the metric's k-NN (a device's decoder ranks by L2).
    knnDecoded: decodedKnn({ knn }, BLOCK_FLOATS),
  };
}

/**
 * A list's value as search reports it, ascending whatever the metric (as pgvector's operators):
 * squared L2; the negative inner product −⟨q, x⟩ (ip, as kept); the cosine distance 1 − cos (cosine).
 */
export function reportedDistance(metric: Metric, dist: number): number {
  return metric === 'cosine' && Number.isFinite(dist) ? 1 + dist : dist;
}

/** Lists' values as search reports them (reportedDistance), in place; returns the array. */
export function reportedInPlace(metric: Metric, dists: Float32Array): Float32Array {
  if (metric === 'cosine') for (let i = 0; i < dists.length; i++) dists[i] = reportedDistance(metric, dists[i]);
  return dists;
}

async function ipKnn(
  exact: ExactKnn, base: Float32Array, nb: number, queries: Float32Array, nq: number, d: number, k: number, cosine: boolean,
): Promise<Neighbours> {
  const ids = new Int32Array(nq * k).fill(-1);
  const dists = new Float32Array(nq * k).fill(Infinity);
  if (nq === 0 || nb === 0) return { ids, dists };
  const q = Float32Array.from(queries.subarray(0, nq * d));
  const b = cosine ? normalizeRows(Float32Array.from(base.subarray(0, nb * d)), nb, d) : base;
  if (cosine) normalizeRows(q, nq, d);
  const D = d + 1;
  const bAug = new Float32Array(new SharedArrayBuffer(nb * D * 4));
  const norm2 = new Float64Array(nb);
  let r2 = 0;
  for (let i = 0; i < nb; i++) {
    let s = 0;
    for (let t = 0; t < d; t++) {
      const v = b[i * d + t];
      bAug[i * D + t] = v;
      s += v * v;
    }
    norm2[i] = s;
    if (s > r2) r2 = s;
  }
  for (let i = 0; i < nb; i++) bAug[i * D + d] = Math.sqrt(Math.max(0, r2 - norm2[i]));
  // Each query scaled to length R (the order of ⟨q, x⟩ over x does not change): the augmented
  // distance 2R² − 2⟨q, x⟩ then spans its whole range, where a short query against long base rows
  // left the scores' differences below float32's resolution of R² (rows missed on the CPU).
  const qAug = new Float32Array(new SharedArrayBuffer(nq * D * 4));
  const R = Math.sqrt(r2);
  for (let r = 0; r < nq; r++) {
    let qq = 0;
    for (let t = 0; t < d; t++) qq += q[r * d + t] * q[r * d + t];
    const f = qq > 0 && R > 0 ? R / Math.sqrt(qq) : 1;
    for (let t = 0; t < d; t++) qAug[r * D + t] = q[r * d + t] * f;
  }
  const wide = Math.min(nb, Math.max(k, Math.min(k + EXTRA, DEVICE_MAX_K)));
  const found = await exact.knn(bAug, nb, qAug, nq, D, wide);
  // Rescore each query's candidates exactly and keep the k best (ties: the lower id).
  const cand: Array<{ id: number; s: number }> = [];
  for (let r = 0; r < nq; r++) {
    cand.length = 0;
    for (let c = 0; c < wide; c++) {
      const id = found.ids[r * wide + c];
      if (id < 0) continue;
      let s = 0;
      for (let t = 0; t < d; t++) s += q[r * d + t] * b[id * d + t];
      cand.push({ id, s: Math.fround(-s) });
    }
    cand.sort((x, y) => x.s - y.s || x.id - y.id);
    for (let c = 0; c < Math.min(k, cand.length); c++) {
      ids[r * k + c] = cand[c].id;
      dists[r * k + c] = cand[c].s;
    }
  }
  return { ids, dists };
}

/** ‖a_j‖² of each of m anchors (f64 sums), kept per anchors array. */
const anchorNorms = new WeakMap<Float32Array, Float64Array>();
export function squaredNorms(a: Float32Array, m: number, d: number): Float64Array {
  const known = anchorNorms.get(a);
  if (known && known.length === m) return known;
  const out = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    let s = 0;
    for (let t = 0; t < d; t++) s += a[j * d + t] * a[j * d + t];
    out[j] = s;
  }
  anchorNorms.set(a, out);
  return out;
}

/**
 * Candidate scoring of the index search (scan.ts) under ip or cosine, for an index whose scorer
 * gives squared L2 to each candidate's reconstruction x̂: per query, the query the scorer takes
 * (cosine: scaled to unit length; then scaled to the anchors' largest length R, as the exact k-NN
 * above scales it), the anchor's L2 the scorer starts from (from the anchor's distance under the
 * metric), and the candidate's distance under the metric, from
 * ⟨q, x̂⟩ = (‖q‖² + ‖x̂‖² − ‖q − x̂‖²) / 2 (divided by the query's scale).
 * Why the scale: the scorers sum L2 in float32 parts (pq's tables) around ‖x̂‖²; a query far
 * shorter than the rows left the inner products' differences below float32's resolution there.
 */
export function metricScoring(metric: Exclude<Metric, 'l2'>, anchors: Float32Array, m: number, d: number, normSq: (id: number) => number) {
  const aa = squaredNorms(anchors, m, d);
  const cosine = metric === 'cosine';
  let r2 = 0;
  for (let j = 0; j < m; j++) if (aa[j] > r2) r2 = aa[j];
  return (query: Float32Array) => {
    const unit = cosine ? normalizeRows(Float32Array.from(query), 1, d) : query;
    let q2 = 0;
    for (let t = 0; t < d; t++) q2 += unit[t] * unit[t];
    const f = q2 > 0 && r2 > 0 ? Math.sqrt(r2 / q2) : 1;
    const q = f === 1 ? unit : unit.map((v) => v * f);
    let qq = 0;
    for (let t = 0; t < d; t++) qq += q[t] * q[t];
    return {
      query: q,
      /** Squared L2 from the (scaled) query to anchor j, whose distance under the metric is `anchorDist`. */
      anchorL2(j: number, anchorDist: number): number {
        const dot = f * (cosine ? -anchorDist * Math.sqrt(aa[j]) : -anchorDist);
        return qq + aa[j] - 2 * dot;
      },
      /** The distance under the metric of vector id, at squared L2 `l2` from the scaled query. */
      distance(id: number, l2: number): number {
        const xx = normSq(id);
        const dot = (qq + xx - l2) / (2 * f);
        if (!cosine) return -dot;
        return xx > 0 ? -dot / Math.sqrt(xx) : 0;
      },
    };
  };
}
