// The 'ec' codec along the residual's principal directions (RSDE layout 2): the directions of a
// residual sample (rotation.ts), the step along them, and every row's coordinates on the coded
// directions counted and coded as encode.ts does on the axes. encodeEc takes this layout where it
// keeps ROTATION_GAIN less error at the same bytes.
import { forEachF32Rows } from '../../vectors/dataset.js';
import type { RowsInput } from '../scalar-rows.js';
import { encodeBlock, sectionBytes, type EcLayout } from './blocks.js';
import type { EcTarget } from './encode.js';
import { MAX_CODE, alphabetOf, modelsOf, writeModels } from './model.js';
import { EcResiduals, narrowed, type BlockCodes } from './residuals.js';
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
 * Every row's coordinates along the plan's directions, quantized at its step and counted (pass 1,
 * the codes held by block), then the blocks coded under the models (pass 2). The error is summed
 * in the rotated frame: the energy outside the coded directions plus each coordinate's.
 */
export function encodeRotated(
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
