// The numbers the CUDA kernels are given rather than compute: the screens' rounding bound, and
// the fixed-point scales of the sums (int64 atomics, so 61 bits: src/backend/fixed.ts).
import { INT64_BITS, passScales, type PassScales } from '../fixed.js';

/**
 * The screens' rounding bound (cuda/screen.cu, cuda/screen_tc.cu): every approximate distance is
 * within B = coef·(‖x‖ + max‖c‖)² of the f32 direct distance that decides. With u = 2^-24 and
 * γ = d·u/(1 − d·u): the f32 screen's dot product, norms and direct distance are each off by at
 * most γ·(‖x‖ + ‖c‖)², plus a few roundings: coef = 2γ + 8u. The tensor-core screen's 3xTF32 dot
 * product is off by at most (γtc + 16u)·‖x‖‖c‖, where 16u covers the dropped lo·lo terms and the
 * split's remainders, and γtc allows each of its 3·⌈d/8⌉ mma steps an error of 18u times the
 * magnitudes it sums (tensor cores truncate when they align the products); −2·dot doubles it and
 * 2‖x‖‖c‖ <= (‖x‖ + ‖c‖)²/2. Rounded up to an f32 so the kernel never uses less.
 */
export function screenBound(d: number, tensorCores: boolean): number {
  const u = 2 ** -24;
  const gamma = (d * u) / (1 - d * u);
  let coef = 2 * gamma + 8 * u;
  if (tensorCores) coef += (3 * Math.ceil(d / 8) * 18 * u + 16 * u) / 2;
  const f = Math.fround(coef);
  return f >= coef ? f : f * (1 + 2 ** -23);
}

/** Scales of reduce_points' int64 sums for the whole data's n and max |x| (fixed.ts passScales). */
export function gpuPassScales(n: number, d: number, maxAbs: number, anchorAbs: number): PassScales {
  return passScales(n, d, maxAbs, anchorAbs, INT64_BITS);
}
