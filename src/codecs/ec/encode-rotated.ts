// The 'ec' codec along the residual's principal directions (RSDE layout 2): the directions of a
// residual sample (rotation.ts), the step along them, and every row's coordinates on the coded
// directions counted and coded as encode.ts does on the axes. encodeEc takes this layout where it
// keeps ROTATION_GAIN less error at the same bytes.
import type { RowsInput } from '../scalar-rows.js';
import { inBlockOrder, onEncoderThreads } from '../scalar.js';
import { sectionBytes, type EcLayout } from './blocks.js';
import type { EcTarget } from './encode.js';
import { addCounts, coderOf, ecPass } from './encode-blocks.js';
import { alphabetOf, modelsOf, writeModels } from './model.js';
import { EcResiduals } from './residuals.js';
import { secondMomentMatrix, symmetricEigenFull } from '../eigen.js';
import { asStored, projectSample } from './rotation.js';
import { DEFAULT_SCALE_BITS, histogramFor, searchStep, type Scale } from './size.js';
import { columnsOf, planStep, type StepPoint } from './steps.js';

/** A rotated section's plan: the k coded directions (f16 as stored, and their values), the step, the sample's MSE. */
export interface RotatedPlan {
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
export function planRotated(sample: Float64Array, n: number, d: number, target: EcTarget, blockRows: number, scale: Scale): RotatedPlan | null {
  const { vectors } = symmetricEigenFull(secondMomentMatrix(sample, sample.length / d, d), d);
  const stored = asStored(vectors);
  const y = projectSample(sample, d, stored.values, d);
  const rc = columnsOf(y, d);
  const extra = (16 * d) / Math.max(1, n);
  let p: StepPoint;
  let scaleBits = scale === 'auto' ? DEFAULT_SCALE_BITS : scale;
  if ('payloadBytes' in target) ({ p, scaleBits } = searchStep(rc, y, n, d, target.payloadBytes, blockRows, scale, { extraBits: extra }));
  else p = planStep(rc, target, extra);
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
 * planRotated on a kept encoder thread while `here()` runs on this one (encodeEc: the plain axes'
 * plan): the same plan as this thread would make, from the same code on the same sample.
 */
export async function planRotatedBeside(
  rows: RowsInput, n: number, sample: Float64Array, target: EcTarget, blockRows: number, scale: Scale, here: () => void,
): Promise<RotatedPlan | null> {
  const pending = onEncoderThreads<{ plan: RotatedPlan | null }>(rows, n, 1, 1, { phase: 'ec', ec: { pass: 'plan', sample, target, blockRows, scale } });
  await new Promise((go) => setImmediate(go)); // the job posted before this thread gets busy
  try {
    here();
  } catch (e) {
    await pending.catch(() => {});
    throw e;
  }
  return (await pending).answers[0].plan;
}

/**
 * Every row's coordinates along the plan's directions, quantized at its step and counted (pass 1,
 * the codes held by block), then the blocks coded under the models (pass 2), each pass on `threads`
 * threads (encode-blocks.ts). The error is summed in the rotated frame: the energy outside the coded
 * directions plus each coordinate's, each block's sums added in block order.
 */
export async function encodeRotated(
  rows: RowsInput, n: number, d: number, plan: RotatedPlan, blockRows: number, scaleBits: number, threads: number,
): Promise<{ residuals: EcResiduals; residualEnergy: number; step: number }> {
  const { k: K, P } = plan;
  const s = Math.fround(plan.step);
  const steps = new Float32Array(K).fill(s);
  const h = histogramFor(steps, plan.moments);
  const blockCount = Math.ceil(n / blockRows);
  const W = 3 * K + 1;
  const sums = new Float64Array(new SharedArrayBuffer(Math.max(1, blockCount * W) * 8));
  const projected = await ecPass(rows, n, threads, { pass: 'project', blockRows, P, K, step: s, window: { lo: h.lo, width: h.width }, sums: sums.buffer as SharedArrayBuffer });
  addCounts(h, projected.answers);
  const held = inBlockOrder(projected.lists, projected.answers, (a) => a.codes!);
  // Per coordinate: Σ e², Σ sgn(q)·e, the count of q ≠ 0; then the energy outside the directions.
  const total = new Float64Array(W);
  for (let b = 0; b < blockCount; b++) for (let j = 0; j < W; j++) total[j] += sums[b * W + j];
  const offsets = new Float32Array(K);
  let err = total[3 * K];
  for (let c = 0; c < K; c++) {
    const e2 = total[c], se = total[K + c], nz = total[2 * K + c];
    if (nz > 0) offsets[c] = Math.fround(Math.min(s / 2, Math.max(0, -se / nz)));
    const o = offsets[c];
    err += e2 + 2 * o * se + nz * o * o;
  }
  const alpha = alphabetOf(h, scaleBits), models = modelsOf(h, alpha, scaleBits);
  const coded = await ecPass(rows, n, threads, { pass: 'blocks', blockRows, codes: held, coder: coderOf(alpha, models) });
  const blocks = inBlockOrder(coded.lists, coded.answers, (a) => a.bytes!);
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
