// The leading principal directions of a set of rows, for pq's projection (codecs/pq.ts, --pq-dims):
// the k orthonormal directions along which the rows' second moment is largest. Plain f64
// arithmetic in a fixed order, so the same rows give the same directions on every machine.
//
// Method: the d × d second-moment matrix C = RᵀR / s is formed once, then a block of k + 8 random
// directions is multiplied by C and re-orthonormalized (subspace iteration) until the block spans
// the leading directions; a last Rayleigh–Ritz step (Jacobi on the small block matrix) turns the
// block into directions sorted by their variance. Only the span needs to be good — pq codes the
// residual's projection on it — so a few dozen iterations suffice even where eigenvalues cluster.
import { Rng } from '../anneal/random.js';
import { jacobiEigen, secondMomentMatrix, type JacobiRule } from '../codecs/eigen.js';
import { dot, orthonormalize } from '../codecs/linear.js';

/** Block iterations: enough for the span of a decaying spectrum's leading directions to settle. */
const ITERATIONS = 24;
/** Extra block columns: the span's last directions converge with the ratio λ_{k+8}/λ_k, not λ_{k+1}/λ_k. */
const OVERSAMPLE = 8;
/** The Rayleigh–Ritz step's Jacobi: to f64's last bits on the small block matrix (it is b × b, cheap). */
const RITZ_JACOBI: JacobiRule = { sweeps: 100, tolerance: 1e-30, shift: 1 };

export interface Directions {
  /** k × d, orthonormal rows, largest variance first. */
  vectors: Float64Array;
  /** The variance along each (k, descending). */
  values: Float64Array;
}

/** The k leading principal directions (uncentred: of the second moment) of s × d rows. */
export function leadingDirections(rows: Float32Array, s: number, d: number, k: number, seed: number): Directions {
  if (!(k >= 1 && k <= d)) throw new Error(`leadingDirections: k = ${k}, d = ${d} allows 1..${d}`);
  const C = secondMomentMatrix(rows, s, d);
  const b = Math.min(d, k + OVERSAMPLE);
  const rng = new Rng(seed);
  let V: Float64Array = new Float64Array(b * d);
  for (let i = 0; i < V.length; i++) V[i] = rng.next() - 0.5;
  orthonormalize(V, b, d);
  for (let it = 0; it < ITERATIONS; it++) {
    V = multiply(C, V, b, d);
    orthonormalize(V, b, d);
  }
  // Rayleigh–Ritz: the block's own d×d-free eigenproblem H = Vᵀ C V (b × b).
  const CV = multiply(C, V, b, d);
  const H = new Float64Array(b * b);
  for (let i = 0; i < b; i++) for (let j = 0; j < b; j++) H[i * b + j] = dot(V, i * d, CV, j * d, d);
  const { values, vectors: W } = jacobiEigen(H, b, RITZ_JACOBI);
  const order = Array.from({ length: b }, (_, i) => i).sort((x, y) => values[y] - values[x] || x - y);
  const out = new Float64Array(k * d);
  const vals = new Float64Array(k);
  for (let r = 0; r < k; r++) {
    const e = order[r];
    vals[r] = Math.max(0, values[e]);
    for (let i = 0; i < b; i++) {
      const w = W[i * b + e];
      for (let c = 0; c < d; c++) out[r * d + c] += w * V[i * d + c];
    }
  }
  orthonormalize(out, k, d);
  return { vectors: out, values: vals };
}

/** Rows of V (b × d) times the symmetric C: (C v_i) for each row. */
function multiply(C: Float64Array, V: Float64Array, b: number, d: number): Float64Array {
  const out = new Float64Array(b * d);
  for (let i = 0; i < b; i++) for (let r = 0; r < d; r++) out[i * d + r] = dot(C, r * d, V, i * d, d);
  return out;
}

