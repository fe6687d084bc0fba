// Product-quantized residuals: any rate between the anchor id alone and int4/int8 (SPEC §6 Codecs).
//
// The residual r = x − (anchor as stored) of each vector is first divided by its anchor's scale
// s_j (the RMS residual per dimension of the anchor's cell: cells differ several-fold in spread,
// and one set of codebooks then fits them all), then cut into M subspaces of consecutive dimensions
// — when M does not divide d, the first d mod M subspaces get one dimension more — and each piece
// is replaced by the nearest of K = 2^bits centroids of its subspace's codebook:
//
//   x̂_i = anchor_j + s_j · (c_1[q_i1], c_2[q_i2], …, c_M[q_iM]),   j = vector i's anchor
//
// Codebooks are trained by the annealing quantizer (codecs/train/pq.ts); this file holds the coded
// form, its decoding and its section.
//
// Section payload ('RSPQ'), all little-endian:
//   u32 M (subspaces), u32 bits per code (8 or 4), u32 m (anchors), u32 0 (reserved)
//   m × f32 anchor scales s_j (finite, >= 0)
//   K × d × f16 codebooks: subspace t's K × dsub_t block, row-major, one after the other; then zero
//     padding to a multiple of 4 bytes
//   n × M bytes of codes (8 bits), or n × ceil(M/2) bytes with two codes each, low nibble first,
//     the unused high nibble of an odd M zero (4 bits)
import { f16ToF32, f32ToF16 } from '../io/dataset.js';
import type { CodedResiduals, ResidualSection } from './types.js';

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

/** Section payload bytes for these sizes (everything but the codes is a fixed cost per file). */
export function pqPayloadBytes(n: number, d: number, m: number, M: number, bits: PqBits): number {
  const K = 2 ** bits;
  return HEADER_BYTES + 4 * m + align4(2 * K * d) + n * pqCodeBytes(M, bits);
}

const align4 = (x: number) => (x + 3) & ~3;

export class PqResiduals implements CodedResiduals {
  readonly mode = 'pq' as const;
  readonly K: number;
  readonly bounds: Int32Array;

  constructor(
    readonly n: number,
    readonly d: number,
    readonly M: number,
    readonly bits: PqBits,
    /** Each vector's anchor (the scale it uses). */
    readonly assign: ArrayLike<number>,
    /** m anchor scales. */
    readonly scales: Float32Array,
    /** K × d codebook values as stored (f16-exact), subspace blocks one after the other. */
    readonly codebooks: Float32Array,
    /** n × M codes, one per byte in memory whatever `bits` is. */
    readonly codes: Uint8Array,
  ) {
    this.K = 2 ** bits;
    this.bounds = subspaceBounds(d, M);
  }

  addTo(i: number, out: Float32Array, at = 0): void {
    const { M, K, bounds, codebooks, codes } = this;
    const s = this.scales[this.assign[i]];
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      const c = K * lo + codes[i * M + t] * w;
      for (let k = 0; k < w; k++) out[at + lo + k] += s * codebooks[c + k];
    }
  }

  payload(): Uint8Array {
    const { n, d, M, bits, K, scales, codes } = this;
    const m = scales.length;
    const out = new Uint8Array(pqPayloadBytes(n, d, m, M, bits));
    const v = new DataView(out.buffer);
    v.setUint32(0, M, true);
    v.setUint32(4, bits, true);
    v.setUint32(8, m, true);
    let off = HEADER_BYTES;
    new Float32Array(out.buffer, off, m).set(scales);
    off += 4 * m;
    const half = new Uint16Array(out.buffer, off, K * d);
    for (let i = 0; i < K * d; i++) half[i] = f32ToF16(this.codebooks[i]);
    off += align4(2 * K * d);
    const body = out.subarray(off);
    if (bits === 8) body.set(codes);
    else {
      const row = pqCodeBytes(M, 4);
      for (let i = 0; i < n; i++)
        for (let t = 0; t < M; t += 2)
          body[i * row + (t >> 1)] = codes[i * M + t] | (t + 1 < M ? codes[i * M + t + 1] << 4 : 0);
    }
    return out;
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
  read(payload, { n, d, m, assignments }, corrupt) {
    const bad = (what: string) => corrupt(`section 'residuals' (pq) ${what}`);
    if (payload.length < HEADER_BYTES) throw bad(`has ${payload.length} bytes, less than its ${HEADER_BYTES}-byte header`);
    const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const M = v.getUint32(0, true);
    const bits = v.getUint32(4, true);
    const scaleCount = v.getUint32(8, true);
    if (v.getUint32(12, true) !== 0) throw bad(`has a non-zero reserved header field`);
    if (!(M >= 1 && M <= d)) throw bad(`says M = ${M} subspaces, but d = ${d} allows 1..${d}`);
    if (bits !== 8 && bits !== 4) throw bad(`says ${bits} bits per code; 8 or 4 are defined`);
    if (scaleCount !== m) throw bad(`holds ${scaleCount} anchor scales, but m = ${m}`);
    const want = pqPayloadBytes(n, d, m, M, bits);
    if (payload.length !== want)
      throw bad(`has ${payload.length} bytes, but n = ${n}, d = ${d}, m = ${m}, M = ${M}, ${bits}-bit codes need ${want}`);
    let off = HEADER_BYTES;
    const scales = new Float32Array(m);
    new Uint8Array(scales.buffer).set(payload.subarray(off, off + 4 * m));
    if (!scales.every((s) => Number.isFinite(s) && s >= 0)) throw bad(`has an anchor scale that is not a finite number >= 0`);
    off += 4 * m;
    const K = 2 ** bits;
    const codebooks = new Float32Array(K * d);
    for (let i = 0; i < K * d; i++) codebooks[i] = f16ToF32(v.getUint16(off + 2 * i, true));
    if (!codebooks.every(Number.isFinite)) throw bad(`has a codebook value that is not finite`);
    for (let p = off + 2 * K * d; p < off + align4(2 * K * d); p++) if (payload[p] !== 0) throw bad(`has non-zero padding`);
    off += align4(2 * K * d);
    const body = payload.subarray(off);
    let codes: Uint8Array;
    if (bits === 8) codes = body.slice();
    else {
      codes = new Uint8Array(n * M);
      const row = pqCodeBytes(M, 4);
      for (let i = 0; i < n; i++) {
        for (let t = 0; t < M; t++) {
          const b = body[i * row + (t >> 1)];
          codes[i * M + t] = t & 1 ? b >> 4 : b & 0xf;
        }
        if (M & 1 && body[i * row + row - 1] >> 4) throw bad(`has a non-zero unused half byte in vector ${i}'s codes`);
      }
    }
    return new PqResiduals(n, d, M, bits, assignments, scales, codebooks, codes);
  },
};
