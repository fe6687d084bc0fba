// The 'ec' section's bytes: a header (steps, models), an offset table, and blocks of rows each
// decodable alone — so decoding runs block by block on any number of threads (or GPU warps) and a
// row is reached by decoding its block only. A block's bytes depend on its rows and the models
// alone: the same for any thread count.
//
// Section payload, little-endian:
//   u32 layout version (1), u32 rows per block (1 .. 2^20), u32 scale bits S (8 .. 16),
//   u32 model bytes B
//   d × f32 steps (finite, ≥ 0; 0: the dimension is not coded and decodes to its anchor)
//   d × f32 offsets c_k (0 ≤ c_k ≤ step_k / 2; 0 where not coded): the levels q ≠ 0 move c_k toward 0
//   B model bytes (model.ts), zero padding to a multiple of 4
//   ⌈n / rows per block⌉ × u32 block sizes
//   the blocks, in row order. A block of r rows codes r × (coded dimensions) symbols, row-major:
//     32 × u32 lane states (rans.ts), u32 word count W, u32 escape bytes E,
//     W × u16 words, E escape bytes (zigzag LEB128 codes, in symbol order), zero padding to 4
import { LANES, RansError, RansModels, ransDecode, ransEncode } from './rans.js';
import { MAX_CODE, VarintReader, VarintWriter, readModels, type Alphabet } from './model.js';

export const LAYOUT_VERSION = 1;
export const DEFAULT_BLOCK_ROWS = 4096;
const MAX_BLOCK_ROWS = 2 ** 20;
const HEAD_BYTES = 16;
const BLOCK_HEAD = 4 * LANES + 8;
const align4 = (x: number) => (x + 3) & ~3;

/** A block's bytes: its rows' codes q (rows × dims, coded dimensions in order) under the models. */
export function encodeBlock(q: Int32Array, rows: number, alpha: Alphabet, models: RansModels): Uint8Array {
  const dims = alpha.lo.length, count = rows * dims;
  const sym = new Uint16Array(count);
  const esc = new VarintWriter();
  for (let t = 0, k = 0; t < count; t++) {
    const v = q[t] - alpha.lo[k];
    if (v >= 0 && v < alpha.size[k]) sym[t] = v;
    else {
      sym[t] = alpha.size[k];
      esc.int(q[t]);
    }
    if (++k === dims) k = 0;
  }
  const { states, words } = count ? ransEncode(sym, count, dims, models) : { states: new Uint32Array(LANES).fill(2 ** 16), words: new Uint16Array(0) };
  const escBytes = esc.bytes();
  const size = align4(BLOCK_HEAD + 2 * words.length + escBytes.length);
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  for (let l = 0; l < LANES; l++) v.setUint32(4 * l, states[l], true);
  v.setUint32(4 * LANES, words.length, true);
  v.setUint32(4 * LANES + 4, escBytes.length, true);
  for (let i = 0; i < words.length; i++) v.setUint16(BLOCK_HEAD + 2 * i, words[i], true);
  out.set(escBytes, BLOCK_HEAD + 2 * words.length);
  return out;
}

/**
 * Decodes the block at bytes[at .. at + size) of `rows` rows into out[0 .. rows × dims) (the codes
 * q). `fail(what)` builds the error for a block that is not one the encoder wrote.
 */
export function decodeBlock(
  bytes: Uint8Array, at: number, size: number, rows: number, alpha: Alphabet, models: RansModels,
  out: Int32Array, fail: (what: string) => Error,
): void {
  if (size < BLOCK_HEAD) throw fail(`${size} bytes, shorter than its ${BLOCK_HEAD}-byte head`);
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, size);
  const states = new Float64Array(LANES);
  for (let l = 0; l < LANES; l++) states[l] = v.getUint32(4 * l, true);
  const W = v.getUint32(4 * LANES, true), E = v.getUint32(4 * LANES + 4, true);
  if (align4(BLOCK_HEAD + 2 * W + E) !== size) throw fail(`${W} words and ${E} escape bytes do not make its ${size} bytes`);
  for (let i = BLOCK_HEAD + 2 * W + E; i < size; i++) if (bytes[at + i] !== 0) throw fail('padding is not zero');
  const dims = alpha.lo.length, count = rows * dims;
  try {
    ransDecode(bytes, at + BLOCK_HEAD, W, states, count, dims, models, out);
  } catch (e) {
    if (e instanceof RansError) throw fail(e.message);
    throw e;
  }
  const r = new VarintReader(bytes, at + BLOCK_HEAD + 2 * W, at + BLOCK_HEAD + 2 * W + E, (what) => fail(`escape bytes: ${what}`));
  const { lo, size: A } = alpha;
  for (let t = 0, k = 0; t < count; t++) {
    const s = out[t];
    if (s === A[k]) {
      const q = r.int();
      if (q >= lo[k] && q < lo[k] + A[k]) throw fail(`escaped code ${q} of dimension ${k} is inside its alphabet`);
      if (Math.abs(q) > MAX_CODE) throw fail(`escaped code ${q} is beyond ±2^24`);
      out[t] = q;
    } else out[t] = s + lo[k];
    if (++k === dims) k = 0;
  }
  if (r.at !== r.end) throw fail(`${r.end - r.at} escape bytes left over`);
}

/** Everything of a section but its blocks' contents. */
export interface EcLayout {
  blockRows: number;
  scaleBits: number;
  /** d steps (f32; 0: not coded). */
  steps: Float32Array;
  /** d offsets toward 0 of the levels q ≠ 0 (f32; residuals.ts). */
  offsets: Float32Array;
  /** The coded dimensions, ascending (those with a step > 0). */
  dims: Int32Array;
  alpha: Alphabet;
  models: RansModels;
  /** Block b is payload[blockAt[b] .. blockAt[b + 1]). */
  blockAt: Float64Array;
}

/** The section payload's pieces: header, steps, models, offset table, then the blocks. */
export function writeSection(blockRows: number, scaleBits: number, steps: Float32Array, offsets: Float32Array, modelBytes: Uint8Array, blocks: Uint8Array[]): Uint8Array[] {
  const d = steps.length;
  const head = new Uint8Array(HEAD_BYTES + 8 * d + align4(modelBytes.length) + 4 * blocks.length);
  const v = new DataView(head.buffer);
  v.setUint32(0, LAYOUT_VERSION, true);
  v.setUint32(4, blockRows, true);
  v.setUint32(8, scaleBits, true);
  v.setUint32(12, modelBytes.length, true);
  for (let k = 0; k < d; k++) v.setFloat32(HEAD_BYTES + 4 * k, steps[k], true);
  for (let k = 0; k < d; k++) v.setFloat32(HEAD_BYTES + 4 * d + 4 * k, offsets[k], true);
  head.set(modelBytes, HEAD_BYTES + 8 * d);
  const table = HEAD_BYTES + 8 * d + align4(modelBytes.length);
  blocks.forEach((b, i) => v.setUint32(table + 4 * i, b.length, true));
  return [head, ...blocks];
}

/** Bytes of a section whose models take `modelBytes` and whose blocks take `blockBytes` in all. */
export function sectionBytes(d: number, blocks: number, modelBytes: number, blockBytes: number): number {
  return HEAD_BYTES + 8 * d + align4(modelBytes) + 4 * blocks + blockBytes;
}

/** Reads and checks a section's header, models and offset table (the blocks are checked as they decode). */
export function readSection(payload: Uint8Array, n: number, d: number, corrupt: (what: string) => Error): EcLayout {
  if (payload.length < HEAD_BYTES + 8 * d) throw corrupt(`payload of ${payload.length} bytes is shorter than its ${HEAD_BYTES + 8 * d}-byte header`);
  const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const version = v.getUint32(0, true);
  if (version !== LAYOUT_VERSION) throw corrupt(`layout version ${version} (this reader knows ${LAYOUT_VERSION})`);
  const blockRows = v.getUint32(4, true), scaleBits = v.getUint32(8, true), B = v.getUint32(12, true);
  if (blockRows < 1 || blockRows > MAX_BLOCK_ROWS) throw corrupt(`${blockRows} rows per block (1 to ${MAX_BLOCK_ROWS})`);
  if (scaleBits < 8 || scaleBits > 16) throw corrupt(`scale bits ${scaleBits} (8 to 16)`);
  const steps = new Float32Array(d);
  const dimList: number[] = [];
  for (let k = 0; k < d; k++) {
    const s = v.getFloat32(HEAD_BYTES + 4 * k, true);
    if (!(Number.isFinite(s) && s >= 0)) throw corrupt(`step of dimension ${k} is ${s} (must be finite and >= 0)`);
    steps[k] = s;
    if (s > 0) dimList.push(k);
  }
  const offsets = new Float32Array(d);
  for (let k = 0; k < d; k++) {
    const c = v.getFloat32(HEAD_BYTES + 4 * d + 4 * k, true);
    if (!(c >= 0 && c <= steps[k] / 2)) throw corrupt(`offset of dimension ${k} is ${c} (0 to half its step ${steps[k]})`);
    offsets[k] = c;
  }
  const mAt = HEAD_BYTES + 8 * d;
  const blocks = Math.ceil(n / blockRows);
  const table = mAt + align4(B);
  if (table + 4 * blocks > payload.length) throw corrupt(`${B} model bytes and ${blocks} block sizes run past the ${payload.length}-byte payload`);
  for (let i = mAt + B; i < table; i++) if (payload[i] !== 0) throw corrupt('padding after the models is not zero');
  const { alpha, models } = readModels(payload, mAt, mAt + B, dimList.length, scaleBits, corrupt);
  const blockAt = new Float64Array(blocks + 1);
  blockAt[0] = table + 4 * blocks;
  for (let b = 0; b < blocks; b++) {
    const s = v.getUint32(table + 4 * b, true);
    if (s < BLOCK_HEAD || s % 4 !== 0) throw corrupt(`block ${b} has ${s} bytes (a multiple of 4, at least ${BLOCK_HEAD})`);
    blockAt[b + 1] = blockAt[b] + s;
  }
  if (blockAt[blocks] !== payload.length) throw corrupt(`the blocks take ${blockAt[blocks] - blockAt[0]} bytes but ${payload.length - blockAt[0]} follow the table`);
  return { blockRows, scaleBits, steps, offsets, dims: Int32Array.from(dimList), alpha, models, blockAt };
}
