// The row loops of the scalar residual codec (scalar.ts), in fixed blocks of rows so that the
// result does not depend on how many threads run them: per block, the per-dimension largest
// |residual| and sum of squares, then the codes and the block's squared reconstruction error. The
// caller combines blocks in block order (maxima are order-free; the sums are added block by block),
// so one thread and sixteen write the same bytes. scalar-worker.ts runs them on worker threads.

/** Rows per block: the unit of work and of summation. */
export const BLOCK_ROWS = 16384;

export interface RowsInput {
  x: Float32Array<ArrayBufferLike>;
  d: number;
  anchors: Float32Array<ArrayBufferLike>;
  assign: Uint32Array<ArrayBufferLike>;
}

/** Block b's per-dimension max |r| into maxAbs[b·d ..] and Σ r² into sumSq[b·d ..] (r = x − anchor). */
export function blockRanges(inp: RowsInput, n: number, b: number, maxAbs: Float64Array, sumSq: Float64Array): void {
  const { x, d, anchors, assign } = inp;
  const o = b * d;
  for (let i = b * BLOCK_ROWS, end = Math.min(n, i + BLOCK_ROWS); i < end; i++) {
    const a = assign[i] * d, row = i * d;
    for (let k = 0; k < d; k++) {
      const r = x[row + k] - anchors[a + k];
      const ar = r < 0 ? -r : r;
      if (ar > maxAbs[o + k]) maxAbs[o + k] = ar;
      sumSq[o + k] += r * r;
    }
  }
}

/**
 * Block b's codes q = clamp(round(r / s), −L, L) (0 where s = 0), and its squared error against the
 * reconstruction as a decoder holds it: f32(anchor + s·q).
 */
export function blockCodes(inp: RowsInput, n: number, b: number, scales: Float32Array, L: number, codes: Int8Array): number {
  const { x, d, anchors, assign } = inp;
  let err = 0;
  for (let i = b * BLOCK_ROWS, end = Math.min(n, i + BLOCK_ROWS); i < end; i++) {
    const a = assign[i] * d, row = i * d;
    for (let k = 0; k < d; k++) {
      const s = scales[k];
      const xv = x[row + k], av = anchors[a + k];
      let q = s === 0 ? 0 : Math.round((xv - av) / s);
      q = q > L ? L : q < -L ? -L : q;
      codes[row + k] = q;
      const e = xv - Math.fround(av + s * q);
      err += e * e;
    }
  }
  return err;
}

export const blocksOf = (n: number): number => Math.ceil(n / BLOCK_ROWS);
