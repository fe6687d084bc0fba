// The 'ec' codec's principal directions: the residual's d × d second-moment matrix C = RᵀR / s of a
// sample, fully diagonalized (../eigen.ts symmetricEigenFull: Householder tridiagonalization, then
// the implicit QL iteration), its eigenvectors sorted by eigenvalue, largest first.
// Coding the residual's coordinates along them instead of along the axes is what reverse
// water-filling on the covariance's eigenvalues (rather than on the per-dimension variances)
// assumes: correlated residuals (image pixels) put their energy in few directions.
//
// Plain f64 arithmetic in a fixed order, Math.sqrt only (correctly rounded everywhere): the same
// sample gives the same directions on every machine. The stored directions are f16 (blocks.ts); the
// encoder projects with the f16 values as stored, so encoder and decoder agree bit for bit.
import { f16ToF32, f32ToF16 } from '../../vectors/dataset.js';

/** Directions (k × d, f64) rounded to f16 as the section stores them, and back: what both sides project with. */
export function asStored(vectors: Float64Array): { f16: Uint16Array; values: Float64Array } {
  const f16 = Uint16Array.from(vectors, (v) => f32ToF16(v));
  return { f16, values: Float64Array.from(f16, (h) => f16ToF32(h)) };
}

/** y = P r for each sample row (rows × d) and the k × d directions P: rows × k, f64, sums in k-order of d. */
export function projectSample(sample: Float64Array, d: number, P: Float64Array, k: number): Float64Array {
  const rows = d ? sample.length / d : 0;
  const out = new Float64Array(rows * k);
  projectRows(sample, rows, d, P, k, out);
  return out;
}

/**
 * y[u·k + c] = Σ_j P[c·d + j] · r[u·d + j] for the first `rows` rows of r, each sum in f64 from j = 0
 * up (the encoder's and the sample's projection, the same bits): four rows at a time, each row's sum
 * its own, so a direction is read once for four rows and four independent sums run at once.
 */
export function projectRows(r: Float64Array, rows: number, d: number, P: Float64Array, k: number, y: Float64Array): void {
  let u = 0;
  for (; u + 4 <= rows; u += 4) {
    const a = u * d, b = a + d, c2 = b + d, e = c2 + d;
    for (let c = 0; c < k; c++) {
      const p = c * d;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let j = 0; j < d; j++) {
        const w = P[p + j];
        s0 += w * r[a + j];
        s1 += w * r[b + j];
        s2 += w * r[c2 + j];
        s3 += w * r[e + j];
      }
      const o = u * k + c;
      y[o] = s0;
      y[o + k] = s1;
      y[o + 2 * k] = s2;
      y[o + 3 * k] = s3;
    }
  }
  for (; u < rows; u++) {
    const a = u * d;
    for (let c = 0; c < k; c++) {
      const p = c * d;
      let s = 0;
      for (let j = 0; j < d; j++) s += P[p + j] * r[a + j];
      y[u * k + c] = s;
    }
  }
}
