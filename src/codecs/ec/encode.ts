// The 'ec' codec's encoder: the step by reverse water-filling on a sample (steps.ts), every row's
// codes counted into static models (two passes: count, then code), the blocks coded (blocks.ts).
// With a byte target the step is searched on the count pass's exact coded size estimate.
// Deterministic: the samples are fixed rows, every sum runs in row order.
import { forEachF32Rows } from '../../vectors/dataset.js';
import { residualSample, type RowsInput } from '../scalar-rows.js';
import { rowsInput } from '../scalar.js';
import type { ResidualInput } from '../types.js';
import { DEFAULT_BLOCK_ROWS, encodeBlock, sectionBytes, type EcLayout } from './blocks.js';
import { CodeHistogram, MAX_CODE, alphabetOf, modelsOf, writeModels } from './model.js';
import { LANES } from './rans.js';
import { EcResiduals, narrowed, type BlockCodes } from './residuals.js';
import { columnsOf, planStep, stepPoint, type Columns, type StepPoint, type StepTarget } from './steps.js';
import { asStored, projectSample, secondMomentMatrix, symmetricEigenFull } from './rotation.js';

/** Rows of the sample the step and coded dimensions are chosen on. */
const SAMPLE_ROWS = 8192;
/** Rows the byte target's search counts codes on (evenly spread; every row when fewer). */
const SEARCH_ROWS = 16384;
export const DEFAULT_SCALE_BITS = 12;

/**
 * The models' precision: given, or 'auto': of 12, 13 and 14 bits, the one whose estimated section
 * is smallest. At high rates a dimension's codes spread over hundreds of values; with 12 bits those
 * seen fewer than N/4096 times are escaped (a varint of 1-3 bytes each), which finer frequencies
 * keep in the alphabet at the cost of larger models.
 */
type Scale = number | 'auto';
const AUTO_SCALES = [12, 13, 14];

function scaleOf(h: CodeHistogram, n: number, d: number, blockRows: number, scale: Scale, rotatedK?: number): { bytes: number; scaleBits: number } {
  if (scale !== 'auto') return { bytes: estimateBytes(h, n, d, blockRows, scale, rotatedK), scaleBits: scale };
  let best = { bytes: Infinity, scaleBits: DEFAULT_SCALE_BITS };
  for (const S of AUTO_SCALES) {
    const bytes = estimateBytes(h, n, d, blockRows, S, rotatedK);
    if (bytes < best.bytes) best = { bytes, scaleBits: S };
  }
  return best;
}

/** What to aim at: a step, a total MSE per vector (on the sample), or a payload size in bytes. */
export type EcTarget = StepTarget | { payloadBytes: number };

export interface EcOptions {
  blockRows?: number;
  scaleBits?: number;
  /**
   * Code along the residual's principal directions (rotation.ts): true, false, or 'auto' (the
   * default for a byte target; plain axes for the others): both are sized on the sample and the
   * rotated one is taken when its sample MSE is ROTATION_GAIN lower (5 %: the directions are fitted
   * to that sample, whose sampling noise alone spreads an isotropic spectrum) at the same bytes.
   */
  rotate?: boolean | 'auto';
}

/** The rotated layout is taken when it keeps this much less error (its decode costs k·d a row, not d). */
const ROTATION_GAIN = 0.05;

/**
 * Codes of one row (r = x − anchor, f64) on the coded dimensions, into q[at ..]; returns Σ (x − x̂)²
 * over all d, x̂ as residuals.ts decodes it (offsets toward 0 included).
 */
function quantizeRow(x: Float32Array, xo: number, anchors: Float32Array, ao: number, d: number, steps: Float32Array, offsets: Float32Array, q: Int32Array, at: number): number {
  let err = 0;
  for (let k = 0, c = at; k < d; k++) {
    const xv = x[xo + k], av = anchors[ao + k], s = steps[k];
    if (s === 0) {
      const e = xv - av;
      err += e * e;
      continue;
    }
    let v = Math.round((xv - av) / s);
    v = v > MAX_CODE ? MAX_CODE : v < -MAX_CODE ? -MAX_CODE : v;
    q[c++] = v;
    const e = xv - (v > 0 ? Math.fround(av + (s * v - offsets[k])) : v < 0 ? Math.fround(av + (s * v + offsets[k])) : av);
    err += e * e;
  }
  return err;
}

/**
 * Per coded dimension, Σ sgn(q)·(step·q − r) over its codes q ≠ 0 and how many: the mean is the
 * offset that moves those levels to their residuals' mean (residuals.ts).
 */
class OffsetSums {
  readonly sum: Float64Array;
  readonly count: Float64Array;
  constructor(readonly dims: Int32Array) {
    this.sum = new Float64Array(dims.length);
    this.count = new Float64Array(dims.length);
  }

  addRow(x: Float32Array, xo: number, anchors: Float32Array, ao: number, steps: Float32Array, q: Int32Array): void {
    const { dims, sum, count } = this;
    for (let c = 0; c < dims.length; c++) {
      const v = q[c];
      if (v === 0) continue;
      const k = dims[c], t = steps[k] * v - (x[xo + k] - anchors[ao + k]);
      sum[c] += v > 0 ? t : -t;
      count[c]++;
    }
  }

  /** The offsets, within [0, step / 2] (levels keep their order and their side of 0). */
  offsets(steps: Float32Array): Float32Array {
    const out = new Float32Array(steps.length);
    this.dims.forEach((k, c) => {
      if (this.count[c] > 0) out[k] = Math.fround(Math.min(steps[k] / 2, Math.max(0, this.sum[c] / this.count[c])));
    });
    return out;
  }
}

/** Codes of rows r0 .. r1 counted into h, and into the offsets' sums: quantizeRow's codes without its error. */
function countRows(rows: RowsInput, r0: number, r1: number, steps: Float32Array, h: CodeHistogram, sums: OffsetSums): void {
  const { d, anchors, assign } = rows;
  const dims: number[] = [];
  steps.forEach((s, k) => s > 0 && dims.push(k));
  const D = dims.length, dk = Int32Array.from(dims), sk = Float64Array.from(dims, (k) => steps[k]);
  const q = new Int32Array(D);
  const { lo, width, start, counts, escapes } = h;
  const one = (v: Float32Array, xo: number, i: number) => {
    const ao = assign[i] * d;
    for (let c = 0; c < D; c++) {
      const k = dk[c];
      let t = Math.round((v[xo + k] - anchors[ao + k]) / sk[c]);
      t = t > MAX_CODE ? MAX_CODE : t < -MAX_CODE ? -MAX_CODE : t;
      q[c] = t;
      const w = t - lo[c];
      if (w >= 0 && w < width[c]) counts[start[c] + w]++;
      else escapes[c]++;
    }
    h.total++;
    sums.addRow(v, xo, anchors, ao, steps, q);
  };
  forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
    for (let i = c0; i < c1; i++) one(v, (i - c0) * d, i);
  });
}

/** Codes of a residual sample (rows × d, row-major, f64) counted into h. */
function countSample(sample: Float64Array, d: number, steps: Float32Array, h: CodeHistogram): void {
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
const stepsOf = (coded: Uint8Array, step: number) => Float32Array.from(coded, (c) => (c ? step : 0));

/** A histogram window wide enough for nearly all of each coded dimension's codes (8 RMS). */
function histogramFor(steps: Float32Array, moments: Float64Array): CodeHistogram {
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
  const alpha = alphabetOf(h, scaleBits);
  const N = h.total, M = 2 ** scaleBits;
  const vlen = (v: number) => (v < 128 ? 1 : v < 16384 ? 2 : 3);
  let bits = 0, escBytes = 0, modelBytes = 0;
  const term = (c: number) => (c > 0 ? c * Math.log2(N / c) : 0);
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
 * The 'ec' residuals of every vector, and their mean squared error (x against the reconstruction as
 * a decoder holds it).
 */
export function encodeEc(input: ResidualInput, target: EcTarget, opts: EcOptions = {}): { residuals: EcResiduals; residualEnergy: number; step: number } {
  const { n, d } = input;
  const blockRows = opts.blockRows ?? DEFAULT_BLOCK_ROWS;
  // A byte target picks the models' precision too, unless one is given (scaleOf).
  const scale: Scale = opts.scaleBits ?? ('payloadBytes' in target ? 'auto' : DEFAULT_SCALE_BITS);
  let scaleBits = scale === 'auto' ? DEFAULT_SCALE_BITS : scale;
  const rows = rowsInput(input, false);
  const sample = residualSample(rows, n, SAMPLE_ROWS);
  const cols = columnsOf(sample, d);
  const moments = cols.moments;
  const rotate = opts.rotate ?? ('payloadBytes' in target ? 'auto' : false);
  let steps: Float32Array;
  let step: number;
  let plainMse = Infinity;
  if ('payloadBytes' in target) {
    const counted = residualSample(rows, n, SEARCH_ROWS);
    if (rotate !== true) {
      ({ steps, step, scaleBits } = searchBytes(cols, counted, n, d, target.payloadBytes, blockRows, scale));
      plainMse = stepPoint(cols, step).mse;
    }
  } else if (rotate !== true) {
    const p = planStep(cols, target);
    (steps = stepsOf(p.coded, p.step)), (step = p.step);
    plainMse = p.mse;
  }
  if (rotate !== false && d >= 2 && n >= 2) {
    const r = planRotated(sample, n, d, target, blockRows, scale);
    if (rotate === true || (r && r.mse < plainMse * (1 - ROTATION_GAIN))) {
      if (r) return encodeRotated(rows, n, d, r, blockRows, r.scaleBits);
    }
  }
  if (rotate === true) {
    // d < 2 or n < 2: the plain axes
    const p = 'payloadBytes' in target ? null : planStep(cols, target);
    if (p) (steps = stepsOf(p.coded, p.step)), (step = p.step);
    else ({ steps, step, scaleBits } = searchBytes(cols, residualSample(rows, n, SEARCH_ROWS), n, d, (target as { payloadBytes: number }).payloadBytes, blockRows, scale));
  }
  steps = steps!;
  step = step!;
  const dimList: number[] = [];
  steps.forEach((s, k) => s > 0 && dimList.push(k));
  const D = dimList.length;
  // Pass 1: every row's codes counted, and the offsets' sums.
  const h = histogramFor(steps, moments);
  const sums = new OffsetSums(Int32Array.from(dimList));
  countRows(rows, 0, n, steps, h, sums);
  const offsets = sums.offsets(steps);
  const alpha = alphabetOf(h, scaleBits), models = modelsOf(h, alpha, scaleBits);
  // Pass 2: block by block, the codes again, coded; the error summed row by row.
  const blockCount = Math.ceil(n / blockRows);
  const blocks: Uint8Array[] = [];
  const codes: BlockCodes[] = [];
  const q = new Int32Array(Math.min(n, blockRows) * D);
  const { anchors, assign } = rows;
  let err = 0;
  for (let b = 0; b < blockCount; b++) {
    const r0 = b * blockRows, r1 = Math.min(n, r0 + blockRows);
    forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
      for (let i = c0; i < c1; i++) err += quantizeRow(v, (i - c0) * d, anchors, assign[i] * d, d, steps, offsets, q, (i - r0) * D);
    });
    const qb = q.subarray(0, (r1 - r0) * D);
    blocks.push(encodeBlock(qb, r1 - r0, alpha, models));
    codes.push(narrowed(qb));
  }
  // Where each block will sit in the payload, as a reader's table gives it (the encoder keeps the blocks apart).
  const blockAt = new Float64Array(blockCount + 1);
  blockAt[0] = sectionBytes(d, blockCount, writeModels(alpha, models).length, 0);
  for (let b = 0; b < blockCount; b++) blockAt[b + 1] = blockAt[b] + blocks[b].length;
  const layout: EcLayout = { blockRows, scaleBits, steps, offsets, dims: Int32Array.from(dimList), alpha, models, blockAt };
  const residuals = new EcResiduals(n, d, layout, (b) => ({ bytes: blocks[b], at: 0, size: blocks[b].length }), codes);
  return { residuals, residualEnergy: n ? err / n : 0, step };
}

/**
 * The step whose section is nearest `bytes` without exceeding it where it can: bisection on log Δ,
 * each step's coded dimensions chosen on the sample and its size estimated from the codes of up to
 * SEARCH_ROWS rows (estimateBytes).
 */
function searchBytes(
  cols: Columns, counted: Float64Array, n: number, d: number, bytes: number, blockRows: number, scale: Scale,
): { steps: Float32Array; step: number; scaleBits: number } {
  const size = (step: number) => {
    const p = stepPoint(cols, step);
    const steps = stepsOf(p.coded, p.step);
    const h = histogramFor(steps, cols.moments);
    countSample(counted, d, steps, h);
    return { steps, step: p.step, ...scaleOf(h, n, d, blockRows, scale) };
  };
  const overhead = sectionBytes(d, Math.ceil(n / blockRows), 0, 0);
  const guess = planStep(cols, { bits: Math.max(0, (8 * (bytes - overhead)) / Math.max(1, n)) }).step;
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

/** A rotated section's plan: the k coded directions (f16 as stored, and their values), the step, the sample's MSE. */
interface RotatedPlan {
  k: number;
  f16: Uint16Array;
  P: Float64Array;
  step: number;
  mse: number;
  /** Mean square of each coded coordinate on the sample. */
  moments: Float64Array;
  scaleBits: number;
}

/**
 * The principal directions of the residual sample (rotation.ts), the step along them meeting the
 * target (its coded directions chosen as on the axes, each also paying for its stored direction:
 * 2·d bytes), or null when no direction is worth coding.
 */
function planRotated(sample: Float64Array, n: number, d: number, target: EcTarget, blockRows: number, scale: Scale): RotatedPlan | null {
  const { vectors } = symmetricEigenFull(secondMomentMatrix(sample, d), d);
  const stored = asStored(vectors);
  const y = projectSample(sample, d, stored.values, d);
  const rc = columnsOf(y, d);
  const extra = (16 * d) / Math.max(1, n);
  let p: StepPoint;
  let scaleBits = scale === 'auto' ? DEFAULT_SCALE_BITS : scale;
  if ('payloadBytes' in target) {
    const size = (step: number) => {
      const at = stepPoint(rc, step, extra);
      const steps = stepsOf(at.coded, at.step);
      let K = 0;
      at.coded.forEach((c) => (K += c));
      const h = histogramFor(steps, rc.moments);
      countSample(y, d, steps, h);
      return { p: at, ...scaleOf(h, n, d, blockRows, scale, Math.max(1, K)) };
    };
    const overhead = sectionBytes(d, Math.ceil(n / blockRows), 0, 0);
    const guess = planStep(rc, { bits: Math.max(0, (8 * (target.payloadBytes - overhead)) / Math.max(1, n)) }, extra).step;
    ({ p, scaleBits } = searchSize(size, guess, target.payloadBytes));
  } else p = planStep(rc, target, extra);
  const idx: number[] = [];
  p.coded.forEach((c, k) => c && idx.push(k));
  if (!idx.length) return null;
  const K = idx.length;
  const f16 = new Uint16Array(K * d), P = new Float64Array(K * d);
  idx.forEach((k, c) => {
    f16.set(stored.f16.subarray(k * d, (k + 1) * d), c * d);
    P.set(stored.values.subarray(k * d, (k + 1) * d), c * d);
  });
  return { k: K, f16, P, step: p.step, mse: p.mse, moments: Float64Array.from(idx, (k) => rc.moments[k]), scaleBits };
}

/**
 * Every row's coordinates along the plan's directions, quantized at its step and counted (pass 1,
 * the codes held by block), then the blocks coded under the models (pass 2). The error is summed
 * in the rotated frame: the energy outside the coded directions plus each coordinate's.
 */
function encodeRotated(
  rows: RowsInput, n: number, d: number, plan: RotatedPlan, blockRows: number, scaleBits: number,
): { residuals: EcResiduals; residualEnergy: number; step: number } {
  const { k: K, P } = plan;
  const s = Math.fround(plan.step);
  const steps = new Float32Array(K).fill(s);
  const h = histogramFor(steps, plan.moments);
  const { lo, width, start, counts, escapes } = h;
  const blockCount = Math.ceil(n / blockRows);
  const held: BlockCodes[] = [];
  const q = new Int32Array(Math.min(n, blockRows) * K);
  const e2 = new Float64Array(K), se = new Float64Array(K), nz = new Float64Array(K);
  const r = new Float64Array(d);
  const { anchors, assign } = rows;
  let outside = 0;
  for (let b = 0; b < blockCount; b++) {
    const r0 = b * blockRows, r1 = Math.min(n, r0 + blockRows);
    forEachF32Rows(rows.x, r0, r1, (v, c0, c1) => {
      for (let i = c0; i < c1; i++) {
        const xo = (i - c0) * d, ao = assign[i] * d, qo = (i - r0) * K;
        let rr = 0, yy = 0;
        for (let j = 0; j < d; j++) {
          const t = v[xo + j] - anchors[ao + j];
          r[j] = t;
          rr += t * t;
        }
        for (let c = 0; c < K; c++) {
          const p = c * d;
          let t = 0;
          for (let j = 0; j < d; j++) t += P[p + j] * r[j];
          yy += t * t;
          let code = Math.round(t / s);
          code = code > MAX_CODE ? MAX_CODE : code < -MAX_CODE ? -MAX_CODE : code;
          q[qo + c] = code;
          const e = t - s * code;
          e2[c] += e * e;
          if (code !== 0) {
            se[c] += code > 0 ? e : -e;
            nz[c]++;
          }
          const w = code - lo[c];
          if (w >= 0 && w < width[c]) counts[start[c] + w]++;
          else escapes[c]++;
        }
        h.total++;
        outside += Math.max(0, rr - yy);
      }
    });
    held.push(narrowed(q.subarray(0, (r1 - r0) * K)));
  }
  const offsets = new Float32Array(K);
  let err = outside;
  for (let c = 0; c < K; c++) {
    if (nz[c] > 0) offsets[c] = Math.fround(Math.min(s / 2, Math.max(0, -se[c] / nz[c])));
    const o = offsets[c];
    err += e2[c] + 2 * o * se[c] + nz[c] * o * o;
  }
  const alpha = alphabetOf(h, scaleBits), models = modelsOf(h, alpha, scaleBits);
  const blocks: Uint8Array[] = [];
  for (let b = 0; b < blockCount; b++) {
    const rowsIn = Math.min(n, (b + 1) * blockRows) - b * blockRows;
    const qb = q.subarray(0, rowsIn * K);
    qb.set(held[b]);
    blocks.push(encodeBlock(qb, rowsIn, alpha, models));
  }
  const blockAt = new Float64Array(blockCount + 1);
  blockAt[0] = sectionBytes(d, blockCount, writeModels(alpha, models).length, 0, K);
  for (let b = 0; b < blockCount; b++) blockAt[b + 1] = blockAt[b] + blocks[b].length;
  const layout: EcLayout = {
    rotation: { k: K, f16: plan.f16, values: Float32Array.from(P) },
    blockRows, scaleBits, steps, offsets, dims: Int32Array.from({ length: K }, (_, c) => c), alpha, models, blockAt,
  };
  const residuals = new EcResiduals(n, d, layout, (b) => ({ bytes: blocks[b], at: 0, size: blocks[b].length }), held);
  return { residuals, residualEnergy: n ? err / n : 0, step: s };
}
