// Bulk f32 -> f16 conversion for writers: vlc's one narrowing rule (vectors/dataset.ts
// halfFromFloatBits: round to nearest even, like numpy's astype(float16); a finite value beyond
// ±65504 saturates to ±65504; ±Inf and NaN stay what they are), bit for bit, at table speed.
// halfFromFloatBits branches on the exponent for every value, which made decompress's narrowing
// most of its time; here the float's sign and exponent (its top 9 bits) index small tables, as in
// van der Zijp's "Fast Half Float Conversions": one entry holds the half's sign and exponent and how
// far the mantissa shifts (the implicit bit added where the half is subnormal), so a value costs one
// table load, the rounding's adds and a shift.
import { F16_MAX_BITS, halfFromFloatBits } from '../../vectors/dataset.js';

/**
 * ENTRY[sign and exponent]: the half's sign and exponent in the low 16 bits, the mantissa's shift
 * above them (13 for a normal half; 14 to 24 for a subnormal one, whose implicit bit is shifted in;
 * 31, keeping nothing, for ±0 and for finite values beyond f16, which saturate). One load a value.
 */
const ENTRY = new Int32Array(512);
for (let exp = 0; exp < 255; exp++) {
  const e = exp - 127 + 15; // the half's biased exponent
  const [base, shift] = e >= 31 ? [F16_MAX_BITS, 31] : e > 0 ? [e << 10, 13] : e >= -10 ? [0, 14 - e] : [0, 31];
  for (const sign of [0, 1]) ENTRY[(sign << 8) | exp] = (sign << 15) | base | (shift << 16);
}

/** out[i] = the half of the float whose bits are bits[i], for i < out.length (halfFromFloatBits's bits). */
export function halvesFromFloatBits(bits: Uint32Array, out: Uint16Array): void {
  for (let i = 0; i < out.length; i++) {
    const x = bits[i];
    const t = x >>> 23;
    if ((t & 0xff) === 0xff) {
      out[i] = halfFromFloatBits(x); // ±Inf, NaN
      continue;
    }
    const entry = ENTRY[t];
    const s = entry >>> 16;
    // The implicit bit where the half is subnormal (shift above 13; with 31 it changes nothing).
    const m = (x & 0x7fffff) | (s > 13 ? 0x800000 : 0);
    // (m + 2^(s−1) − 1 + the kept bits' lowest) >>> s: rounded to nearest, ties to even.
    const h = (entry & 0xffff) + ((m + ((1 << (s - 1)) >>> 0) - 1 + ((m >>> s) & 1)) >>> s);
    // Rounding up from 65504's binade carries into the exponent of Inf: saturate instead.
    out[i] = (h & 0x7c00) === 0x7c00 ? (h & 0x8000) | F16_MAX_BITS : h;
  }
}

/** dst[i] = half(src[from + i]) for i < dst.length. */
export function f32ToF16Into(src: Float32Array, from: number, dst: Uint16Array): void {
  halvesFromFloatBits(new Uint32Array(src.buffer, src.byteOffset + from * 4, dst.length), dst);
}
