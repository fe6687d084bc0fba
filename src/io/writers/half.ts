// Bulk f32 -> f16 conversion for writers (round to nearest even, like numpy's astype(float16)):
// reads the float bits through one shared view instead of converting value by value.
import { halfFromFloatBits } from '../../vectors/dataset.js';

/** dst[i] = half(src[from + i]) for i < dst.length. */
export function f32ToF16Into(src: Float32Array, from: number, dst: Uint16Array): void {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < dst.length; i++) dst[i] = halfFromFloatBits(bits[from + i]);
}
