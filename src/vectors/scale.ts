// Scale-safe arithmetic: vlc's distances are float32 (the CPU's SIMD kernel, CUDA), and a squared
// distance of vectors with |x| ~ 1e-40 (denormals) or 1e-20 underflows to 0, while |x| ~ 1e19
// overflows once summed over d. Then every distance ties, k-NN returns the lowest ids on both sides,
// and recall reads 1.000 for vectors that decoded to nothing. The rule, in this one place: data
// whose largest magnitude lies outside SAFE_BAND is computed with after multiplying it by a power
// of two that brings that magnitude into [1, 2). A power of two is exact (the mantissas do not
// change), and every figure vlc reports — which neighbours are nearest, relative error, cosine,
// recall — is unchanged by a common scale, so the figures of the scaled data are those of the data.
// Data inside the band (every real embedding) is left alone, to the bit.
import { allocDataset, f16ToF32, forEachF32Rows, forEachPiece, rows, type Dataset, type Rows, type VectorView } from './dataset.js';

/**
 * Magnitudes computed with as they are. 2^±16 leaves f32 squared distances 2^±32 around 1 for
 * typical differences and 4·(2^16)²·d < 2^120 for d up to 2^54: far from f32's limits (2^-126
 * smallest normal, 2^128 overflow).
 */
export const SAFE_BAND = { lo: 2 ** -16, hi: 2 ** 16 } as const;

/** The power of two to multiply data of largest magnitude `maxAbs` by: 1 inside SAFE_BAND (and for all-zero data). */
export function scaleFor(maxAbs: number): number {
  if (!(maxAbs > 0) || !Number.isFinite(maxAbs) || (maxAbs >= SAFE_BAND.lo && maxAbs <= SAFE_BAND.hi)) return 1;
  return 2 ** -Math.floor(Math.log2(maxAbs));
}

/**
 * The power of two a whole data set is computed at: scaleFor(its largest |x|). f16 data cannot
 * exceed SAFE_BAND.hi (65504 < 2^16), so it is inside the band as soon as one value reaches
 * SAFE_BAND.lo: the scan stops there (on real data, in the first row) instead of reading every
 * value of a multi-gigabyte input.
 */
export function datasetScale(x: Rows): number {
  return scaleFor(scaleMagnitude(x));
}

/**
 * A magnitude with the scale of x's largest |x|, the largest of several parts' (MPI ranks' rows)
 * included: x's largest |x|, or for f16 data that reaches SAFE_BAND.lo, SAFE_BAND.lo itself,
 * found without reading every value (see datasetScale). Any maximum over parts then lies inside
 * SAFE_BAND exactly when the true one does (f16 never exceeds it), so scaleFor gives the same.
 */
export function scaleMagnitude(x: Rows): number {
  if (x.dtype === 'f16') {
    const lo = F16_BITS_OF_SAFE_LO;
    let inside = false;
    forEachPiece(x, (v) => {
      if (inside) return;
      const h = v as Uint16Array;
      for (let i = 0; i < h.length; i++)
        if ((h[i] & 0x7fff) >= lo) {
          inside = true;
          return;
        }
    });
    if (inside) return SAFE_BAND.lo;
  }
  return maxAbsOf(x);
}

/** SAFE_BAND.lo (2^-16) as f16 bits: a subnormal, 256 × 2^-24 (f16 bit patterns of |x| grow with |x|). */
const F16_BITS_OF_SAFE_LO = 256;

/** The value of a largest |x| found as a bit pattern with the sign cleared (f16 or f32 bits). */
export function topValue(top: number, dtype: 'f16' | 'f32'): number {
  if (dtype === 'f16') return f16ToF32(top);
  return new Float32Array(new Int32Array([top]).buffer)[0];
}

/** The largest |x| over rows `list` of x (all n rows when null). */
export function maxAbsOf(x: Rows, list: readonly number[] | null = null): number {
  // By the bits: the largest |x| is the largest bit pattern with the sign cleared (NaN and Inf were
  // refused on reading) — an integer max, a fraction of a float loop's time (and no f16 decoding).
  let top = 0;
  const scan = (v: VectorView) => {
    if (v instanceof Uint16Array) {
      for (let i = 0; i < v.length; i++) if ((v[i] & 0x7fff) > top) top = v[i] & 0x7fff;
    } else {
      const bits = new Int32Array(v.buffer, v.byteOffset, v.length);
      for (let i = 0; i < bits.length; i++) if ((bits[i] & 0x7fffffff) > top) top = bits[i] & 0x7fffffff;
    }
  };
  if (list === null) forEachPiece(x, scan); // every row (compress's whole input)
  else for (const r of list) scan(rows(x, r, r + 1));
  return topValue(top, x.dtype);
}

/** v *= s in place (s a power of two: exact wherever the result is a normal float). */
export function scaleInPlace(v: Float32Array, s: number): Float32Array {
  if (s !== 1) for (let i = 0; i < v.length; i++) v[i] *= s;
  return v;
}

/** ds itself when its scale is 1, else an f32 copy multiplied by it (fresh shared memory, for the backends). */
export function scaledDataset(ds: Dataset, s: number): Dataset {
  if (s === 1) return ds;
  const out = allocDataset(ds.n, ds.d, 'f32', ds.format);
  forEachF32Rows(ds, 0, ds.n, (v, c0, c1) => {
    const dst = rows(out, c0, c1) as Float32Array;
    for (let i = 0; i < v.length; i++) dst[i] = v[i] * s;
  });
  return { ...out, dropped: ds.dropped };
}
