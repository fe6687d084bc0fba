// pq's projection (--pq-dims k, codecs/pq.ts): which k directions the codes cover, and the
// residuals' coordinates along them.
//
// The directions are the scaled residuals' k leading principal directions (pca.ts, on a
// sample), grouped into the M subspaces so that each subspace's product of variances is about
// the same (OPQ's eigenvalue allocation, Ge et al. 2013): with 8 bits per subspace whatever its
// dimensions, the error a subspace is left with grows with that product, and balancing it spreads
// the code bytes where the variance is. Within a subspace the directions keep descending variance.
import { Rng } from '../anneal/random.js';
import { sampleRows } from '../anneal/sample.js';
import { allocStore, f32ToF16, forEachF32Rows, rows, type Rows } from '../vectors/dataset.js';
import { projectRows } from '../codecs/linear.js';
import { leadingDirections } from './pca.js';
import { usableProjection } from '../codecs/pq.js';

/** Rows the principal directions are computed from: the d × d moment costs s·d²/2 multiply-adds. */
export const PCA_SAMPLE = 8192;

export interface Projection {
  /** k × d directions as stored (f16 bits), subspace by subspace. */
  half: Uint16Array;
  /** The same as decoders use them (usableProjection). */
  used: Float32Array;
}

/** The k directions for subspaces of bounds[t]..bounds[t+1] (subspaceBounds(k, M)), from a sample of `scaled`. */
export function trainProjection(scaled: Rows, k: number, bounds: Int32Array, seed: number): Projection {
  const { n, d } = scaled;
  const s = Math.min(n, PCA_SAMPLE);
  const picked = sampleRows(new Rng(seed ^ 0x5ca1ab1e), n, s);
  const sample = new Float32Array(s * d);
  picked.forEach((i, r) => sample.set(rows(scaled, i, i + 1) as Float32Array, r * d));
  const { vectors, values } = leadingDirections(sample, s, d, k, seed);
  const order = balancedOrder(values, bounds);
  const half = new Uint16Array(k * d);
  order.forEach((e, r) => {
    for (let j = 0; j < d; j++) half[r * d + j] = f32ToF16(vectors[e * d + j]);
  });
  return { half, used: usableProjection(half, k, d) };
}

/**
 * Direction indices (values descending) in stored order, dealt in rounds: each round gives every
 * subspace with room one direction, the largest left to the subspace whose log-product of
 * variances is smallest so far (ties: the lower subspace). Every subspace holds as many directions
 * as the others at a round's start, so the choice does not depend on the data's scale.
 */
export function balancedOrder(values: Float64Array, bounds: Int32Array): number[] {
  const M = bounds.length - 1;
  const floor = Math.max(values[0] ?? 0, 1e-300) * 1e-12; // a zero variance would make the product −∞
  const members: number[][] = Array.from({ length: M }, () => []);
  const logProduct = new Float64Array(M);
  for (let e = 0; e < values.length; ) {
    const open = members.map((_, t) => t).filter((t) => members[t].length < bounds[t + 1] - bounds[t]);
    open.sort((a, b) => logProduct[a] - logProduct[b] || a - b);
    for (const t of open) {
      if (e === values.length) break;
      members[t].push(e);
      logProduct[t] += Math.log(Math.max(values[e], floor));
      e++;
    }
  }
  return members.flat();
}

/** Each row's k coordinates along the directions (k × d, orthonormal), summed in f64: n × k f32 in fresh shared memory. */
export function project(x: Rows, P: Float32Array, k: number): Rows {
  const out: Rows = { n: x.n, d: k, ...allocStore(x.n, k, 'f32') };
  forEachF32Rows(x, 0, x.n, (v, c0, c1) => (rows(out, c0, c1) as Float32Array).set(projectRows(P, k, x.d, v, c1 - c0)));
  return out;
}
