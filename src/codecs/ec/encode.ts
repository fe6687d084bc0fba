// The 'ec' codec's encoder: the step by reverse water-filling on a sample (steps.ts), every row's
// codes counted into static models (two passes: count, then code), the blocks coded (blocks.ts);
// the passes a block of rows at a time on the encoder threads (encode-blocks.ts).
// With a byte target the step is searched on a sample's coded size estimate (size.ts); along the
// residual's principal directions where that pays (encode-rotated.ts).
// Deterministic: the samples are fixed rows; every sum over the rows runs in row order within a
// block, then block by block in block order (whatever thread ran each block).
import { residualSample } from '../scalar-rows.js';
import { encoderThreadCount, inBlockOrder, PARALLEL_MIN_VALUES, rowsInput } from '../scalar.js';
import type { ResidualInput } from '../types.js';
import { DEFAULT_BLOCK_ROWS, sectionBytes, type EcLayout } from './blocks.js';
import { encodeRotated, planRotated, planRotatedBeside, type RotatedPlan } from './encode-rotated.js';
import { addCounts, codedDims, coderOf, ecPass } from './encode-blocks.js';
import { alphabetOf, modelsOf, writeModels } from './model.js';
import { EcResiduals } from './residuals.js';
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
  /**
   * Threads the passes over every row run on (the residual encoders' kept workers: encode-blocks.ts);
   * the bytes are the same for any number. Default: one below PARALLEL_MIN_VALUES values, else every core (at most 16).
   */
  threads?: number;
}

/** The rotated layout is taken when it keeps this much less error (its decode costs k·d a row, not d). */
const ROTATION_GAIN = 0.05;

/**
 * The 'ec' residuals of every vector, and their mean squared error (x against the reconstruction as
 * a decoder holds it).
 */
export async function encodeEc(input: ResidualInput, target: EcTarget, opts: EcOptions = {}): Promise<{ residuals: EcResiduals; residualEnergy: number; step: number }> {
  const { n, d } = input;
  const blockRows = opts.blockRows ?? DEFAULT_BLOCK_ROWS;
  const t = Math.max(1, Math.min(opts.threads ?? (n * d < PARALLEL_MIN_VALUES ? 1 : encoderThreadCount()), Math.ceil(n / blockRows)));
  // A byte target picks the models' precision too, unless one is given (scaleOf).
  const scale: Scale = opts.scaleBits ?? ('payloadBytes' in target ? 'auto' : DEFAULT_SCALE_BITS);
  let scaleBits = scale === 'auto' ? DEFAULT_SCALE_BITS : scale;
  const rows = rowsInput(input, t > 1);
  const sample = residualSample(rows, n, SAMPLE_ROWS);
  const cols = columnsOf(sample, d);
  const moments = cols.moments;
  const rotate = opts.rotate ?? ('payloadBytes' in target ? 'auto' : false);
  let steps: Float32Array;
  let step: number;
  let plainMse = Infinity;
  let planned = false;
  const planAxes = () => {
    if ('payloadBytes' in target) {
      const found = searchStep(cols, residualSample(rows, n, SEARCH_ROWS), n, d, target.payloadBytes, blockRows, scale);
      (steps = found.steps), (step = found.p.step), (scaleBits = found.scaleBits);
      plainMse = stepPoint(cols, step).mse;
    } else {
      const p = planStep(cols, target);
      (steps = stepsOf(p.coded, p.step)), (step = p.step);
      plainMse = p.mse;
    }
    planned = true;
  };
  if (rotate !== false && d >= 2 && n >= 2) {
    // Both layouts planned ('auto'): the principal directions' on a kept thread meanwhile, where there are threads.
    let r: RotatedPlan | null;
    if (rotate === 'auto' && t > 1) r = await planRotatedBeside(rows, n, sample, target, blockRows, scale, planAxes);
    else {
      if (rotate === 'auto') planAxes();
      r = planRotated(sample, n, d, target, blockRows, scale);
    }
    if (r && (rotate === true || r.mse < plainMse * (1 - ROTATION_GAIN))) return encodeRotated(rows, n, d, r, blockRows, r.scaleBits, t);
  }
  // The plain axes (rotate true: d or n below 2, or no direction worth coding).
  if (!planned) planAxes();
  steps = steps!;
  step = step!;
  const dims = codedDims(steps);
  const D = dims.length;
  const blockCount = Math.ceil(n / blockRows);
  // Pass 1: every row's codes counted, and each block's offset sums (added in block order).
  const h = histogramFor(steps, moments);
  const sums = new Float64Array(new SharedArrayBuffer(Math.max(1, blockCount * 2 * D) * 8));
  const counted = await ecPass(rows, n, t, { pass: 'count', blockRows, steps, window: { lo: h.lo, width: h.width }, sums: sums.buffer as SharedArrayBuffer });
  addCounts(h, counted.answers);
  const offsets = new Float32Array(d);
  dims.forEach((k, c) => {
    let sum = 0, count = 0;
    for (let b = 0; b < blockCount; b++) (sum += sums[b * 2 * D + c]), (count += sums[b * 2 * D + D + c]);
    // Within [0, step / 2]: the levels keep their order and their side of 0.
    if (count > 0) offsets[k] = Math.fround(Math.min(steps[k] / 2, Math.max(0, sum / count)));
  });
  const alpha = alphabetOf(h, scaleBits), models = modelsOf(h, alpha, scaleBits);
  // Pass 2: each block's codes again, coded; the blocks' errors added in block order.
  const coded = await ecPass(rows, n, t, { pass: 'code', blockRows, steps, offsets, coder: coderOf(alpha, models) });
  const blocks = inBlockOrder(coded.lists, coded.answers, (a) => a.bytes!);
  const codes = inBlockOrder(coded.lists, coded.answers, (a) => a.codes!);
  let err = 0;
  for (const e of inBlockOrder(coded.lists, coded.answers, (a) => a.errs!)) err += e;
  // Where each block will sit in the payload, as a reader's table gives it (the encoder keeps the blocks apart).
  const blockAt = new Float64Array(blockCount + 1);
  blockAt[0] = sectionBytes(d, blockCount, writeModels(alpha, models).length, 0);
  for (let b = 0; b < blockCount; b++) blockAt[b + 1] = blockAt[b] + blocks[b].length;
  const layout: EcLayout = { blockRows, scaleBits, steps, offsets, dims, alpha, models, blockAt };
  const residuals = new EcResiduals(n, d, layout, (b) => ({ bytes: blocks[b], at: 0, size: blocks[b].length }), codes);
  return { residuals, residualEnergy: n ? err / n : 0, step };
}
