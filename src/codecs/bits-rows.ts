// The row loop of the bits codec's encoder (bits-train.ts), one block of rows at a time (the blocks
// of scalar-rows.ts) so that the bytes and the error sum do not depend on how many threads run it:
// scalar-worker.ts runs it on the encoder's worker threads.
import { forEachF32Rows } from '../vectors/dataset.js';
import type { Codes } from '../vectors/codes.js';
import { levelOffset } from './bits.js';
import { BLOCK_ROWS, type RowsInput } from './scalar-rows.js';

/** What every block needs: the bits and steps chosen, and the code bytes of a row. */
export interface BitsPlan {
  bits: Uint8Array;
  steps: Float32Array;
  R: number;
}

/**
 * Block b's codes, packed into `codes` (n × R bytes, zeroed, in pieces), and its squared error against the
 * reconstruction as a decoder holds it, f32(anchor + s·(q − o)): per row the uncoded dimensions,
 * then the coded ones, the rows in order.
 */
export function blockBits(inp: RowsInput, n: number, b: number, plan: BitsPlan, codes: Codes<Uint8Array>): number {
  const { d, anchors, assign } = inp;
  const { bits, steps, R } = plan;
  // Only the coded dimensions are quantized; the others decode to the anchor.
  const coded: number[] = [];
  bits.forEach((v, k) => v > 0 && coded.push(k));
  const offsets = Float64Array.from(bits, levelOffset);
  const tops = Float64Array.from(bits, (v) => (1 << v) - 1);
  let sum = 0;
  forEachF32Rows(inp.x, b * BLOCK_ROWS, Math.min(n, (b + 1) * BLOCK_ROWS), (v, r0, r1) => {
    for (let i = r0; i < r1; i++) {
      const a = assign[i] * d, o = (i - r0) * d, dst = codes.piece(i), row = codes.pieceStart(i);
      let rowErr = 0;
      for (let k = 0; k < d; k++) {
        if (bits[k] !== 0) continue;
        const e = v[o + k] - anchors[a + k];
        rowErr += e * e;
      }
      let bit = 0;
      for (let c = 0; c < coded.length; c++) {
        const k = coded[c], s = steps[k], off = offsets[k], xv = v[o + k], av = anchors[a + k];
        let q = Math.round((xv - av) / s) + off;
        q = q < 0 ? 0 : q > tops[k] ? tops[k] : q;
        const e = xv - Math.fround(av + s * (q - off));
        rowErr += e * e;
        const at = row + (bit >> 3), sh = bit & 7, w = q << sh;
        dst[at] |= w & 0xff;
        if (sh + bits[k] > 8) dst[at + 1] |= w >> 8;
        bit += bits[k];
      }
      sum += rowErr;
    }
  });
  return sum;
}
