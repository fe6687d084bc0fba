// The symmetric eigensolvers (src/codecs/eigen.ts): Householder + QL (ec's principal directions),
// cyclic Jacobi with vectors (pq's projection, codec-train/pca.ts) and without (pq's predicted
// error, codec-registry/pq.ts), and the second-moment matrix they are given.
import { describe, expect, it } from 'vitest';
import { jacobiEigen, jacobiEigenvalues, secondMomentMatrix, symmetricEigenFull } from '../../dist/codecs/eigen.js';
import { rng } from '../rng.js';

/** A random symmetric positive semi-definite n × n matrix B Bᵀ. */
function gram(n: number, seed: number): Float64Array {
  const r = rng(seed);
  const B = Float64Array.from({ length: n * n }, () => r() - 0.5);
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let k = 0; k < n; k++) A[i * n + j] += B[i * n + k] * B[j * n + k];
  return A;
}

const RULE = { sweeps: 100, tolerance: 1e-30, shift: 1 };

describe('symmetric eigensolvers', () => {
  it('QL: A v = λ v, orthonormal vectors, values descending', () => {
    for (const n of [1, 2, 5, 40]) {
      const A = gram(n, 7 + n);
      const { values, vectors } = symmetricEigenFull(A, n);
      for (let e = 0; e < n; e++) {
        if (e > 0) expect(values[e]).toBeLessThanOrEqual(values[e - 1]);
        for (let i = 0; i < n; i++) {
          let av = 0;
          for (let j = 0; j < n; j++) av += A[i * n + j] * vectors[e * n + j];
          expect(av).toBeCloseTo(values[e] * vectors[e * n + i], 9);
        }
        for (let f = 0; f < n; f++) {
          let dot = 0;
          for (let j = 0; j < n; j++) dot += vectors[e * n + j] * vectors[f * n + j];
          expect(dot).toBeCloseTo(e === f ? 1 : 0, 9);
        }
      }
    }
  });

  it('Jacobi diagonalizes a symmetric matrix (vectors as columns), leaving it as it was', () => {
    const n = 7;
    const rand = rng(3);
    const A = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) A[i * n + j] = A[j * n + i] = rand() - 0.5;
    const before = Float64Array.from(A);
    const { values, vectors: V } = jacobiEigen(A, n, RULE);
    expect(A).toEqual(before);
    for (let e = 0; e < n; e++)
      for (let i = 0; i < n; i++) {
        let av = 0;
        for (let j = 0; j < n; j++) av += A[i * n + j] * V[j * n + e];
        expect(av).toBeCloseTo(values[e] * V[i * n + e], 10);
      }
  });

  it('Jacobi values alone: the known ones, and bit for bit those found with vectors', () => {
    const ev = Array.from(jacobiEigenvalues(Float64Array.of(2, 1, 0, 1, 2, 0, 0, 0, 5), 3, RULE)).sort((a, b) => a - b);
    expect(ev[0]).toBeCloseTo(1, 9);
    expect(ev[1]).toBeCloseTo(3, 9);
    expect(ev[2]).toBeCloseTo(5, 9);
    const A = gram(12, 5);
    expect(jacobiEigenvalues(A, 12, RULE)).toEqual(jacobiEigen(A, 12, RULE).values);
  });

  it('Jacobi and QL agree on the spectrum', () => {
    const n = 16;
    const A = gram(n, 11);
    const jac = Array.from(jacobiEigenvalues(A, n, { sweeps: 60, tolerance: 1e-24, shift: 0 })).sort((a, b) => b - a);
    const ql = symmetricEigenFull(A, n).values;
    for (let e = 0; e < n; e++) expect(jac[e]).toBeCloseTo(ql[e], 10);
  });

  it('second moments: the mean of r rᵀ, each entry the rows\' products summed in row order (four rows at a time, zeros and −0 among them), the same from f32 rows as from their f64 values', () => {
    const s = 11, d = 5;
    const r = rng(2);
    const rows = Float32Array.from({ length: s * d }, () => (r() < 0.1 ? -0 : r() < 0.2 ? 0 : r() - 0.5));
    const C = secondMomentMatrix(rows, s, d);
    expect(secondMomentMatrix(Float64Array.from(rows), s, d)).toEqual(C);
    for (let i = 0; i < d; i++)
      for (let j = 0; j < d; j++) {
        let m = 0;
        for (let t = 0; t < s; t++) m += rows[t * d + i] * rows[t * d + j];
        expect(C[i * d + j]).toBe(m / s);
      }
    expect(secondMomentMatrix(new Float32Array(0), 0, d)).toEqual(new Float64Array(d * d));
  });
});
