// Bulk f32 -> f16 conversion for writers (round to nearest even, like numpy's astype(float16)).
// Same rounding as f32ToF16 in dataset.ts, but reads the float bits through one shared view
// instead of allocating per value: writing a large f16 file is a hot loop.

/** dst[i] = half(src[from + i]) for i < dst.length. */
export function f32ToF16Into(src: Float32Array, from: number, dst: Uint16Array): void {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < dst.length; i++) {
    const x = bits[from + i];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {
      dst[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 31) {
      dst[i] = sign | 0x7c00;
      continue;
    }
    if (e <= 0) {
      if (e < -10) {
        dst[i] = sign;
        continue;
      }
      mant |= 0x800000;
      const shift = 14 - e;
      let h = mant >>> shift;
      const rem = mant & ((1 << shift) - 1);
      const half = 1 << (shift - 1);
      if (rem > half || (rem === half && h & 1)) h++;
      dst[i] = sign | h;
      continue;
    }
    let h = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
    dst[i] = sign | h;
  }
}
