// The numbers the CUDA kernels are given rather than compute: the screen's rounding bound, scale
// and key masks, and the fixed-point scales of the sums (int64 atomics, so 61 bits: src/backend/fixed.ts).
import { INT64_BITS, passScales, type PassScales } from '../fixed.js';

/** Coefficients of the fp16 screen's bound (exact_h in cuda/screen_h.cu), as f32 values. */
export interface HalfBound {
  c1: number;
  c2: number;
  c3: number;
  c4: number;
}

/**
 * The fp16 screen's rounding bound, in the screen's scaled units (x'' = s·fl(x − μ), s a power of
 * two, so r = ‖x''‖ and R = max ‖c''‖): every approximate distance a'' = ‖x''‖² + ‖c''‖² − 2·(xh·ch)
 * is within B'' = c1·r·R + c2·(r + R)² + c3·(r + R) + c4 of s²·D, D the f32 direct distance that
 * decides (the sequential Σ fmaf(x − c, x − c, ·) of the direct kernels). With u = 2^-24 (f32),
 * uh = 2^-11 (fp16), γ = d·u/(1 − d·u) and dp the padded dimension:
 *   - xh = x''(1 + α) with |α| <= uh (fp16 rounding of normal values), or an absolute error of at
 *     most η = 2^-25 for values under fp16's smallest normal: Σ|xh·ch − x''·c''| <= (2uh + uh²)·r·R
 *     + η·√dp·(r + R) + dp·η²;
 *   - the tensor cores' f32 accumulation: each of the ⌈dp/16⌉ mma steps allowed 18u of the
 *     magnitudes it sums (they align and truncate rather than round), so γtc = ⌈dp/16⌉·18u of
 *     Σ|xh||ch| <= (1 + uh)²·r·R; −2·dot doubles all of the dot product's errors: c1, c3, c4;
 *   - the norms (γ each, any summation order), the add and the fused multiply-add (u each) are
 *     below (γ + 2u)(r + R)²; the centring fl(x − μ) moves ‖x'' − c''‖² by at most 2u(r + R)²;
 *     the direct distance D is within γ of the true one; and the certificate's own subtraction
 *     a5 − B'' rounds by at most u·a5 <= u(r + R)²: c2 = 2γ + 8u covers them with 3u to spare.
 * Then × (1 + 2^-8 + 4γ) for the kernel's f32 evaluation of B and the norms r, R it computes
 * (each off by γ at most), each coefficient rounded up to an f32 so the kernel never uses less.
 */
export function screenHalfBound(d: number, dp: number): HalfBound {
  const u = 2 ** -24, uh = 2 ** -11, eta = 2 ** -25;
  const gamma = (d * u) / (1 - d * u);
  const gtc = Math.ceil(dp / 16) * 18 * u;
  const safety = 1 + 2 ** -8 + 4 * gamma;
  const c1 = 2 * (2 * uh + uh * uh + gtc * (1 + uh) ** 2) * safety;
  const c2 = (2 * gamma + 8 * u) * safety;
  const c3 = 2 * eta * Math.sqrt(dp) * safety;
  const c4 = 2 * dp * eta * eta * safety + 1e-30;
  return { c1: f32Up(c1), c2: f32Up(c2), c3: f32Up(c3), c4: f32Up(c4) };
}

/**
 * The screen's power-of-two scale: max |x| maps to 2^13, so |s·(x − μ)| <= 2^14 for any μ inside
 * the data's range (fp16 holds up to 65504: room for anchors up to about twice as far out; an
 * anchor beyond it sets the overflow flag and its pass falls back to the direct distances). Kept
 * within 2^±40 so that s² and the scaled distances stay normal f32 numbers.
 */
export function halfScale(maxAbs: number): number {
  const e = maxAbs > 0 && Number.isFinite(maxAbs) ? Math.ceil(Math.log2(maxAbs)) : 0;
  return 2 ** (13 - Math.max(-40, Math.min(40, e)));
}

/** The keys' index bits for mpad anchors (cuda/keys.cuh): imask selects them, hmask the rest. */
export function keyMasks(mpad: number): { imask: number; hmask: number } {
  let bits = 1;
  while (2 ** bits < mpad) bits++;
  const imask = 2 ** bits - 1;
  return { imask, hmask: ~imask };
}

function f32Up(v: number): number {
  const f = Math.fround(v);
  return f >= v ? f : f * (1 + 2 ** -23);
}

/** Scales of reduce_points' int64 sums for the whole data's n and max |x| (fixed.ts passScales). */
export function gpuPassScales(n: number, d: number, maxAbs: number, anchorAbs: number): PassScales {
  return passScales(n, d, maxAbs, anchorAbs, INT64_BITS);
}
