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
import { dot, orthonormalize } from '../codecs/linear.js';

/** Block iterations: enough for the span of a decaying spectrum's leading directions to settle. */
const ITERATIONS = 24;
/** Extra block columns: the span's last directions converge with the ratio λ_{k+8}/λ_k, not λ_{k+1}/λ_k. */
const OVERSAMPLE = 8;

export interface Directions {
  /** k × d, orthonormal rows, largest variance first. */
  vectors: Float64Array;
  /** The variance along each (k, descending). */
  values: Float64Array;
}

/** The k leading principal directions (uncentred: of the second moment) of s × d rows. */
export function leadingDirections(rows: Float32Array, s: number, d: number, k: number, seed: number): Directions {
  if (!(k >= 1 && k <= d)) throw new Error(`leadingDirections: k = ${k}, d = ${d} allows 1..${d}`);
  const C = secondMoment(rows, s, d);
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
  const { values, vectors: W } = symmetricEigen(H, b);
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

function secondMoment(rows: Float32Array, s: number, d: number): Float64Array {
  const C = new Float64Array(d * d);
  for (let r = 0; r < s; r++) {
    const o = r * d;
    for (let i = 0; i < d; i++) {
      const v = rows[o + i];
      if (v === 0) continue;
      const ci = i * d;
      for (let j = i; j < d; j++) C[ci + j] += v * rows[o + j];
    }
  }
  for (let i = 0; i < d; i++)
    for (let j = i; j < d; j++) {
      C[i * d + j] /= Math.max(1, s);
      C[j * d + i] = C[i * d + j];
    }
  return C;
}

/** Rows of V (b × d) times the symmetric C: (C v_i) for each row. */
function multiply(C: Float64Array, V: Float64Array, b: number, d: number): Float64Array {
  const out = new Float64Array(b * d);
  for (let i = 0; i < b; i++) for (let r = 0; r < d; r++) out[i * d + r] = dot(C, r * d, V, i * d, d);
  return out;
}


/** Eigen-decomposition of a small symmetric n × n matrix by cyclic Jacobi: values, and vectors as columns. */
export function symmetricEigen(A0: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const A = Float64Array.from(A0);
  const V = new Float64Array(n * n);
  for (let i = 0; i < n; i++) V[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
    if (off <= 1e-30 * (1 + trace2(A, n))) break;
    for (let p = 0; p < n; p++)
      for (let q = p + 1; q < n; q++) {
        const apq = A[p * n + q];
        if (apq === 0) continue;
        const theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const sn = t * c;
        for (let k = 0; k < n; k++) {
          const akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - sn * akq;
          A[k * n + q] = sn * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - sn * aqk;
          A[q * n + k] = sn * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = V[k * n + p], vkq = V[k * n + q];
          V[k * n + p] = c * vkp - sn * vkq;
          V[k * n + q] = sn * vkp + c * vkq;
        }
      }
  }
  return { values: Float64Array.from({ length: n }, (_, i) => A[i * n + i]), vectors: V };
}

function trace2(A: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += A[i * n + i] * A[i * n + i];
  return s;
}
