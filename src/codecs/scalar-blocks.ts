// int8 / int4 over rows that come a block at a time (codecs/types.ts BlockEncoder): the
// same loops as encodeScalar (scalar-rows.ts), run on one block of the input after another, so
// the scales, the codes, their checksum and the error are those of the in-memory encoder, bit for
// bit. Stream blocks are whole encoder blocks (BLOCK_ROWS): the per-dimension sums are added in
// the same block order, and the error is summed block by block in row order as there, whatever
// order the stream's blocks come in. A large block runs on the encoder's threads (scalar.ts).
import { availableParallelism } from 'node:os';
import type { BlockEncoder } from './types.js';
import { BLOCK_ROWS, blockCodes, blockCrc, blockRanges, blocksOf, residualSample, type RowsInput } from './scalar-rows.js';
import { blocksOnThreads, CLIP_SAMPLE_ROWS, encoderThreadCount, LEVELS, PARALLEL_MIN_VALUES, ScalarResiduals, scalesOf, type ScalarMode } from './scalar.js';
import { crc32c, crc32cCombine } from '../io/vlc/crc32c.js';
import { allocCodes, packNibbles } from '../vectors/codes.js';
import type { Rows } from '../vectors/dataset.js';

/** Rows a stream block holds: a whole number of encoder blocks (4 × 16,384). */
export const STREAM_BLOCK_ROWS = 4 * BLOCK_ROWS;

/**
 * Encoder threads for a streamed block: on a large host more than an in-memory encode takes (its
 * reading threads and the GPUs' lanes leave most cores idle while the encoder runs), a few cores
 * left for the reading threads of the blocks in flight.
 */
function streamThreads(): number {
  return Math.max(encoderThreadCount(), Math.min(availableParallelism() - 8, 48));
}

export function scalarBlockEncoder(mode: ScalarMode, n: number, d: number, anchors: Float32Array): BlockEncoder {
  const blocks = blocksOf(n);
  const maxAbs = new Float64Array(blocks * d);
  const sumSq = new Float64Array(blocks * d);
  const L = LEVELS[mode];
  // Blocks of a stream may be encoded in any order (several at once): each encoder block's error is
  // kept in its place and summed in block order at the end, as encodeScalar sums them.
  const errs = new Float64Array(blocks);
  let scales: Float32Array | undefined;
  let encoded = 0;
  // The anchors in shared memory once, for the encoder threads.
  const sharedAnchors = new Float32Array(new SharedArrayBuffer(Math.max(1, anchors.length) * 4));
  sharedAnchors.set(anchors);
  const input = (x: Rows, assign: Uint32Array): RowsInput => ({ x, d, anchors, assign });
  const aligned = (r0: number) => {
    if (r0 % BLOCK_ROWS !== 0) throw new Error(`block encoder: rows from ${r0}, not a multiple of ${BLOCK_ROWS}`);
    return r0 / BLOCK_ROWS;
  };
  /** x's rows on the encoder threads when it is large and in shared memory (the same sums and codes as here). */
  const threadsFor = (x: Rows) => (x.n * d >= PARALLEL_MIN_VALUES && x.buffer instanceof SharedArrayBuffer ? streamThreads() : 1);
  const threaded = (x: Rows, assign: Uint32Array): RowsInput => {
    const a = new Uint32Array(new SharedArrayBuffer(Math.max(1, x.n) * 4));
    a.set(assign.subarray(0, x.n));
    return { x, d, anchors: sharedAnchors, assign: a };
  };
  /** The codes of x's rows (local numbering), each encoder block's error into errs from block b0, and their checksum. */
  const codesOf = async (x: Rows, assign: Uint32Array, b0: number | undefined) => {
    const codes = allocCodes<Int8Array>('i8', x.n, d, true);
    const t = threadsFor(x);
    const local = blocksOf(x.n);
    const crcs = new Float64Array(local);
    const inp = t > 1 ? threaded(x, assign) : input(x, assign);
    const here = (b: number) => {
      const e = blockCodes(inp, x.n, b, scales!, L, codes);
      crcs[b] = blockCrc(codes, x.n, b);
      return e;
    };
    const e = await blocksOnThreads(inp, x.n, t, { phase: 'codes', scales, levels: L, codes: codes.handle() }, here, crcs);
    if (b0 !== undefined) errs.set(e, b0);
    return { codes, crcs };
  };
  return {
    async scan(x, r0, assign) {
      const b0 = aligned(r0);
      const local = blocksOf(x.n);
      const t = threadsFor(x);
      if (t === 1) {
        const inp = input(x, assign);
        for (let b = 0; b < local; b++) blockRanges(inp, x.n, b, maxAbs.subarray(b0 * d), sumSq.subarray(b0 * d));
        return;
      }
      // The threads write each encoder block's figures into shared memory of the block's own.
      const mx = new Float64Array(new SharedArrayBuffer(local * d * 8));
      const sq = new Float64Array(new SharedArrayBuffer(local * d * 8));
      const inp = threaded(x, assign);
      const here = (b: number) => (blockRanges(inp, x.n, b, mx, sq), 0); // a block of one encoder block stays on this thread
      await blocksOnThreads(inp, x.n, t, { phase: 'ranges', maxAbs: mx.buffer as SharedArrayBuffer, sumSq: sq.buffer as SharedArrayBuffer }, here);
      maxAbs.set(mx, b0 * d);
      sumSq.set(sq, b0 * d);
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
    async encode(x, r0, assign) {
      const { codes, crcs } = await codesOf(x, assign, aligned(r0));
      encoded += x.n;
      if (mode === 'int4') {
        const bytes = concat(packNibbles(codes));
        return { bytes, crc: crc32c(bytes) };
      }
      // int8: the codes' checksum from their encoder blocks' (computed while the codes were in cache).
      let crc = 0;
      for (let b = 0; b < crcs.length; b++) crc = crc32cCombine(crc, crcs[b], (Math.min(x.n, (b + 1) * BLOCK_ROWS) - b * BLOCK_ROWS) * d);
      return { bytes: concat(codes.bytePieces()), crc };
    },
    residualEnergy: () => {
      if (encoded !== n) throw new Error(`block encoder: ${encoded} of ${n} rows encoded`);
      let err = 0;
      for (let b = 0; b < blocks; b++) err += errs[b];
      return err / n;
    },
    residualsOf: async (x, assign) => new ScalarResiduals(mode, x.n, d, scales!, (await codesOf(x, assign, undefined)).codes),
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
