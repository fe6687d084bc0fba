// The fake driver's emulation of cuda/knn.cu (exact k-NN): the same lists as the kernels write,
// from the same rules — per (query, chunk) the chunk's rows in id order, each entering the sorted
// list only strictly below its k-th distance; then per query the chunks' entries by (distance, id).

/** knn_scan: queries 0..nq−1 (QT transposed, nqPad columns) × `chunks` chunks of chunkRows rows of X. */
export function knnScan(
  nqPad: number, nq: number, chunks: number, nb: number, d: number, k: number, chunkRows: number,
  QT: Float32Array, X: Float32Array, partD: Float32Array, partI: Int32Array,
): void {
  const q = new Float32Array(d);
  for (let qi = 0; qi < nq; qi++) {
    for (let c = 0; c < d; c++) q[c] = QT[c * nqPad + qi];
    for (let ch = 0; ch < chunks; ch++) {
      const list: Array<[number, number]> = [];
      for (let r = ch * chunkRows; r < Math.min(nb, (ch + 1) * chunkRows); r++) {
        // fmaf(t, t, s): t² is exact in a double and the sum rounded twice (an ulp off the fused op in rare halfway cases).
        let s = 0;
        for (let c = 0; c < d; c++) {
          const t = Math.fround(q[c] - X[r * d + c]);
          s = Math.fround(s + t * t);
        }
        if (list.length === k && !(s < list[k - 1][0])) continue;
        let p = list.length;
        while (p > 0 && list[p - 1][0] > s) p--;
        list.splice(p, 0, [s, r]);
        if (list.length > k) list.pop();
      }
      const o = (qi * chunks + ch) * k;
      for (let p = 0; p < k; p++) [partD[o + p], partI[o + p]] = p < list.length ? list[p] : [Infinity, -1];
    }
  }
}

/** knn_merge: per query the chunks' lists (chunks × k, id −1 = empty) into its k, by (distance, id). */
export function knnMerge(
  nq: number, chunks: number, k: number, partD: Float32Array, partI: Int32Array, outD: Float32Array, outI: Int32Array,
): void {
  for (let qi = 0; qi < nq; qi++) {
    const all: Array<[number, number]> = [];
    for (let e = qi * chunks * k; e < (qi + 1) * chunks * k; e++) if (partI[e] >= 0) all.push([partD[e], partI[e]]);
    all.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (let p = 0; p < k; p++) [outD[qi * k + p], outI[qi * k + p]] = p < all.length ? all[p] : [Infinity, -1];
  }
}
