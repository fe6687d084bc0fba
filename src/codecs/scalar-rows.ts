// The row loops of the scalar residual codec (scalar.ts), in fixed blocks of rows so that the
// result does not depend on how many threads run them: per block, the per-dimension largest
// |residual| and sum of squares, then the codes and the block's squared reconstruction error. The
// caller combines blocks in block order (maxima are order-free; the sums are added block by block),
// so one thread and sixteen write the same bytes. scalar-worker.ts runs them on worker threads.
import { forEachF32Rows, rowsF32, type Rows } from '../vectors/dataset.js';
import { crc32c } from '../io/vlc/crc32c.js';
import type { Codes } from '../vectors/codes.js';

/** Rows per block: the unit of work and of summation. */
export const BLOCK_ROWS = 16384;

/** Rows [b·BLOCK_ROWS, ...) of block b, in f32 views: f(view, first row, end row). */
function forBlock(inp: RowsInput, n: number, b: number, f: (v: Float32Array, c0: number, c1: number) => void): void {
  forEachF32Rows(inp.x, b * BLOCK_ROWS, Math.min(n, (b + 1) * BLOCK_ROWS), f);
}

export interface RowsInput {
  /** The vectors (any size, f32 or f16), read in views of at most a view's worth of rows. */
  x: Rows;
  d: number;
  anchors: Float32Array<ArrayBufferLike>;
  assign: Uint32Array<ArrayBufferLike>;
}

/** Block b's per-dimension max |r| into maxAbs[b·d ..] and Σ r² into sumSq[b·d ..] (r = x − anchor). */
export function blockRanges(inp: RowsInput, n: number, b: number, maxAbs: Float64Array, sumSq: Float64Array): void {
  const { d, anchors, assign } = inp;
  const o = b * d;
  forBlock(inp, n, b, (x, c0, c1) => {
    for (let i = c0; i < c1; i++) {
      const a = assign[i] * d, row = (i - c0) * d;
      for (let k = 0; k < d; k++) {
        const r = x[row + k] - anchors[a + k];
        const ar = r < 0 ? -r : r;
        if (ar > maxAbs[o + k]) maxAbs[o + k] = ar;
        sumSq[o + k] += r * r;
      }
    }
  });
}

/**
 * Block b's codes q = clamp(round(r / s), −L, L) (0 where s = 0), and its squared error against the
 * reconstruction as a decoder holds it: f32(anchor + s·q), summed per row, then the rows in order
 * (so a GPU, one thread per row, makes the same sums: cuda/residual.cu).
 */
export function blockCodes(inp: RowsInput, n: number, b: number, scales: Float32Array, L: number, codes: Codes<Int8Array>): number {
  const { d, anchors, assign } = inp;
  let err = 0;
  forBlock(inp, n, b, (x, c0, c1) => {
    for (let i = c0; i < c1; i++) {
      const a = assign[i] * d, row = (i - c0) * d, dst = codes.piece(i), out = codes.pieceStart(i);
      let rowErr = 0;
      for (let k = 0; k < d; k++) {
        const s = scales[k];
        const xv = x[row + k], av = anchors[a + k];
        let q = s === 0 ? 0 : Math.round((xv - av) / s);
        q = q > L ? L : q < -L ? -L : q;
        dst[out + k] = q;
        const e = xv - Math.fround(av + s * q);
        rowErr += e * e;
      }
      err += rowErr;
    }
  });
  return err;
}

export const blocksOf = (n: number): number => Math.ceil(n / BLOCK_ROWS);

/**
 * The residuals r = x − anchor of `rows` rows spread evenly over the n (row ⌊j·n/rows⌋ for j <
 * rows), row after row, as the encoder computes them (f32 values subtracted in f64): the sample on
 * which scalesOf chooses int4's clip. Only row indices decide it, so every encoder (CPU threads, GPU)
 * chooses the same scales.
 */
export function residualSample(inp: RowsInput, n: number, rows: number): Float64Array {
  const { d, anchors, assign } = inp;
  const s = Math.min(n, rows);
  const out = new Float64Array(s * d);
  for (let j = 0; j < s; j++) {
    const i = Math.floor((j * n) / s);
    const x = rowsF32(inp.x, i, i + 1);
    const a = assign[i] * d;
    for (let k = 0; k < d; k++) out[j * d + k] = x[k] - anchors[a + k];
  }
  return out;
}

/** CRC32C of block b's codes (its rows' bytes, over the pieces that hold them): the int8 section's checksum is combined from these (scalar.ts). */
export function blockCrc(codes: Codes<Int8Array>, n: number, b: number): number {
  const r0 = b * BLOCK_ROWS, r1 = Math.min(n, r0 + BLOCK_ROWS);
  let crc = 0;
  codes.forEachRun(r0, r1, (bytes) => (crc = crc32c(bytes, crc)));
  return crc;
}
