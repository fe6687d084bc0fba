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
import { projectInto } from '../linear.js';

/** Directions (k × d, f64) rounded to f16 as the section stores them, and back: what both sides project with. */
export function asStored(vectors: Float64Array): { f16: Uint16Array; values: Float64Array } {
  const f16 = Uint16Array.from(vectors, (v) => f32ToF16(v));
  return { f16, values: Float64Array.from(f16, (h) => f16ToF32(h)) };
}

/** y = P r for each sample row (rows × d) and the k × d directions P: rows × k, f64, sums in k-order of d. */
export function projectSample(sample: Float64Array, d: number, P: Float64Array, k: number): Float64Array {
  const rows = d ? sample.length / d : 0;
  return projectInto(P, k, d, sample, rows, new Float64Array(rows * k));
}
