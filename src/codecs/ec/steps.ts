// The 'ec' codec's quantization steps: reverse water-filling on the residual's per-dimension
// variances, measured on a sample of residual rows.
//
// For independent Gaussian components of variances σ_k², the least rate at total distortion D gives
// every component the distortion min(θ, σ_k²) (the water level θ: Σ_k min(θ, σ_k²) = D) and spends
// ½·log2(σ_k² / θ) bits on those above it, none on the others. A uniform scalar quantizer of step Δ
// followed by an ideal entropy coder has MSE ≈ Δ²/12 at high rate, the same for every dimension it
// codes, so the water level is one step for all: Δ = √(12·θ) — and it stays 0.254 bit a dimension
// (1.53 dB) above the bound, whatever the spectrum.
//
// Near and below the water level the high-rate formula fails (a step wider than the spread codes
// mostly 0: fewer bits, less error saved), so which dimensions are coded is decided on the sample at
// the step: dimension k is coded when the error it saves per bit spent beats the slope of the other
// dimensions' curve at that step, (σ_k² − D_k(Δ)) / H_k(Δ) > λ(Δ) = 2·ln 2 · Δ²/12 (the high-rate
// D(R) = c·2^(−2R) has slope −2·ln 2·D), with D_k and H_k the dimension's measured MSE and code
// entropy. The others decode to their anchor (step 0 in the section: no symbols at all).
//
// A target (a total MSE per vector, or code bits per vector) is met by bisection on log Δ: both sums
// grow (MSE) or fall (bits) with Δ.

import { dimsThreadCount, onDimensions, resultsF64, sharedF64, type DimWork } from '../dims-on-threads.js';

/** Per dimension at one step: whether it is coded, its MSE and its codes' entropy (bits), and the sums. */
export interface StepPoint {
  step: number;
  coded: Uint8Array;
  /** Σ_k of the dimensions' MSE (coded: the quantizer's; not coded: σ_k²): the expected ‖r − r̂‖². */
  mse: number;
  /** Σ over coded dimensions of their codes' empirical entropy: the code bits of a row. */
  bits: number;
}

/** Mean of r_k² per dimension of a sample (rows × d, row-major): the distortion of not coding k. */
export function secondMoments(sample: Float64Array, d: number): Float64Array {
  const rows = sample.length / d;
  const m = new Float64Array(d);
  for (let j = 0; j < rows; j++) for (let k = 0; k < d; k++) m[k] += sample[j * d + k] ** 2;
  for (let k = 0; k < d; k++) m[k] /= Math.max(1, rows);
  return m;
}

/** A sample's dimensions as columns (d × rows): the per-dimension loops below read them in order. */
export interface Columns {
  cols: Float64Array;
  rows: number;
  d: number;
  /** Mean of r_k² per dimension. */
  moments: Float64Array;
}

/** The sample (rows × d, row-major) as columns, with its second moments. */
export function columnsOf(sample: Float64Array, d: number): Columns {
  const rows = d ? sample.length / d : 0;
  const cols = new Float64Array(sample.length);
  for (let j = 0; j < rows; j++) for (let k = 0; k < d; k++) cols[k * rows + j] = sample[j * d + k];
  return { cols, rows, d, moments: secondMoments(sample, d) };
}

/**
 * What quantizing the sample at step Δ (f32, as stored) costs and keeps, dimension by dimension.
 * `extraBits`: bits a row that coding a dimension costs besides its codes (a stored direction's
 * share: 16·d / n for rotated sections), weighed in the decision to code it. Each dimension's error
 * and entropy are measured on its own (on threads for a large sample: dims-on-threads.ts), then
 * decided and added in dimension order.
 */
export function stepPoint(c: Columns, step: number, extraBits = 0, threads = dimsThreadCount(c.rows * c.d)): StepPoint {
  const { rows, d, moments } = c;
  const s = Math.fround(step);
  const t = d > 1 ? threads : 1;
  const task: PointTask = { kind: 'ec-point', cols: t > 1 ? sharedCols(c) : c.cols, rows, step: s, mse: resultsF64(d, t), entropy: resultsF64(d, t) };
  onDimensions(task, d, t, pointWork(task));
  const coded = new Uint8Array(d);
  const lambda = ((2 * Math.LN2) * s * s) / 12;
  let mse = 0, bits = 0;
  for (let k = 0; k < d; k++) {
    const Dk = task.mse[k], Hk = task.entropy[k];
    if (Hk > 0 && moments[k] - Dk > lambda * (Hk + extraBits)) {
      coded[k] = 1;
      mse += Dk;
      bits += Hk;
    } else mse += moments[k];
  }
  return { step: s, coded, mse, bits };
}

/** A step point's per-dimension work as a worker receives it: the columns (d × rows), the step, and where each dimension's MSE and entropy go. */
export interface PointTask {
  kind: 'ec-point';
  cols: Float64Array;
  rows: number;
  step: number;
  mse: Float64Array;
  entropy: Float64Array;
}

/** A thread's work on a step point: dimension k's MSE at the step and its codes' entropy, its codes' scratch made once. */
export function pointWork(task: PointTask): DimWork {
  const { cols, rows, step: s, mse, entropy: ent } = task;
  const q = new Int32Array(rows);
  return (k) => {
    let err = 0, lo = Infinity, hi = -Infinity, se = 0, nz = 0;
    const o = k * rows;
    for (let j = 0; j < rows; j++) {
      const r = cols[o + j];
      const v = Math.round(r / s);
      q[j] = v;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
      const e = r - s * v;
      err += e * e;
      if (v !== 0) (se += v > 0 ? e : -e), nz++;
    }
    // The levels q ≠ 0 moved toward 0 by the mean of sgn(q)·(s·q − r) (residuals.ts) remove
    // (Σ sgn·e)² / count of the error (within [0, s/2], as the encoder clamps it).
    const c0 = nz ? Math.min(s / 2, Math.max(0, -se / nz)) : 0;
    err += nz * c0 * c0 + 2 * c0 * se;
    mse[k] = err / Math.max(1, rows);
    ent[k] = rows ? entropy(q, lo, hi) : 0;
  };
}

/** The columns in shared memory (made once a sample: a step search asks for many points of it). */
const sharedColumns = new WeakMap<Columns, Float64Array>();

function sharedCols(c: Columns): Float64Array {
  let s = sharedColumns.get(c);
  if (!s) sharedColumns.set(c, (s = sharedF64(c.cols)));
  return s;
}

/** Empirical entropy (bits a value) of integer values in [lo, hi]. */
function entropy(q: Int32Array, lo: number, hi: number): number {
  const n = q.length;
  let h = 0;
  if (hi - lo < 1 << 16) {
    const c = new Uint32Array(hi - lo + 1);
    for (let j = 0; j < n; j++) c[q[j] - lo]++;
    for (let i = 0; i < c.length; i++) if (c[i]) h -= c[i] * Math.log2(c[i] / n);
  } else {
    const sorted = Int32Array.from(q).sort();
    for (let a = 0; a < n; ) {
      let b = a + 1;
      while (b < n && sorted[b] === sorted[a]) b++;
      h -= (b - a) * Math.log2((b - a) / n);
      a = b;
    }
  }
  return h / n;
}

export type StepTarget = { mse: number } | { bits: number } | { step: number };

/**
 * stepPoint's answers by sample, step and extraBits, for planStep: the chooser asks it for several
 * errors of one sample (codecs/ec/predict.ts), and their bisections begin with the same steps (and
 * go on alike while the targets are near). The same points, so the same answers; none is changed
 * by its askers.
 */
const asked = new WeakMap<Columns, Map<string, StepPoint>>();

function stepPointOnce(c: Columns, step: number, extraBits: number): StepPoint {
  let known = asked.get(c);
  if (!known) asked.set(c, (known = new Map()));
  const key = `${extraBits} ${step}`;
  let p = known.get(key);
  if (!p) known.set(key, (p = stepPoint(c, step, extraBits)));
  return p;
}

/**
 * The step (and coded dimensions) meeting the target on the sample: the largest step whose MSE is
 * at most `mse`, or the smallest whose code bits are at most `bits` (MSE grows with the step, bits
 * fall). A target no step reaches gives the nearest end: the finest step tried, or nothing coded.
 */
export function planStep(c: Columns, target: StepTarget, extraBits = 0): StepPoint {
  const { d, moments } = c;
  const stepPoint_ = (cc: Columns, s: number) => stepPointOnce(cc, s, extraBits);
  if ('step' in target) return stepPoint_(c, target.step);
  let maxM = 0;
  for (let k = 0; k < d; k++) maxM = Math.max(maxM, moments[k]);
  if (!(maxM > 0)) return stepPoint_(c, 1); // nothing to code: every residual is 0
  // Steps from 2^-24 of the widest spread (|codes| up to ~2^24) to where nothing is coded (Δ²/12 > max σ²).
  let hi = Math.log2(Math.sqrt(12 * maxM) * 4), lo = hi - 24;
  // good(p): p is on the side of the boundary the answer is taken from (small steps for mse, large for bits).
  const isMse = 'mse' in target;
  const meets = (p: StepPoint) => (isMse ? p.mse <= target.mse : p.bits <= (target as { bits: number }).bits);
  const atLo = stepPoint_(c, 2 ** lo), atHi = stepPoint_(c, 2 ** hi);
  if (isMse ? !meets(atLo) : meets(atLo)) return atLo;
  if (isMse ? meets(atHi) : !meets(atHi)) return atHi;
  let best = isMse ? atLo : atHi;
  for (let it = 0; it < 40 && hi - lo > 2e-3; it++) {
    const mid = (lo + hi) / 2, p = stepPoint_(c, 2 ** mid);
    if (meets(p) === isMse) {
      lo = mid;
      if (isMse) best = p;
    } else {
      hi = mid;
      if (!isMse) best = p;
    }
  }
  return best;
}

/** Shannon's bound for Gaussian components of variances σ_k² at total MSE D: Σ ½·log2(σ_k² / min(θ, σ_k²)) bits, θ the water level. */
export function waterFillingBits(variances: ArrayLike<number>, D: number): { bits: number; theta: number } {
  const v = Array.from(variances).filter((x) => x > 0);
  const total = v.reduce((a, b) => a + b, 0);
  if (D >= total) return { bits: 0, theta: Math.max(0, ...v) };
  let lo = 0, hi = Math.max(...v);
  for (let it = 0; it < 200; it++) {
    const th = (lo + hi) / 2;
    const s = v.reduce((a, x) => a + Math.min(th, x), 0);
    if (s > D) hi = th;
    else lo = th;
  }
  const theta = (lo + hi) / 2;
  return { bits: v.reduce((a, x) => a + (x > theta ? 0.5 * Math.log2(x / theta) : 0), 0), theta };
}
