// Symmetric eigenproblems, one copy for the codecs and their trainers (below both, so that ec's
// principal directions, pq's projection and pq's predicted error import it alike):
//  - symmetricEigenFull: every eigenpair of a d × d matrix, by Householder tridiagonalization then
//    the implicit QL iteration (EISPACK's tred2 / tql2, as JAMA writes them) — ec's directions;
//  - jacobiEigen / jacobiEigenvalues: cyclic Jacobi rotations on a small matrix, each caller with its
//    own stopping rule (JacobiRule) — pq's projection (the Rayleigh–Ritz step of codec-train/pca.ts)
//    and pq's predicted error (codec-registry/pq.ts). The two methods (and the two rules) round
//    differently in the last bits, and those bits reach the files (stored directions) and the
//    codec choice, so each caller keeps its own.
// Plain f64 arithmetic in a fixed order, Math.sqrt only (correctly rounded everywhere): the same
// matrix gives the same bits on every machine.

/** Mean of r rᵀ over s rows (s × d, row-major): d × d, symmetric, summed in f64 in row order. */
export function secondMomentMatrix(rows: Float32Array | Float64Array, s: number, d: number): Float64Array {
  const C = new Float64Array(d * d);
  // Four rows at a time (C read and written once for the four): each entry still adds its rows'
  // products in row order. A row whose value is 0 adds ±0 here where the one-row loop skips it: the
  // same sum, as a sum of finite values that starts at +0 is never −0.
  let r = 0;
  for (; r + 4 <= s; r += 4) {
    const o0 = r * d, o1 = o0 + d, o2 = o1 + d, o3 = o2 + d;
    for (let i = 0; i < d; i++) {
      const v0 = rows[o0 + i], v1 = rows[o1 + i], v2 = rows[o2 + i], v3 = rows[o3 + i];
      if (v0 === 0 && v1 === 0 && v2 === 0 && v3 === 0) continue;
      const ci = i * d;
      for (let j = i; j < d; j++) C[ci + j] = C[ci + j] + v0 * rows[o0 + j] + v1 * rows[o1 + j] + v2 * rows[o2 + j] + v3 * rows[o3 + j];
    }
  }
  for (; r < s; r++) {
    const o = r * d;
    for (let i = 0; i < d; i++) {
      const v = rows[o + i];
      if (v === 0) continue;
      const ci = i * d;
      for (let j = i; j < d; j++) C[ci + j] += v * rows[o + j];
    }
  }
  const div = Math.max(1, s);
  for (let i = 0; i < d; i++)
    for (let j = i; j < d; j++) {
      C[i * d + j] /= div;
      C[j * d + i] = C[i * d + j];
    }
  return C;
}

/** When cyclic Jacobi stops: after `sweeps`, or once Σ_{p<q} a_pq² <= tolerance · (shift + Σ_p a_pp²), or is 0. */
export interface JacobiRule {
  sweeps: number;
  tolerance: number;
  shift: number;
}

/** Eigen-decomposition of a small symmetric n × n matrix (not changed) by cyclic Jacobi: values in diagonal order, vectors as columns. */
export function jacobiEigen(A: Float64Array, n: number, rule: JacobiRule): { values: Float64Array; vectors: Float64Array } {
  const V = new Float64Array(n * n);
  for (let i = 0; i < n; i++) V[i * n + i] = 1;
  return { values: jacobi(Float64Array.from(A), n, rule, V), vectors: V };
}

/** jacobiEigen's values alone (no vectors accumulated). */
export function jacobiEigenvalues(A: Float64Array, n: number, rule: JacobiRule): Float64Array {
  return jacobi(Float64Array.from(A), n, rule);
}

/** Rotates A (in place) to diagonal, and V's columns with it when given; returns the diagonal. */
function jacobi(A: Float64Array, n: number, rule: JacobiRule, V?: Float64Array): Float64Array {
  for (let sweep = 0; sweep < rule.sweeps; sweep++) {
    let off = 0, diag = 0;
    for (let p = 0; p < n; p++) {
      diag += A[p * n + p] * A[p * n + p];
      for (let q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
    }
    if (off <= rule.tolerance * (rule.shift + diag) || off === 0) break;
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
        if (V)
          for (let k = 0; k < n; k++) {
            const vkp = V[k * n + p], vkq = V[k * n + q];
            V[k * n + p] = c * vkp - sn * vkq;
            V[k * n + q] = sn * vkp + c * vkq;
          }
      }
  }
  return Float64Array.from({ length: n }, (_, i) => A[i * n + i]);
}

/**
 * Eigen-decomposition of the symmetric n × n matrix A (row-major; not changed): values descending,
 * vectors as rows (vectors[i·n ..] is the unit eigenvector of values[i]).
 */
export function symmetricEigenFull(A: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const V = Float64Array.from(A);
  const d = new Float64Array(n), e = new Float64Array(n);
  if (n === 0) return { values: d, vectors: V };
  tred2(V, d, e, n);
  tql2(V, d, e, n);
  // V's columns are the eigenvectors, d their values (ascending after tql2): rows, descending.
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => d[b] - d[a] || a - b);
  const values = new Float64Array(n), vectors = new Float64Array(n * n);
  order.forEach((c, r) => {
    values[r] = d[c];
    for (let k = 0; k < n; k++) vectors[r * n + k] = V[k * n + c];
  });
  return { values, vectors };
}

function tred2(V: Float64Array, d: Float64Array, e: Float64Array, n: number): void {
  for (let j = 0; j < n; j++) d[j] = V[(n - 1) * n + j];
  for (let i = n - 1; i > 0; i--) {
    let scale = 0, h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = V[(i - 1) * n + j];
        V[i * n + j] = 0;
        V[j * n + i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        V[j * n + i] = f;
        g = e[j] + V[j * n + j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k * n + j] * d[k];
          e[k] += V[k * n + j] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        for (let k = j; k <= i - 1; k++) V[k * n + j] -= f * e[k] + g * d[k];
        d[j] = V[(i - 1) * n + j];
        V[i * n + j] = 0;
      }
    }
    d[i] = h;
  }
  for (let i = 0; i < n - 1; i++) {
    V[(n - 1) * n + i] = V[i * n + i];
    V[i * n + i] = 1;
    const h = d[i + 1];
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = V[k * n + i + 1] / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[k * n + i + 1] * V[k * n + j];
        for (let k = 0; k <= i; k++) V[k * n + j] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) V[k * n + i + 1] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = V[(n - 1) * n + j];
    V[(n - 1) * n + j] = 0;
  }
  V[(n - 1) * n + n - 1] = 1;
  e[0] = 0;
}

const hypot = (a: number, b: number) => Math.sqrt(a * a + b * b);

function tql2(V: Float64Array, d: Float64Array, e: Float64Array, n: number): void {
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0, tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]) <= eps * tst1) break;
      m++;
    }
    if (m === n) m = n - 1;
    if (m > l) {
      for (let iter = 0; iter < 100; iter++) {
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1, c2 = c, c3 = c, s = 0, s2 = 0;
        const el1 = e[l + 1];
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          for (let k = 0; k < n; k++) {
            const o = k * n;
            h = V[o + i + 1];
            V[o + i + 1] = s * V[o + i] + c * h;
            V[o + i] = c * V[o + i] - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
        if (!(Math.abs(e[l]) > eps * tst1)) break;
      }
    }
    d[l] += f;
    e[l] = 0;
  }
}
