// int8 / int4 over rows that come a block at a time (codecs/types.ts BlockEncoder): the
// same loops as encodeScalar (scalar-rows.ts), run on one block of the input after another, so
// the scales, the codes, their checksum and the error are those of the in-memory encoder, bit for
// bit. Stream blocks are whole encoder blocks (BLOCK_ROWS): the per-dimension sums are added in
// the same block order, and the error is summed block by block in row order as there.
import type { BlockEncoder } from './types.js';
import { BLOCK_ROWS, blockCodes, blockRanges, blocksOf, residualSample, type RowsInput } from './scalar-rows.js';
import { CLIP_SAMPLE_ROWS, LEVELS, ScalarResiduals, scalesOf, type ScalarMode } from './scalar.js';
import { allocCodes, packNibbles } from '../vectors/codes.js';
import type { Rows } from '../vectors/dataset.js';

/** Rows a stream block holds: a whole number of encoder blocks (4 × 16,384). */
export const STREAM_BLOCK_ROWS = 4 * BLOCK_ROWS;

export function scalarBlockEncoder(mode: ScalarMode, n: number, d: number, anchors: Float32Array): BlockEncoder {
  const blocks = blocksOf(n);
  const maxAbs = new Float64Array(blocks * d);
  const sumSq = new Float64Array(blocks * d);
  const L = LEVELS[mode];
  let scales: Float32Array | undefined;
  let err = 0;
  let encoded = 0;
  const input = (x: Rows, assign: Uint32Array): RowsInput => ({ x, d, anchors, assign });
  const aligned = (r0: number) => {
    if (r0 % BLOCK_ROWS !== 0) throw new Error(`block encoder: rows from ${r0}, not a multiple of ${BLOCK_ROWS}`);
    return r0 / BLOCK_ROWS;
  };
  /** The codes of x's rows (local numbering), and the error of each of its encoder blocks added to `err`. */
  const codesOf = (x: Rows, assign: Uint32Array, count: boolean) => {
    const codes = allocCodes<Int8Array>('i8', x.n, d, false);
    const inp = input(x, assign);
    for (let b = 0; b < blocksOf(x.n); b++) {
      const e = blockCodes(inp, x.n, b, scales!, L, codes);
      if (count) err += e;
    }
    return codes;
  };
  return {
    scan(x, r0, assign) {
      const b0 = aligned(r0);
      const inp = input(x, assign);
      for (let b = 0; b < blocksOf(x.n); b++) blockRanges(inp, x.n, b, maxAbs.subarray(b0 * d), sumSq.subarray(b0 * d));
    },
    finish(sample) {
      let clip: Float64Array | undefined;
      if (mode === 'int4') {
        // residualSample's rows: ⌊j·n/s⌋ for j < s, read here, then taken in turn.
        const s = Math.min(n, CLIP_SAMPLE_ROWS);
        const list = Array.from({ length: s }, (_, j) => Math.floor((j * n) / s));
        const got = sample(list);
        clip = residualSample(input(got.x, got.assign), s, s);
      }
      scales = scalesOf(mode, n, d, blocks, maxAbs, sumSq, clip);
    },
    head: () => new Uint8Array(Float32Array.from(scales!).buffer),
    encode(x, r0, assign) {
      aligned(r0);
      const codes = codesOf(x, assign, true);
      encoded += x.n;
      return concat(mode === 'int8' ? codes.bytePieces() : packNibbles(codes));
    },
    residualEnergy: () => {
      if (encoded !== n) throw new Error(`block encoder: ${encoded} of ${n} rows encoded`);
      return err / n;
    },
    residualsOf: (x, assign) => new ScalarResiduals(mode, x.n, d, scales!, codesOf(x, assign, false)),
  };
}

function concat(pieces: Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  // (a block is far below the view limit: more than one piece only when tests shrink it)
  const out = new Uint8Array(pieces.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
