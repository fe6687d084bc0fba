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
//   (layout version 2, principal directions: rotation.ts) the residual is coded along k directions
//   instead of the d axes — after the 16 bytes above (version 2), u32 k (1 .. d), u32 0, then
//   k × d f16 directions (row c: coordinate c's unit direction, |p| ≤ 1), zero padding to 4, then
//   as version 1 with k in place of d (k steps, k offsets, codes of the k coordinates); a vector's
//   residual is Σ_c ŷ_c · p_c, the coordinates' decoded values ŷ_c times their directions.
//     32 × u32 lane states (rans.ts), u32 word count W, u32 escape bytes E,
//     W × u16 words, E escape bytes (zigzag LEB128 codes, in symbol order), zero padding to 4
import { LANES, RansError, RansModels, ransDecode, ransEncode } from './rans.js';
import { f16ToF32 } from '../../vectors/dataset.js';
import { MAX_CODE, VarintReader, VarintWriter, readModels, type Alphabet } from './model.js';

export const LAYOUT_VERSION = 1;
/** The layout of a section coded along principal directions. */
export const ROTATED_LAYOUT_VERSION = 2;
export const DEFAULT_BLOCK_ROWS = 4096;
const MAX_BLOCK_ROWS = 2 ** 20;
const HEAD_BYTES = 16;
const ROTATED_HEAD_BYTES = 24;
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
 * The block head's word count W and escape bytes E, checked against the block's size and its zero
 * padding (the lane states are the decoder's to check).
 */
export function blockHead(bytes: Uint8Array, at: number, size: number, fail: (what: string) => Error): { W: number; E: number } {
  if (size < BLOCK_HEAD) throw fail(`${size} bytes, shorter than its ${BLOCK_HEAD}-byte head`);
  const v = new DataView(bytes.buffer, bytes.byteOffset + at + 4 * LANES, 8);
  const W = v.getUint32(0, true), E = v.getUint32(4, true);
  // Compared before align4, whose 32-bit arithmetic would wrap a damaged count of 2^31 words back into range.
  const used = BLOCK_HEAD + 2 * W + E;
  if (used > size || align4(used) !== size) throw fail(`${W} words and ${E} escape bytes do not make its ${size} bytes`);
  for (let i = BLOCK_HEAD + 2 * W + E; i < size; i++) if (bytes[at + i] !== 0) throw fail('padding is not zero');
  return { W, E };
}

/**
 * Decodes the block at bytes[at .. at + size) of `rows` rows into out[0 .. rows × dims) (the codes
 * q): the reference decoder (readers use fast-decode.ts, held to this one by the tests). `fail(what)` builds the error for a block that is not one the encoder wrote.
 */
export function decodeBlock(
  bytes: Uint8Array, at: number, size: number, rows: number, alpha: Alphabet, models: RansModels,
  out: Int32Array, fail: (what: string) => Error,
): void {
  const { W, E } = blockHead(bytes, at, size, fail);
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, size);
  const states = new Float64Array(LANES);
  for (let l = 0; l < LANES; l++) states[l] = v.getUint32(4 * l, true);
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
/** The directions a rotated section codes along: k × d, f16 as stored and their values. */
export interface EcRotation {
  k: number;
  f16: Uint16Array;
  values: Float32Array;
}

export interface EcLayout {
  /** Present: the coordinates coded are along these directions (steps, offsets, dims index them). */
  rotation?: EcRotation;
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

/** Bytes before the models: the header, the directions (rotated), steps and offsets of the D coordinates. */
function preModelBytes(d: number, rotatedK?: number): number {
  return rotatedK === undefined ? HEAD_BYTES + 8 * d : ROTATED_HEAD_BYTES + align4(2 * rotatedK * d) + 8 * rotatedK;
}

/** The section payload's pieces: header, (directions,) steps, models, offset table, then the blocks. */
export function writeSection(
  blockRows: number, scaleBits: number, steps: Float32Array, offsets: Float32Array, modelBytes: Uint8Array, blocks: Uint8Array[],
  rotation?: EcRotation,
): Uint8Array[] {
  const D = steps.length, d = rotation ? rotation.f16.length / Math.max(1, rotation.k) : D;
  const pre = preModelBytes(d, rotation ? D : undefined);
  const head = new Uint8Array(pre + align4(modelBytes.length) + 4 * blocks.length);
  const v = new DataView(head.buffer);
  v.setUint32(0, rotation ? ROTATED_LAYOUT_VERSION : LAYOUT_VERSION, true);
  v.setUint32(4, blockRows, true);
  v.setUint32(8, scaleBits, true);
  v.setUint32(12, modelBytes.length, true);
  let at = HEAD_BYTES;
  if (rotation) {
    v.setUint32(16, rotation.k, true);
    v.setUint32(20, 0, true);
    at = ROTATED_HEAD_BYTES;
    for (let i = 0; i < rotation.f16.length; i++) v.setUint16(at + 2 * i, rotation.f16[i], true);
    at += align4(2 * rotation.f16.length);
  }
  for (let k = 0; k < D; k++) v.setFloat32(at + 4 * k, steps[k], true);
  for (let k = 0; k < D; k++) v.setFloat32(at + 4 * D + 4 * k, offsets[k], true);
  head.set(modelBytes, pre);
  const table = pre + align4(modelBytes.length);
  blocks.forEach((b, i) => v.setUint32(table + 4 * i, b.length, true));
  return [head, ...blocks];
}

/** Bytes of a section whose models take `modelBytes` and whose blocks take `blockBytes` in all (rotatedK: coded along that many directions). */
export function sectionBytes(d: number, blocks: number, modelBytes: number, blockBytes: number, rotatedK?: number): number {
  return preModelBytes(d, rotatedK) + align4(modelBytes) + 4 * blocks + blockBytes;
}

/**
 * The bytes of a section's header, models and offset table (all that readSection reads): from its
 * first 24 bytes, unchecked (readSection checks them; a damaged field gives a length readSection
 * refuses), at most `total`, the payload's length.
 */
export function sectionHeadBytes(first: Uint8Array, total: number, n: number, d: number): number {
  if (first.length < ROTATED_HEAD_BYTES) return Math.min(total, first.length);
  const v = new DataView(first.buffer, first.byteOffset, ROTATED_HEAD_BYTES);
  const blockRows = v.getUint32(4, true), B = v.getUint32(12, true);
  const rotated = v.getUint32(0, true) === ROTATED_LAYOUT_VERSION;
  const k = rotated ? Math.min(d, Math.max(1, v.getUint32(16, true))) : undefined;
  const blocks = Math.ceil(n / Math.max(1, blockRows));
  // Number arithmetic: a damaged B near 2^32 would wrap align4's 32-bit rounding negative.
  return Math.min(total, preModelBytes(d, k) + Math.ceil(B / 4) * 4 + 4 * blocks);
}

/**
 * Reads and checks a section's header, models and offset table (the blocks are checked as they
 * decode). `payload`: the section's first bytes, at least sectionHeadBytes of them (the whole
 * payload, or its head when the blocks stay where they lie); `total`: the payload's length.
 */
export function readSection(payload: Uint8Array, n: number, d: number, corrupt: (what: string) => Error, total = payload.length): EcLayout {
  if (total < HEAD_BYTES) throw corrupt(`payload of ${total} bytes is shorter than its ${HEAD_BYTES}-byte header`);
  const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const version = v.getUint32(0, true);
  if (version !== LAYOUT_VERSION && version !== ROTATED_LAYOUT_VERSION) throw corrupt(`layout version ${version} (this reader knows ${LAYOUT_VERSION} and ${ROTATED_LAYOUT_VERSION})`);
  const blockRows = v.getUint32(4, true), scaleBits = v.getUint32(8, true), B = v.getUint32(12, true);
  if (blockRows < 1 || blockRows > MAX_BLOCK_ROWS) throw corrupt(`${blockRows} rows per block (1 to ${MAX_BLOCK_ROWS})`);
  if (scaleBits < 8 || scaleBits > 16) throw corrupt(`scale bits ${scaleBits} (8 to 16)`);
  let rotation: EcRotation | undefined;
  let at = HEAD_BYTES, D = d;
  if (version === LAYOUT_VERSION && total < preModelBytes(d)) throw corrupt(`payload of ${total} bytes is shorter than its ${preModelBytes(d)}-byte header`);
  if (version === ROTATED_LAYOUT_VERSION) {
    if (total < ROTATED_HEAD_BYTES) throw corrupt(`payload of ${total} bytes is shorter than its ${ROTATED_HEAD_BYTES}-byte header`);
    const k = v.getUint32(16, true);
    if (k < 1 || k > d) throw corrupt(`${k} directions (1 to ${d})`);
    if (v.getUint32(20, true) !== 0) throw corrupt('reserved word is not zero');
    if (total < preModelBytes(d, k)) throw corrupt(`payload of ${total} bytes is shorter than its ${preModelBytes(d, k)}-byte header`);
    const f16 = new Uint16Array(k * d), values = new Float32Array(k * d);
    for (let i = 0; i < k * d; i++) {
      const h = v.getUint16(ROTATED_HEAD_BYTES + 2 * i, true), p = f16ToF32(h);
      if (!(Math.abs(p) <= 1)) throw corrupt(`direction ${Math.floor(i / d)} has a component ${p} (within ±1)`);
      f16[i] = h;
      values[i] = p;
    }
    for (let i = ROTATED_HEAD_BYTES + 2 * k * d; i < ROTATED_HEAD_BYTES + align4(2 * k * d); i++) if (payload[i] !== 0) throw corrupt('padding after the directions is not zero');
    rotation = { k, f16, values };
    at = ROTATED_HEAD_BYTES + align4(2 * k * d);
    D = k;
  }
  const steps = new Float32Array(D);
  const dimList: number[] = [];
  for (let k = 0; k < D; k++) {
    const s = v.getFloat32(at + 4 * k, true);
    if (!(Number.isFinite(s) && s >= 0)) throw corrupt(`step of dimension ${k} is ${s} (must be finite and >= 0)`);
    steps[k] = s;
    if (s > 0) dimList.push(k);
  }
  const offsets = new Float32Array(D);
  for (let k = 0; k < D; k++) {
    const c = v.getFloat32(at + 4 * D + 4 * k, true);
    if (!(c >= 0 && c <= steps[k] / 2)) throw corrupt(`offset of dimension ${k} is ${c} (0 to half its step ${steps[k]})`);
    offsets[k] = c;
  }
  const mAt = at + 8 * D;
  const blocks = Math.ceil(n / blockRows);
  const table = mAt + align4(B);
  if (table + 4 * blocks > total) throw corrupt(`${B} model bytes and ${blocks} block sizes run past the ${total}-byte payload`);
  for (let i = mAt + B; i < table; i++) if (payload[i] !== 0) throw corrupt('padding after the models is not zero');
  const { alpha, models } = readModels(payload, mAt, mAt + B, dimList.length, scaleBits, corrupt);
  const blockAt = new Float64Array(blocks + 1);
  blockAt[0] = table + 4 * blocks;
  for (let b = 0; b < blocks; b++) {
    const s = v.getUint32(table + 4 * b, true);
    if (s < BLOCK_HEAD || s % 4 !== 0) throw corrupt(`block ${b} has ${s} bytes (a multiple of 4, at least ${BLOCK_HEAD})`);
    blockAt[b + 1] = blockAt[b] + s;
  }
  if (blockAt[blocks] !== total) throw corrupt(`the blocks take ${blockAt[blocks] - blockAt[0]} bytes but ${total - blockAt[0]} follow the table`);
  return { ...(rotation ? { rotation } : {}), blockRows, scaleBits, steps, offsets, dims: Int32Array.from(dimList), alpha, models, blockAt };
}
