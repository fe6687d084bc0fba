// The 'ec' section's size before it is coded: a residual sample's codes counted into a histogram
// (countSample), the section's bytes estimated from those counts (estimateBytes) at the models'
// precision (scaleOf), and the search for the step whose estimate meets a byte target
// (searchStep), for the plain axes (encode.ts) and the principal directions (encode-rotated.ts).
import { sectionBytes } from './blocks.js';
import { CodeHistogram, MAX_CODE, alphabetOf, symbolBits, varintBytes } from './model.js';
import { LANES } from './rans.js';
import { planStep, stepPoint, type Columns, type StepPoint } from './steps.js';

export const DEFAULT_SCALE_BITS = 12;
/** Rows of the sample the step and coded dimensions are chosen on. */
export const SAMPLE_ROWS = 8192;
/** Rows the byte target's search counts codes on (evenly spread; every row when fewer). */
export const SEARCH_ROWS = 16384;

/**
 * The models' precision: given, or 'auto': of 12, 13 and 14 bits, the one whose estimated section
 * is smallest. At high rates a dimension's codes spread over hundreds of values; with 12 bits those
 * seen fewer than N/4096 times are escaped (a varint of 1-3 bytes each), which finer frequencies
 * keep in the alphabet at the cost of larger models.
 */
export type Scale = number | 'auto';
const AUTO_SCALES = [12, 13, 14];

/** The estimated section bytes at the models' precision `scale` (or at the best of AUTO_SCALES), and that precision. */
export function scaleOf(h: CodeHistogram, n: number, d: number, blockRows: number, scale: Scale, rotatedK?: number): { bytes: number; scaleBits: number } {
  if (scale !== 'auto') return { bytes: estimateBytes(h, n, d, blockRows, scale, rotatedK), scaleBits: scale };
  let best = { bytes: Infinity, scaleBits: DEFAULT_SCALE_BITS };
  for (const S of AUTO_SCALES) {
    const bytes = estimateBytes(h, n, d, blockRows, S, rotatedK);
    if (bytes < best.bytes) best = { bytes, scaleBits: S };
  }
  return best;
}

/** Codes of a residual sample (rows × d, row-major, f64) counted into h. */
export function countSample(sample: Float64Array, d: number, steps: Float32Array, h: CodeHistogram): void {
  const dims: number[] = [];
  steps.forEach((s, k) => s > 0 && dims.push(k));
  const D = dims.length, dk = Int32Array.from(dims), sk = Float64Array.from(dims, (k) => steps[k]);
  const { lo, width, start, counts, escapes } = h;
  for (let o = 0; o < sample.length; o += d) {
    for (let c = 0; c < D; c++) {
      let t = Math.round(sample[o + dk[c]] / sk[c]);
      t = t > MAX_CODE ? MAX_CODE : t < -MAX_CODE ? -MAX_CODE : t;
      const w = t - lo[c];
      if (w >= 0 && w < width[c]) counts[start[c] + w]++;
      else escapes[c]++;
    }
    h.total++;
  }
}

/** The steps of a step point: its step on the coded dimensions, 0 elsewhere. */
export const stepsOf = (coded: Uint8Array, step: number) => Float32Array.from(coded, (c) => (c ? step : 0));

/** A histogram window wide enough for nearly all of each coded dimension's codes (8 RMS). */
export function histogramFor(steps: Float32Array, moments: Float64Array): CodeHistogram {
  const spread: number[] = [];
  steps.forEach((s, k) => s > 0 && spread.push((8 * Math.sqrt(moments[k])) / s + 2));
  return CodeHistogram.around(spread);
}

/**
 * Bytes the section will take with these counts (scaled from the counted rows to n): the codes'
 * entropy under their alphabets (the coder lands within 0.1 % of it: rans.ts's test), escapes'
 * bytes, the models (frequencies estimated as count · 2^S / rows, their varints sized), blocks'
 * heads and the table. Cheaper than building the models, which the search would do at every step.
 */
function estimateBytes(h: CodeHistogram, n: number, d: number, blockRows: number, scaleBits: number, rotatedK?: number): number {
  const alpha = alphabetOf(h, scaleBits, n);
  const N = h.total, M = 2 ** scaleBits;
  const vlen = varintBytes;
  let bits = 0, escBytes = 0, modelBytes = 0;
  // A code rarer than 1/M gets frequency 1 (alphabetOf keeps such codes where escaping costs more).
  const term = (c: number) => (c > 0 ? ((c * M) / N < 1 ? symbolBits(c, N, M) : c * Math.log2(N / c)) : 0);
  for (let k = 0; k < alpha.lo.length; k++) {
    const off = alpha.lo[k] - h.lo[k], A = alpha.size[k];
    const win = h.counts.subarray(h.start[k], h.start[k + 1]);
    let esc = h.escapes[k], seen = 0;
    escBytes += h.escapes[k] * 4; // beyond 8 RMS: rare, and a few bytes each
    modelBytes += vlen(2 * Math.abs(alpha.lo[k])) + vlen(A) + 1;
    for (let i = 0; i < win.length; i++) {
      if (i >= off && i < off + A) {
        if (win[i]) seen++;
        bits += term(win[i]);
        modelBytes += vlen(Math.round((win[i] * M) / Math.max(1, N)));
      } else if (win[i]) {
        esc += win[i];
        escBytes += win[i] * vlen(Math.abs(h.lo[k] + i) * 2);
      }
    }
    bits += term(esc);
    // A sample's empirical entropy falls short of the whole set's by about (symbols seen − 1) /
    // (2·ln 2) over its count (Miller–Madow): the difference between N counted rows and all n.
    if (esc) seen++;
    if (N > 0 && n > N && seen > 1) bits += ((seen - 1) / (2 * Math.LN2)) * (1 - N / n);
  }
  const scale = N ? n / N : 0;
  const blocks = Math.ceil(n / blockRows);
  return sectionBytes(d, blocks, modelBytes, (bits / 8 + escBytes) * scale + blocks * (4 * LANES + 8 + 2), rotatedK);
}

/**
 * The step point whose section is nearest `bytes` without exceeding it where it can: bisection on
 * log Δ from planStep's guess, each step's coded dimensions chosen on `cols` and its size estimated
 * from the codes of the sample `counted` (estimateBytes). A rotated section (`rotated`: each coded
 * direction also pays `extraBits` for its stored vector) counts its coded directions in its size.
 */
export function searchStep(
  cols: Columns, counted: Float64Array, n: number, d: number, bytes: number, blockRows: number, scale: Scale, rotated?: { extraBits: number },
): { p: StepPoint; steps: Float32Array; bytes: number; scaleBits: number } {
  const extraBits = rotated?.extraBits ?? 0;
  const size = (step: number) => {
    const p = stepPoint(cols, step, extraBits);
    const steps = stepsOf(p.coded, p.step);
    const h = histogramFor(steps, cols.moments);
    countSample(counted, d, steps, h);
    let K = 0;
    if (rotated) p.coded.forEach((c) => (K += c));
    return { p, steps, ...scaleOf(h, n, d, blockRows, scale, rotated ? Math.max(1, K) : undefined) };
  };
  const overhead = sectionBytes(d, Math.ceil(n / blockRows), 0, 0);
  const guess = planStep(cols, { bits: Math.max(0, (8 * (bytes - overhead)) / Math.max(1, n)) }, extraBits).step;
  return searchSize(size, guess, bytes);
}

/**
 * Bisection on log Δ for the step whose estimated size (`size`) is nearest `bytes` without
 * exceeding it where it can, from a first guess.
 */
function searchSize<T extends { bytes: number }>(size: (step: number) => T, guess: number, bytes: number): T {
  let lo = Math.log2(guess) - 0.5, hi = Math.log2(guess) + 0.5;
  let atLo = size(2 ** lo);
  for (let i = 0; i < 20 && atLo.bytes <= bytes; i++) atLo = size(2 ** (lo -= 2)); // lo: too big a file
  let atHi = size(2 ** hi);
  for (let i = 0; i < 20 && atHi.bytes > bytes; i++) atHi = size(2 ** (hi += 2)); // hi: fits
  // Regula falsi on log Δ (the size is nearly linear in it), Illinois-style: an end kept twice in a
  // row has its excess halved, so the bracket keeps shrinking from both sides.
  let fLo = atLo.bytes - bytes, fHi = atHi.bytes - bytes, side = 0;
  for (let it = 0; it < 30 && hi - lo > 1e-4 && Math.abs(fHi) > 1e-4 * bytes; it++) {
    const mid = hi - (fHi * (hi - lo)) / (fHi - fLo), at = size(2 ** mid);
    const f = at.bytes - bytes;
    if (f > 0) {
      (lo = mid), (atLo = at), (fLo = f);
      if (side === -1) fHi /= 2;
      side = -1;
    } else {
      (hi = mid), (atHi = at), (fHi = f);
      if (side === 1) fLo /= 2;
      side = 1;
    }
  }
  return atHi; // the largest file found within the budget
}
