// The 'ec' codec's encoder: the step by reverse water-filling on a sample (steps.ts), every row's
// codes counted into static models (two passes: count, then code), the blocks coded (blocks.ts).
// With a byte target the step is searched on a sample's coded size estimate (size.ts); along the
// residual's principal directions where that pays (encode-rotated.ts).
// Deterministic: the samples are fixed rows, every sum runs in row order.
import { forEachF32Rows } from '../../vectors/dataset.js';
import { residualSample, type RowsInput } from '../scalar-rows.js';
import { rowsInput } from '../scalar.js';
import type { ResidualInput } from '../types.js';
import { DEFAULT_BLOCK_ROWS, encodeBlock, sectionBytes, type EcLayout } from './blocks.js';
import { encodeRotated, planRotated } from './encode-rotated.js';
import { MAX_CODE, alphabetOf, modelsOf, writeModels, type CodeHistogram } from './model.js';
import { EcResiduals, narrowed, type BlockCodes } from './residuals.js';
import { DEFAULT_SCALE_BITS, SAMPLE_ROWS, SEARCH_ROWS, histogramFor, searchStep, stepsOf, type Scale } from './size.js';
import { columnsOf, planStep, stepPoint, type StepTarget } from './steps.js';

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
      const found = searchStep(cols, counted, n, d, target.payloadBytes, blockRows, scale);
      (steps = found.steps), (step = found.p.step), (scaleBits = found.scaleBits);
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
    else {
      const found = searchStep(cols, residualSample(rows, n, SEARCH_ROWS), n, d, (target as { payloadBytes: number }).payloadBytes, blockRows, scale);
      (steps = found.steps), (step = found.p.step), (scaleBits = found.scaleBits);
    }
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

