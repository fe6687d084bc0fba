// Product-quantized residuals: any rate between the anchor id alone and int4/int8
// (docs/quality.md, "The codecs").
//
// The residual r = x − (anchor as stored) of each vector is first divided by its anchor's scale
// s_j (the RMS residual per dimension of the anchor's cell: cells differ several-fold in spread,
// and one set of codebooks then fits them all), then cut into M subspaces of consecutive dimensions
// — when M does not divide d, the first d mod M subspaces get one dimension more — and each piece
// is replaced by the nearest of K = 2^bits centroids of its subspace's codebook:
//
//   x̂_i = anchor_j + s_j · (c_1[q_i1], c_2[q_i2], …, c_M[q_iM]),   j = vector i's anchor
//
// With a projection (--pq-dims k, format version 4) the pieces are cut from the scaled residual's
// coordinates along k orthonormal directions p_1..p_k — the residuals' leading principal
// directions, grouped so that the subspaces carry balanced variance (codec-train/projection.ts) — and the
// decoded residual is mapped back: x̂_i = anchor_j + s_j · Pᵀ ĉ_i. Real data concentrates its
// residual variance in few directions, so the same code bytes go where the error is; what lies
// outside the k directions is dropped (its variance is the price, measured by the encoder).
//
// Codebooks are trained by the annealing quantizer (codec-train/pq.ts); this file holds the coded
// form, its decoding and its section.
//
// Section payload ('RSPQ'), all little-endian:
//   u32 M (subspaces), u32 bits per code (8 or 4), u32 m (anchors), u32 k (projected dimensions;
//     0 = none, the only value before format version 4)
//   m × f32 anchor scales s_j (finite, >= 0)
//   with k > 0: k × d × f16 directions, row-major, then zero padding to a multiple of 4 bytes; a
//     decoder uses them made orthonormal by Gram–Schmidt in f64, in order (usableProjection)
//   K × D × f16 codebooks (D = k, or d without a projection): subspace t's K × dsub_t block,
//     row-major, one after the other; then zero padding to a multiple of 4 bytes
//   n × M bytes of codes (8 bits), or n × ceil(M/2) bytes with two codes each, low nibble first,
//     the unused high nibble of an odd M zero (4 bits)
import { f16ToF32, f32ToF16 } from '../vectors/dataset.js';
import { asCodes, Codes, packNibbles, unpackNibbles } from '../vectors/codes.js';
import { orthonormalize, projectRows } from './linear.js';
import type { CodedResiduals, ResidualSection, SectionContext } from './types.js';
import { asPayload, Payload, type PayloadLike } from '../io/vlc/payload.js';
import { fixedRowBlocks } from './row-blocks.js';

export type PqBits = 8 | 4;
export const PQ_BITS: readonly PqBits[] = [8, 4];
const HEADER_BYTES = 16;

/** Start of each subspace's dimensions (length M + 1): the first d mod M subspaces get one more. */
export function subspaceBounds(d: number, M: number): Int32Array {
  const b = new Int32Array(M + 1);
  const base = Math.floor(d / M);
  const extra = d % M;
  for (let t = 0; t < M; t++) b[t + 1] = b[t] + base + (t < extra ? 1 : 0);
  return b;
}

/** Bytes of one vector's codes. */
export function pqCodeBytes(M: number, bits: PqBits): number {
  return bits === 8 ? M : Math.ceil(M / 2);
}

/** Section payload bytes for these sizes (everything but the codes is a fixed cost per file); `dims` > 0: projected on that many directions. */
export function pqPayloadBytes(n: number, d: number, m: number, M: number, bits: PqBits, dims = 0): number {
  const K = 2 ** bits;
  return HEADER_BYTES + 4 * m + (dims > 0 ? align4(2 * dims * d) : 0) + align4(2 * K * (dims || d)) + n * pqCodeBytes(M, bits);
}

/** The format version that first holds a projected pq section. */
export const PQ_PROJECTION_VERSION = 4;

/**
 * The directions a decoder uses: the stored k × d f16 rows made orthonormal by Gram–Schmidt in
 * f64, in order, then rounded to f32 (so that ‖Pᵀc‖ = ‖c‖ holds to f32 precision, which the
 * search's asymmetric distances rely on). Deterministic: the same stored rows, the same values.
 */
export function usableProjection(half: Uint16Array, k: number, d: number): Float32Array {
  const v = Float64Array.from(half, f16ToF32);
  orthonormalize(v, k, d);
  return Float32Array.from(v);
}

const align4 = (x: number) => (x + 3) & ~3;

/** The vector pq's lookup tables are built from (search/pq-adc.ts): the query itself, or its D coordinates along the projection's directions. */
export function tableQuery(projection: Float32Array | undefined, D: number, query: Float32Array): Float32Array {
  return projection ? projectRows(projection, D, projection.length / D, query, 1) : query;
}

export class PqResiduals implements CodedResiduals {
  readonly mode = 'pq' as const;
  readonly K: number;
  readonly bounds: Int32Array;
  /** Dimensions the codes cover: k with a projection, else d. */
  readonly dims: number;
  /** With a projection: its k × d directions as decoders use them (usableProjection). */
  readonly projection?: Float32Array;
  /** n × M codes, one per byte in memory whatever `bits` is, in pieces of whole rows (vectors/codes.ts). */
  readonly codes: Codes<Uint8Array>;
  private acc?: Float64Array;
  private coords?: Float64Array;

  constructor(
    readonly n: number,
    readonly d: number,
    readonly M: number,
    readonly bits: PqBits,
    /** Each vector's anchor (the scale it uses). */
    readonly assign: ArrayLike<number>,
    /** m anchor scales. */
    readonly scales: Float32Array,
    /** K × dims codebook values as stored (f16-exact), subspace blocks one after the other. */
    readonly codebooks: Float32Array,
    /** The codes, or (small data) one array of them. */
    codes: Codes<Uint8Array> | Uint8Array,
    /** With a projection: its k × d directions as stored (f16 bits). */
    readonly projectionHalf?: Uint16Array,
  ) {
    this.codes = asCodes(codes, M, n);
    this.K = 2 ** bits;
    this.dims = projectionHalf ? projectionHalf.length / d : d;
    this.bounds = subspaceBounds(this.dims, M);
    if (projectionHalf) this.projection = usableProjection(projectionHalf, this.dims, d);
  }

  /** The format version this section needs: PQ_PROJECTION_VERSION with a projection, else its mode's. */
  get formatVersion(): number | undefined {
    return this.projection ? PQ_PROJECTION_VERSION : undefined;
  }

  addTo(i: number, out: Float32Array, at = 0): void {
    const { M, K, bounds, codebooks } = this;
    const s = this.scales[this.assign[i]];
    if (this.projection) return this.addProjected(i, s, out, at);
    const codes = this.codes.piece(i), row = this.codes.pieceStart(i);
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      const c = K * lo + codes[row + t] * w;
      for (let k = 0; k < w; k++) out[at + lo + k] += s * codebooks[c + k];
    }
  }

  /**
   * x̂ − anchor = s · Pᵀ ĉ: the coded coordinates mapped back along the directions, summed in f64
   * over the directions in order (four at a time: the same additions in the same order per
   * dimension as one at a time, which the GPU's decode_pq_projected does).
   */
  private addProjected(i: number, s: number, out: Float32Array, at: number): void {
    const { d, M, K, bounds, codebooks, dims } = this;
    const P = this.projection!;
    const acc = (this.acc ??= new Float64Array(d));
    const z = (this.coords ??= new Float64Array(dims));
    const codes = this.codes.piece(i), row = this.codes.pieceStart(i);
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      const c = K * lo + codes[row + t] * w;
      z.set(codebooks.subarray(c, c + w), lo);
    }
    acc.fill(0);
    let r = 0;
    for (; r + 4 <= dims; r += 4) {
      const z0 = z[r], z1 = z[r + 1], z2 = z[r + 2], z3 = z[r + 3];
      const p0 = r * d, p1 = p0 + d, p2 = p1 + d, p3 = p2 + d;
      for (let j = 0; j < d; j++) acc[j] = acc[j] + z0 * P[p0 + j] + z1 * P[p1 + j] + z2 * P[p2 + j] + z3 * P[p3 + j];
    }
    for (; r < dims; r++) {
      const zr = z[r], p0 = r * d;
      for (let j = 0; j < d; j++) acc[j] += zr * P[p0 + j];
    }
    for (let j = 0; j < d; j++) out[at + j] += s * acc[j];
  }

  /** Header, scales, projection and codebooks in one array, then the codes as pieces (8-bit: in place; 4-bit: packed a piece of rows at a time). */
  payload(): Uint8Array[] {
    const { n, d, M, bits, K, scales, codes, dims, projectionHalf } = this;
    const m = scales.length;
    const k = projectionHalf ? dims : 0;
    const out = new Uint8Array(pqPayloadBytes(0, d, m, M, bits, k));
    const v = new DataView(out.buffer);
    v.setUint32(0, M, true);
    v.setUint32(4, bits, true);
    v.setUint32(8, m, true);
    v.setUint32(12, k, true);
    let off = HEADER_BYTES;
    new Float32Array(out.buffer, off, m).set(scales);
    off += 4 * m;
    if (projectionHalf) {
      new Uint16Array(out.buffer, off, k * d).set(projectionHalf);
      off += align4(2 * k * d);
    }
    const half = new Uint16Array(out.buffer, off, K * dims);
    for (let i = 0; i < K * dims; i++) half[i] = f32ToF16(this.codebooks[i]);
    if (bits === 8) return [out, ...codes.bytePieces()];
    return [out, ...packNibbles(codes)];
  }
}

/** Codebook values as the file stores them (f16), so the encoder picks codes for what decoders see. */
export function storedCodebook(values: Float32Array): Float32Array {
  return values.map((v) => f16ToF32(f32ToF16(v)));
}

/** Reader of the 'RSPQ' section: every size checked against the manifest's n, d, m, every value for sense. */
export const pqSection: ResidualSection = {
  tag: 'RSPQ',
  payloadBytes: () => undefined,
  rowBlocks(payload, context, corrupt, rowsHint) {
    const { d, m } = context;
    const head = payload.view(0, Math.min(payload.length, HEADER_BYTES));
    if (head.length === HEADER_BYTES) {
      const v = new DataView(head.buffer, head.byteOffset, HEADER_BYTES);
      const M = v.getUint32(0, true), bits = v.getUint32(4, true), k = v.getUint32(12, true);
      if ((bits === 8 || bits === 4) && M >= 1 && M <= (k || d) && k <= d && v.getUint32(8, true) === m)
        return fixedRowBlocks(pqSection, payload, context, corrupt, pqPayloadBytes(0, d, m, M, bits, k), pqCodeBytes(M, bits), rowsHint);
    }
    // A header read() would refuse: read() of the header alone says what is wrong.
    pqSection.read(Payload.of(head), { ...context, assignments: [] }, corrupt);
    throw corrupt(`section 'residuals' (pq) has a header this vlc cannot read`);
  },
  read(input: PayloadLike, { n, d, m, assignments, version }: SectionContext, corrupt: (what: string) => Error) {
    const payload = asPayload(input); // a Payload from decodeVlc; bytes in one array from a test or a small caller
    const bad = (what: string) => corrupt(`section 'residuals' (pq) ${what}`);
    if (payload.length < HEADER_BYTES) throw bad(`has ${payload.length} bytes, less than its ${HEADER_BYTES}-byte header`);
    let v = new DataView(payload.buffer, payload.byteOffset, HEADER_BYTES);
    const M = v.getUint32(0, true);
    const bits = v.getUint32(4, true);
    const scaleCount = v.getUint32(8, true);
    const k = v.getUint32(12, true);
    if (k !== 0 && version < PQ_PROJECTION_VERSION)
      throw bad(`says k = ${k} projected dimensions, but a format version ${version} file has none (the header field is reserved, 0)`);
    if (!(k <= d)) throw bad(`says k = ${k} projected dimensions, but d = ${d} allows 0..${d}`);
    const dims = k || d;
    if (!(M >= 1 && M <= dims)) throw bad(`says M = ${M} subspaces, but ${k ? `k = ${k} projected dimensions allow` : `d = ${d} allows`} 1..${dims}`);
    if (bits !== 8 && bits !== 4) throw bad(`says ${bits} bits per code; 8 or 4 are defined`);
    if (scaleCount !== m) throw bad(`holds ${scaleCount} anchor scales, but m = ${m}`);
    const want = pqPayloadBytes(n, d, m, M, bits, k);
    if (payload.length !== want)
      throw bad(`has ${payload.length} bytes, but n = ${n}, d = ${d}, m = ${m}, M = ${M}, ${bits}-bit codes${k ? `, k = ${k}` : ''} need ${want}`);
    let off = HEADER_BYTES;
    // Everything before the codes is small (m scales, k × d directions, K × D codebook values): one view.
    const fixed = want - pqCodeBytes(M, bits) * n;
    const head = payload.view(0, fixed);
    v = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const scales = new Float32Array(m);
    new Uint8Array(scales.buffer).set(head.subarray(off, off + 4 * m));
    if (!scales.every((s) => Number.isFinite(s) && s >= 0)) throw bad(`has an anchor scale that is not a finite number >= 0`);
    off += 4 * m;
    const halves = (count: number, what: string): Uint16Array => {
      const h = new Uint16Array(count);
      for (let i = 0; i < count; i++) h[i] = v.getUint16(off + 2 * i, true);
      if (!h.every((x) => Number.isFinite(f16ToF32(x)))) throw bad(`has a ${what} value that is not finite`);
      for (let p = off + 2 * count; p < off + align4(2 * count); p++) if (head[p] !== 0) throw bad(`has non-zero padding`);
      off += align4(2 * count);
      return h;
    };
    const projectionHalf = k ? halves(k * d, 'projection') : undefined;
    const K = 2 ** bits;
    const codebooks = Float32Array.from(halves(K * dims, 'codebook'), f16ToF32);
    let codes: Codes<Uint8Array>;
    // 8-bit codes: views of the file's bytes (every byte is a valid code); 4-bit: unpacked a piece of rows at a time.
    if (bits === 8) codes = new Codes<Uint8Array>('u8', n, M, payload.buffer, payload.byteOffset + off);
    else {
      const unpacked = unpackNibbles<Uint8Array>((at, length) => payload.view(off + at, length), 'u8', n, M);
      if (unpacked.spareRow >= 0) throw bad(`has a non-zero unused half byte in vector ${unpacked.spareRow}'s codes`);
      codes = unpacked.codes;
    }
    return new PqResiduals(n, d, M, bits, assignments, scales, codebooks, codes, projectionHalf);
  },
};
