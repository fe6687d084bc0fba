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
  let i = 0;
  for (; i + 2 <= rows; i += 2) {
    // Two rows by four directions per pass: eight sums, each its own in k order, six loads for eight products.
    const o = i * d, q = o + d, u0 = i * D, u1 = u0 + D;
    let r = 0;
    for (; r + 4 <= D; r += 4) {
      const p0 = r * d, p1 = p0 + d, p2 = p1 + d, p3 = p2 + d;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      for (let k = 0; k < d; k++) {
        const v = x[o + k], w = x[q + k];
        const a = P[p0 + k], b = P[p1 + k], c = P[p2 + k], e = P[p3 + k];
        s0 += v * a;
        s1 += v * b;
        s2 += v * c;
        s3 += v * e;
        t0 += w * a;
        t1 += w * b;
        t2 += w * c;
        t3 += w * e;
      }
      (out[u0 + r] = s0), (out[u0 + r + 1] = s1), (out[u0 + r + 2] = s2), (out[u0 + r + 3] = s3);
      (out[u1 + r] = t0), (out[u1 + r + 1] = t1), (out[u1 + r + 2] = t2), (out[u1 + r + 3] = t3);
    }
    for (; r < D; r++) {
      let s = 0, t = 0;
      for (let k = 0; k < d; k++) (s += x[o + k] * P[r * d + k]), (t += x[q + k] * P[r * d + k]);
      (out[u0 + r] = s), (out[u1 + r] = t);
    }
  }
  for (; i < rows; i++) {
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
