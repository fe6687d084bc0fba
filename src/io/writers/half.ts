// Bulk f32 -> f16 conversion for writers: vlc's one narrowing rule (vectors/dataset.ts
// halfFromFloatBits: round to nearest even, like numpy's astype(float16); a finite value beyond
// ±65504 saturates to ±65504; ±Inf and NaN stay what they are), bit for bit, at table speed.
// halfFromFloatBits branches on the exponent for every value, which made decompress's narrowing
// most of its time; here the float's sign and exponent (its top 9 bits) index small tables, as in
// van der Zijp's "Fast Half Float Conversions": the half's sign and exponent (BASE), how far the
// mantissa shifts (SHIFT; the implicit bit added where the half is subnormal), and the rounding
// term, so a value costs three loads, an add and a shift.
import { F16_MAX_BITS, halfFromFloatBits } from '../../vectors/dataset.js';

const BASE = new Uint16Array(512);
const SHIFT = new Uint8Array(512);
const IMPLICIT = new Uint32Array(512);
/** 2^(SHIFT − 1) − 1: with the kept bits' lowest added, (m + it) >>> SHIFT rounds to nearest, ties to even. */
const ROUND = new Uint32Array(512);
for (let exp = 0; exp < 255; exp++) {
  const e = exp - 127 + 15; // the half's biased exponent
  // Beyond f16: saturate; normal; subnormal (the implicit bit shifted in); below half the least subnormal: ±0.
  // A shift of 31 keeps nothing of the mantissa: the half is BASE alone.
  const [base, shift, implicit] = e >= 31 ? [F16_MAX_BITS, 31, 0] : e > 0 ? [e << 10, 13, 0] : e >= -10 ? [0, 14 - e, 0x800000] : [0, 31, 0];
  for (const sign of [0, 1]) {
    const i = (sign << 8) | exp;
    BASE[i] = (sign << 15) | base;
    SHIFT[i] = shift;
    IMPLICIT[i] = implicit;
    ROUND[i] = 2 ** (shift - 1) - 1;
  }
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
    const s = SHIFT[t];
    const m = (x & 0x7fffff) | IMPLICIT[t];
    const h = BASE[t] + ((m + ROUND[t] + ((m >>> s) & 1)) >>> s);
    // Rounding up from 65504's binade carries into the exponent of Inf: saturate instead.
    out[i] = (h & 0x7c00) === 0x7c00 ? (h & 0x8000) | F16_MAX_BITS : h;
  }
}

/** dst[i] = half(src[from + i]) for i < dst.length. */
export function f32ToF16Into(src: Float32Array, from: number, dst: Uint16Array): void {
  halvesFromFloatBits(new Uint32Array(src.buffer, src.byteOffset + from * 4, dst.length), dst);
}
