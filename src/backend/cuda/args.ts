// Kernel arguments for cuLaunchKernel: each one a one-element typed array whose bytes are the
// C parameter (koffi passes the array of them as `void **params`).
import type { Handle } from './driver.js';

export const ptr = (p: Handle) => new BigUint64Array([p]);
export const i32 = (v: number) => new Int32Array([v]);
export const i64 = (v: number) => new BigInt64Array([BigInt(v)]);
export const f32 = (v: number) => new Float32Array([v]);
export const f64 = (v: number) => new Float64Array([v]);
