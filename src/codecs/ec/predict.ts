// What an 'ec' section would keep and cost at a step, without coding it: for `--quality`'s search
// (quality/search.ts), which asks for the plan that leaves a given error and measures only the
// plans it picks. The same samples and sums as the encoder's byte-target search (size.ts): the
// step's coded dimensions and MSE on the sample of SAMPLE_ROWS rows (steps.ts), its section's
// bytes estimated from the codes of SEARCH_ROWS rows at the models' best precision (scaleOf).
// Along the plain axes only: the principal directions' plan (an eigendecomposition of the d × d
// covariance and a projection of the sample) costs more than the whole search it would serve.
import { residualSample } from '../scalar-rows.js';
import { rowsInput } from '../scalar.js';
import type { ResidualInput } from '../types.js';
import { DEFAULT_BLOCK_ROWS } from './blocks.js';
import { SAMPLE_ROWS, SEARCH_ROWS, countSample, histogramFor, scaleOf, stepsOf } from './size.js';
import { columnsOf, planStep, stepPoint, type Columns } from './steps.js';

/** A step's predicted section: its coded dimensions, MSE a vector on the sample, bytes for n rows, and the models' precision. */
export interface EcPrediction {
  step: number;
  coded: number;
  mse: number;
  bytes: number;
  scaleBits: number;
}

export interface EcPredictor {
  /** The largest step whose sample MSE is at most `mse` (nothing coded when the residual's own error is within it). */
  stepFor(mse: number): number;
  /** The section at `step` for n rows like these (n: the whole file's, the sample standing for it). */
  at(step: number, n: number): EcPrediction;
}

/** One predictor per input rows (the chooser asks several errors of one sample). */
const known = new WeakMap<object, { anchors: Float32Array; assign: ArrayLike<number>; predictor: EcPredictor }>();

export function ecPredictor(input: ResidualInput): EcPredictor {
  const hit = known.get(input.x);
  if (hit && hit.anchors === input.anchors && hit.assign === input.assign) return hit.predictor;
  const { n, d } = input;
  const rows = rowsInput(input, false);
  const cols: Columns = columnsOf(residualSample(rows, n, SAMPLE_ROWS), d);
  let counted: Float64Array | undefined;
  const predictor: EcPredictor = {
    stepFor: (mse) => planStep(cols, { mse }).step,
    at(step, nAll) {
      const p = stepPoint(cols, step);
      const steps = stepsOf(p.coded, p.step);
      const h = histogramFor(steps, cols.moments);
      countSample((counted ??= residualSample(rows, n, SEARCH_ROWS)), d, steps, h);
      const { bytes, scaleBits } = scaleOf(h, nAll, d, DEFAULT_BLOCK_ROWS, 'auto');
      let coded = 0;
      p.coded.forEach((c) => (coded += c));
      return { step: p.step, coded, mse: p.mse, bytes: Math.ceil(bytes), scaleBits };
    },
  };
  known.set(input.x, { anchors: input.anchors, assign: input.assign, predictor });
  return predictor;
}
