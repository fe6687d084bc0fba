// Decoded vectors (f32) written back in the input's element type. Every narrowing is stated and
// never wraps: integers are rounded to the nearest (ties to even, as numpy's rint) and clamped to
// their range; f16 and bf16 round to nearest even and saturate at their largest finite value
// instead of becoming Inf. Each value that had to be clamped or saturated is counted, so the
// caller can say how many.
import type { InputDtype } from '../../vectors/dataset.js';
import { halvesFromFloatBits } from './half.js';

export type OutputDtype = InputDtype;

/** The smallest magnitude that rounds past f16's largest finite value (65504) under round-to-nearest-even. */
const F16_ROUNDS_PAST = 65520;

/** Values moved to the edge of the output type's range (clamped integers, saturated floats). */
export interface Narrowing {
  clamped: number;
}

export type NarrowArray = Float32Array | Float64Array | Uint16Array | Uint8Array | Int8Array;

const INT_RANGE: Partial<Record<OutputDtype, [number, number]>> = { u8: [0, 255], i8: [-128, 127] };

/** The range an integer output type clamps to ("0..255"), or undefined for float types. */
export function clampRange(dtype: OutputDtype): string | undefined {
  const r = INT_RANGE[dtype];
  return r && `${r[0]}..${r[1]}`;
}

/** Round half to even (numpy's rint): 0.5 → 0, 1.5 → 2, -2.5 → -2. */
export function rint(v: number): number {
  const r = Math.round(v); // rounds halves up
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * `src` in `dtype`: `src` itself for f32, else a new array (or `into`, when given and long
 * enough). Counts clamped / saturated values into `tally`.
 */
export function narrow(src: Float32Array, dtype: OutputDtype, tally: Narrowing, into?: NarrowArray): NarrowArray {
  const n = src.length;
  if (dtype === 'f32') return src;
  if (dtype === 'f64') {
    const out = reuse(into, Float64Array, n);
    out.set(src);
    return out;
  }
  const range = INT_RANGE[dtype];
  if (range) {
    const out = dtype === 'u8' ? reuse(into, Uint8Array, n) : reuse(into, Int8Array, n);
    const [lo, hi] = range;
    for (let i = 0; i < n; i++) {
      const r = rint(src[i]);
      if (r < lo || r > hi) tally.clamped++;
      out[i] = r < lo ? lo : r > hi ? hi : r;
    }
    return out;
  }
  const out = reuse(into, Uint16Array, n);
  const bits = new Uint32Array(src.buffer, src.byteOffset, n);
  if (dtype === 'f16') {
    halvesFromFloatBits(bits, out);
    // The one f32 -> f16 rule (vectors/dataset.ts) saturates a finite value that rounds past
    // 65504, f16's largest, to it; values from 65520 on are the ones it moved there.
    for (let i = 0; i < n; i++) if ((out[i] & 0x7fff) === 0x7bff && Math.abs(src[i]) >= F16_ROUNDS_PAST) tally.clamped++;
    return out;
  }
  // bf16: the top half of the f32 bits, rounded to nearest even.
  for (let i = 0; i < n; i++) {
    const x = bits[i];
    let h = ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
    if ((h & 0x7f80) === 0x7f80 && (x & 0x7f800000) !== 0x7f800000) {
      h = (h & 0x8000) | 0x7f7f;
      tally.clamped++;
    }
    out[i] = h;
  }
  return out;
}

function reuse<T extends NarrowArray>(into: NarrowArray | undefined, Type: { new (n: number): T }, n: number): T {
  return into instanceof Type && into.length >= n ? (into.subarray(0, n) as T) : new Type(n);
}

/** The bytes of a typed array (a view, no copy). */
export function bytesOf(a: NarrowArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
