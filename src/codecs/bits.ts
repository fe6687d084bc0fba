// Bit-allocated scalar residuals ('bits'): each dimension of the residual r = x − (anchor as
// stored) gets its own number of bits b_k (0 to 8) and its own step s_k, chosen on a sample so that
// the bits go where they remove the most error. Real data spend their variance unevenly (image
// borders that are always 0, a few busy dimensions): int4 gives every dimension 4 bits, this codec
// gives the quiet ones fewer and the busy ones more at the same size (measured on Fashion-MNIST
// against int4 and FAISS SQ4: bench/results/2026-11-26-bits.json).
//
//   code q_k ∈ [0, 2^b_k − 1],  r̂_k = s_k · (q_k − o_k),  o_k = 2^(b_k − 1) − 1   (b_k = 0: r̂_k = 0)
//   x̂_k = anchor_k + r̂_k, one f32 rounding (as the scalar codecs)
//
// The levels are the integers −o_k .. o_k + 1 times the step: 0 is one of them (many residuals are
// near 0 — the quiet dimensions, the pixels that are 0 — and a grid without 0 made every 1- and
// 2-bit dimension pay for it), one more level above than below. Choosing (codecs/bits-train.ts): for
// each dimension and each b, the step (2·range / (2^b − 1), the range a multiple of the dimension's
// RMS residual or its largest |r|) with the least error on the sample; then bits go, one or more at a
// time, to the dimension whose error they lower most per bit, until the code bytes are spent.
//
// Section payload ('RSDB', format version 3), little-endian:
//   u32 R (code bytes per vector), u32 0 (reserved)
//   d × u8 bits b_k (0..8, Σ b_k <= 8·R), zero padding to a multiple of 4
//   d × f32 steps s_k (finite, >= 0)
//   n × R bytes: vector i's codes, dimension after dimension, b_k bits each, least significant bit
//     first (bit j of the row is bit j % 8 of byte j / 8); the bits past Σ b_k are 0
import { asCodes, Codes } from '../vectors/codes.js';
import type { CodedResiduals, ResidualSection, SectionContext } from './types.js';
import { asPayload, Payload, type PayloadLike } from '../io/vlc/payload.js';
import { fixedRowBlocks } from './row-blocks.js';

const HEADER_BYTES = 8;
export const MAX_BITS = 8;
/** The code that stands for 0 with b bits: codes 0 .. 2^b − 1 are the levels −o .. 2^b − 1 − o. */
export const levelOffset = (b: number): number => (b === 0 ? 0 : (1 << (b - 1)) - 1);
const align4 = (x: number) => (x + 3) & ~3;

/** Section payload bytes for n vectors of d dims with R code bytes each. */
export function bitsPayloadBytes(n: number, d: number, R: number): number {
  return HEADER_BYTES + align4(d) + 4 * d + n * R;
}

export class BitsResiduals implements CodedResiduals {
  readonly mode = 'bits' as const;
  /** Per dimension: the code of level 0 (levelOffset). */
  private readonly half: Float64Array;
  /** Where each dimension's code starts in a row, in bits. */
  private readonly start: Int32Array;
  /** n × R bytes of packed codes, in pieces of whole rows (vectors/codes.ts). */
  readonly codes: Codes<Uint8Array>;

  constructor(
    readonly n: number,
    readonly d: number,
    /** Code bytes per vector. */
    readonly R: number,
    /** Bits per dimension (0..8). */
    readonly bits: Uint8Array,
    /** Step per dimension (f32). */
    readonly steps: Float32Array,
    /** The packed codes, or (small data) one array of them. */
    codes: Codes<Uint8Array> | Uint8Array,
    /** The payload's CRC32C when the encoder computed it (the GPU's, from the codes still on the device), else undefined. */
    readonly payloadCrc?: number,
  ) {
    this.codes = asCodes(codes, R, n);
    this.half = Float64Array.from(bits, levelOffset);
    this.start = new Int32Array(d);
    for (let k = 1; k < d; k++) this.start[k] = this.start[k - 1] + bits[k - 1];
  }

  /** Where each dimension's code starts in a row, in bits (a copy). */
  starts(): Int32Array {
    return this.start.slice();
  }

  /** Code of dimension k of vector i. */
  code(i: number, k: number): number {
    return this.codeIn(this.codes.piece(i), this.codes.pieceStart(i), k);
  }

  /** Code of dimension k of the row whose bytes start at `row` of `piece`. */
  private codeIn(piece: Uint8Array, row: number, k: number): number {
    const b = this.bits[k];
    if (b === 0) return 0;
    const bit = this.start[k], o = row + (bit >> 3), sh = bit & 7;
    const w = piece[o] | (sh + b > 8 ? piece[o + 1] << 8 : 0);
    return (w >> sh) & ((1 << b) - 1);
  }

  addTo(i: number, out: Float32Array, at = 0): void {
    const { d, bits, steps, half } = this;
    const piece = this.codes.piece(i), row = this.codes.pieceStart(i);
    for (let k = 0; k < d; k++) if (bits[k] !== 0) out[at + k] += steps[k] * (this.codeIn(piece, row, k) - half[k]);
  }

  /** The header, bits and steps, then the codes' pieces in place. */
  payload(): Uint8Array[] {
    return [this.head(), ...this.codes.bytePieces()];
  }

  /** The payload's bytes before the codes: the header, bits and steps. */
  head(): Uint8Array {
    const { d } = this;
    const head = new Uint8Array(HEADER_BYTES + align4(d) + 4 * d);
    const v = new DataView(head.buffer);
    v.setUint32(0, this.R, true);
    head.set(this.bits, HEADER_BYTES);
    head.set(new Uint8Array(Float32Array.from(this.steps).buffer), HEADER_BYTES + align4(d));
    return head;
  }
}

export const bitsSection: ResidualSection = {
  tag: 'RSDB',
  payloadBytes: () => undefined, // R is in the payload's own header
  rowBlocks(payload, context, corrupt, rowsHint) {
    const { d } = context;
    const head = payload.view(0, Math.min(payload.length, HEADER_BYTES));
    const R = head.length === HEADER_BYTES ? new DataView(head.buffer, head.byteOffset, HEADER_BYTES).getUint32(0, true) : 0;
    // A header read() would refuse: read() of the header alone says what is wrong.
    if (!(R >= 1 && R <= d)) bitsSection.read(Payload.of(head), { ...context, assignments: [] }, corrupt);
    return fixedRowBlocks(bitsSection, payload, context, corrupt, bitsPayloadBytes(0, d, R), R, rowsHint);
  },
  read(input: PayloadLike, { n, d }: SectionContext, corrupt: (what: string) => Error) {
    const payload = asPayload(input); // a Payload from decodeVlc; bytes in one array from a test or a small caller
    if (payload.length < HEADER_BYTES) throw corrupt(`payload of ${payload.length} bytes is shorter than its ${HEADER_BYTES}-byte header`);
    const v = new DataView(payload.buffer, payload.byteOffset, HEADER_BYTES);
    const R = v.getUint32(0, true);
    if (v.getUint32(4, true) !== 0) throw corrupt('reserved header field is not 0');
    if (R < 1 || R > d) throw corrupt(`${R} code bytes per vector (expected 1 to d = ${d})`);
    const want = bitsPayloadBytes(n, d, R);
    if (payload.length !== want) throw corrupt(`payload is ${payload.length} bytes, expected ${want} for n=${n}, d=${d}, ${R} code bytes`);
    const bits = payload.view(HEADER_BYTES, d).slice();
    let total = 0;
    for (let k = 0; k < d; k++) {
      if (bits[k] > MAX_BITS) throw corrupt(`dimension ${k} has ${bits[k]} bits (at most ${MAX_BITS})`);
      total += bits[k];
    }
    if (total > 8 * R) throw corrupt(`the dimensions' bits add up to ${total}, more than ${R} bytes hold`);
    if (!payload.zero(HEADER_BYTES + d, HEADER_BYTES + align4(d))) throw corrupt('padding after the bits is not zero');
    const so = HEADER_BYTES + align4(d);
    const steps = new Float32Array(payload.view(so, 4 * d).slice().buffer);
    for (let k = 0; k < d; k++) if (!(Number.isFinite(steps[k]) && steps[k] >= 0)) throw corrupt(`step of dimension ${k} is ${steps[k]} (must be finite and >= 0)`);
    // The codes: views of the file's bytes, a piece of whole rows at a time.
    const codes = new Codes<Uint8Array>('u8', n, R, payload.buffer, payload.byteOffset + so + 4 * d);
    // The bits past Σ b_k in each row are zero as written: anything else is damage.
    const free = total >> 3;
    for (let i = 0; i < n; i++) {
      const piece = codes.piece(i), row = codes.pieceStart(i);
      for (let o = free; o < R; o++) {
        const mask = o === free ? 0xff & ~((1 << (total & 7)) - 1) : 0xff;
        if (piece[row + o] & mask) throw corrupt(`vector ${i} has bits set past its codes`);
      }
    }
    return new BitsResiduals(n, d, R, bits, steps, codes);
  },
};
