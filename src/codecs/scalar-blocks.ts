// int8 / int4 over rows that come a block at a time (codecs/types.ts BlockEncoder): the
// same loops as encodeScalar (scalar-rows.ts), run on one block of the input after another, so
// the scales, the codes, their checksum and the error are those of the in-memory encoder, bit for
// bit. Stream blocks are whole encoder blocks (BLOCK_ROWS): the per-dimension sums are added in
// the same block order, and the error is summed block by block in row order as there, whatever
// order the stream's blocks come in. Each block's loops run where the caller says
// (ScalarBlockDevice: a GPU's kernels, or hostScalarBlocks below, on the encoder's threads for a
// large block), the same bytes either way.
import { availableParallelism } from 'node:os';
import type { BlockEncoder, ResidualInput, ScalarBlockDevice } from './types.js';
import { BLOCK_ROWS, blockCodes, blockCrc, blockRanges, blocksOf, residualSample, type RowsInput } from './scalar-rows.js';
import { blocksOnThreads, CLIP_SAMPLE_ROWS, encoderThreadCount, LEVELS, PARALLEL_MIN_VALUES, ScalarResiduals, scalarRowBytes, scalesOf, type ScalarMode } from './scalar.js';
import { crc32c, crc32cCombine } from '../io/vlc/crc32c.js';
import { allocCodes, packNibbles } from '../vectors/codes.js';
import { takeShared } from '../io/prefault.js';
import { asRows, type Rows } from '../vectors/dataset.js';

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

/** The rows of a ResidualInput as RowsInput, in shared memory when threads are to read them. */
function blockInput(input: ResidualInput, t: number): RowsInput {
  const x = asRows(input.x, input.n, input.d);
  if (t === 1) return { x, d: input.d, anchors: input.anchors, assign: input.assign instanceof Uint32Array ? input.assign : Uint32Array.from(input.assign) };
  const shared = <T extends Float32Array | Uint32Array>(Type: { new (b: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, v: ArrayLike<number>): T => {
    if ((v as T).buffer instanceof SharedArrayBuffer && (v as T).byteOffset === 0) return v as T;
    const out = new Type(new SharedArrayBuffer(Math.max(1, v.length) * Type.BYTES_PER_ELEMENT));
    out.set(v);
    return out;
  };
  const assign = input.assign instanceof Uint32Array ? input.assign.subarray(0, input.n) : Uint32Array.from(input.assign);
  return { x, d: input.d, anchors: shared(Float32Array, input.anchors), assign: shared(Uint32Array, assign) };
}

/** Threads for a block: the encoder's when it is large and in shared memory (the same sums and codes as one). */
const threadsFor = (input: ResidualInput) => {
  const x = asRows(input.x, input.n, input.d);
  return input.n * input.d >= PARALLEL_MIN_VALUES && x.buffer instanceof SharedArrayBuffer ? streamThreads() : 1;
};

/** The host's loops over a stream block, on the encoder's threads when it is large: backend/host.ts's, and a GPU's fallback. */
export const hostScalarBlocks: ScalarBlockDevice = {
  async scalarRanges(input) {
    const { n, d } = input;
    const t = threadsFor(input);
    const inp = blockInput(input, t);
    const local = blocksOf(n);
    const maxAbs = new Float64Array(new SharedArrayBuffer(Math.max(1, local * d) * 8));
    const sumSq = new Float64Array(new SharedArrayBuffer(Math.max(1, local * d) * 8));
    const here = (b: number) => (blockRanges(inp, n, b, maxAbs, sumSq), 0);
    await blocksOnThreads(inp, n, t, { phase: 'ranges', maxAbs: maxAbs.buffer as SharedArrayBuffer, sumSq: sumSq.buffer as SharedArrayBuffer }, here);
    return { maxAbs: maxAbs.subarray(0, local * d), sumSq: sumSq.subarray(0, local * d) };
  },
  async scalarCodes(input, scales, L) {
    const { n, d } = input;
    const t = threadsFor(input);
    const inp = blockInput(input, t);
    const codes = allocCodes<Int8Array>('i8', n, d, true, takeShared(Math.max(1, n * d))); // touched ahead when the caller asked (scratchBytes)
    const crcs = new Float64Array(blocksOf(n));
    const here = (b: number) => {
      const e = blockCodes(inp, n, b, scales, L, codes);
      crcs[b] = blockCrc(codes, n, b);
      return e;
    };
    const blockErrs = await blocksOnThreads(inp, n, t, { phase: 'codes', scales, levels: L, codes: codes.handle() }, here, crcs);
    // The codes' checksum from their encoder blocks' (computed while each block's codes were in cache).
    let crc = 0;
    for (let b = 0; b < crcs.length; b++) crc = crc32cCombine(crc, crcs[b], (Math.min(n, (b + 1) * BLOCK_ROWS) - b * BLOCK_ROWS) * d);
    return { codes, blockErrs, crc };
  },
};

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
  const input = (x: Rows, assign: Uint32Array): ResidualInput => ({ x, n: x.n, d, anchors: sharedAnchors, assign });
  const aligned = (r0: number) => {
    if (r0 % BLOCK_ROWS !== 0) throw new Error(`block encoder: rows from ${r0}, not a multiple of ${BLOCK_ROWS}`);
    return r0 / BLOCK_ROWS;
  };
  return {
    async scan(x, r0, assign, device) {
      const b0 = aligned(r0);
      const got = await device.scalarRanges(input(x, assign));
      maxAbs.set(got.maxAbs, b0 * d);
      sumSq.set(got.sumSq, b0 * d);
    },
    finish(sample) {
      let clip: Float64Array | undefined;
      if (mode === 'int4') {
        // residualSample's rows: ⌊j·n/s⌋ for j < s, read here, then taken in turn.
        const s = Math.min(n, CLIP_SAMPLE_ROWS);
        const list = Array.from({ length: s }, (_, j) => Math.floor((j * n) / s));
        const got = sample(list);
        clip = residualSample({ x: got.x, d, anchors, assign: got.assign }, s, s);
      }
      scales = scalesOf(mode, n, d, blocks, maxAbs, sumSq, clip);
    },
    head: () => new Uint8Array(Float32Array.from(scales!).buffer),
    codesBytes: n * scalarRowBytes(mode, d),
    scratchBytes: (rows) => rows * d, // int8 codes, before int4 packs them
    async encode(x, r0, assign, device) {
      const b0 = aligned(r0);
      const { codes, blockErrs, crc } = await device.scalarCodes(input(x, assign), scales!, L);
      errs.set(blockErrs, b0);
      encoded += x.n;
      if (mode === 'int4') {
        const pieces = packNibbles(codes);
        return { pieces, crc: pieces.reduce((c, p) => crc32cCombine(c, crc32c(p), p.length), 0) };
      }
      // The codes' own pieces, not one copy of them: a stream block of 16.8M rows is 2.1 GB of int8 codes.
      return { pieces: codes.bytePieces(), crc };
    },
    residualEnergy: () => {
      if (encoded !== n) throw new Error(`block encoder: ${encoded} of ${n} rows encoded`);
      let err = 0;
      for (let b = 0; b < blocks; b++) err += errs[b];
      return err / n;
    },
    residualsOf: async (x, assign) => new ScalarResiduals(mode, x.n, d, scales!, (await hostScalarBlocks.scalarCodes(input(x, assign), scales!, L)).codes),
  };
}
