// The little linear algebra pq's projection needs on both sides: the decoder makes the stored
// directions orthonormal (codecs/pq.ts usableProjection) and projects queries and anchors onto
// them (the search's tables); the trainer (codec-train/pca.ts) finds them. Plain f64 loops in a
// fixed order: the same input gives the same bits everywhere.

/** Rows made orthonormal in place, in order (modified Gram–Schmidt, twice for f64 accuracy); a row that vanishes becomes the first unit axis the earlier rows leave room for. */
export function orthonormalize(V: Float64Array, rows: number, d: number): void {
  for (let r = 0; r < rows; r++) {
    removeEarlier(V, r, d);
    let n = Math.sqrt(dot(V, r * d, V, r * d, d));
    for (let axis = 0; !(n > 1e-8) && axis < d; axis++) {
      V.fill(0, r * d, (r + 1) * d);
      V[r * d + axis] = 1;
      removeEarlier(V, r, d);
      n = Math.sqrt(dot(V, r * d, V, r * d, d));
    }
    for (let i = 0; i < d; i++) V[r * d + i] /= n;
  }
}

/** Row r less its components along rows 0..r-1 (two passes). */
function removeEarlier(V: Float64Array, r: number, d: number): void {
  for (let pass = 0; pass < 2; pass++)
    for (let p = 0; p < r; p++) {
      const c = dot(V, r * d, V, p * d, d);
      for (let i = 0; i < d; i++) V[r * d + i] -= c * V[p * d + i];
    }
}

/** rows × D: each of `rows` d-dim rows of x along the D directions of P (D × d), each sum in f64 over k in order, rounded to f32. */
export function projectRows(P: Float32Array, D: number, d: number, x: Float32Array, rows: number): Float32Array {
  return projectInto(P, D, d, x, rows, new Float32Array(rows * D));
}

/**
 * projectRows into `out` (rows × D), f32 or f64 values alike: each sum in f64 over k in order from
 * 0, then stored (rounded once into f32; as it is into f64: ec's principal directions, rotation.ts).
 */
export function projectInto<T extends Float32Array | Float64Array>(P: Float32Array | Float64Array, D: number, d: number, x: Float32Array | Float64Array, rows: number, out: T): T {
  for (let i = 0; i < rows; i++) {
    const o = i * d;
    let r = 0;
    for (; r + 4 <= D; r += 4) { // four directions per pass over the row: each sum keeps its order
      const p0 = r * d, p1 = p0 + d, p2 = p1 + d, p3 = p2 + d;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let k = 0; k < d; k++) {
        const v = x[o + k];
        s0 += v * P[p0 + k];
        s1 += v * P[p1 + k];
        s2 += v * P[p2 + k];
        s3 += v * P[p3 + k];
      }
      out[i * D + r] = s0;
      out[i * D + r + 1] = s1;
      out[i * D + r + 2] = s2;
      out[i * D + r + 3] = s3;
    }
    for (; r < D; r++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += x[o + k] * P[r * d + k];
      out[i * D + r] = s;
    }
  }
  return out;
}

export function dot(a: Float64Array, ao: number, b: Float64Array, bo: number, d: number): number {
  let s = 0;
  for (let i = 0; i < d; i++) s += a[ao + i] * b[bo + i];
  return s;
}
