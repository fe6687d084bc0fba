// int4's per-dimension clip (src/codecs/scalar.ts scalesOf): each dimension's range is chosen on a
// sample of residuals (the 90 % of rows nearest their anchors), so a dimension with heavy tails
// keeps its outliers and a Gaussian one is clipped near 2.6 × RMS; any number of encoder threads
// writes the same codes.
import { describe, expect, it } from 'vitest';
import { CLIP_SAMPLE_ROWS, encodeScalar, int4RangesWork, scalesOf, type Int4RangesTask } from '../../dist/codecs/scalar.js';
import { onDimensions, sharedF64 } from '../../dist/codecs/dims-on-threads.js';
import { residualSample } from '../../dist/codecs/scalar-rows.js';
import { asRows } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

/** n × 3 residuals (anchor 0): a wide Gaussian dimension (most of each row's norm), a spiky one (mostly ~0, 5 % ±50), a uniform one. */
function data(n: number, seed: number): Float32Array {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const x = new Float32Array(new SharedArrayBuffer(n * 3 * 4));
  for (let i = 0; i < n; i++) {
    x[i * 3] = 60 * gauss();
    x[i * 3 + 1] = r() < 0.05 ? (r() < 0.5 ? -50 : 50) + gauss() : 0.2 * gauss();
    x[i * 3 + 2] = 2 * r() - 1;
  }
  return x;
}

/** Squared int4 error of dimension k with the given scale. */
function int4Err(x: Float32Array, n: number, k: number, s: number): number {
  let e = 0;
  for (let i = 0; i < n; i++) {
    const v = x[i * 3 + k];
    const q = Math.max(-7, Math.min(7, Math.round(v / s)));
    e += (v - Math.fround(s * q)) ** 2;
  }
  return e;
}

describe('int4 clip per dimension', () => {
  const n = 20_000, d = 3;
  const x = data(n, 11);
  const anchors = new Float32Array(d);
  const assign = new Uint32Array(n);

  it('beats the fixed 2.6 × RMS clip where tails are heavy and is never worse on the sample', () => {
    const maxAbs = new Float64Array(d), sumSq = new Float64Array(d);
    for (let i = 0; i < n; i++)
      for (let k = 0; k < d; k++) {
        maxAbs[k] = Math.max(maxAbs[k], Math.abs(x[i * d + k]));
        sumSq[k] += x[i * d + k] ** 2;
      }
    const sample = residualSample({ x: asRows(x, n, d), d, anchors, assign }, n, CLIP_SAMPLE_ROWS);
    expect(sample.length).toBe(CLIP_SAMPLE_ROWS * d);
    const chosen = scalesOf('int4', n, d, 1, maxAbs, sumSq, sample);
    const fixed = scalesOf('int4', n, d, 1, maxAbs, sumSq);
    for (let k = 0; k < d; k++) expect(chosen[k]).toBeGreaterThan(0);
    // The spiky dimension: 2.6 × RMS (RMS ≈ 11) clips the ±50 spikes; the chosen range keeps them.
    expect(chosen[1] * 7).toBeGreaterThan(45);
    expect(int4Err(x, n, 1, chosen[1])).toBeLessThan(0.5 * int4Err(x, n, 1, fixed[1]));
    // Gaussian and uniform: within 5 % of the fixed clip's error over all rows (chosen on a sample).
    for (const k of [0, 2]) expect(int4Err(x, n, k, chosen[k])).toBeLessThan(1.05 * int4Err(x, n, k, fixed[k]));
  });

  it('chooses the same ranges on worker threads as on the caller\'s (dims-on-threads.ts)', () => {
    const r = rng(21);
    const dd = 37, rows = 3001;
    const sample = Float64Array.from({ length: rows * dd }, (_, e) => (r() - 0.5) * (1 + (e % dd)) * (r() < 0.02 ? 30 : 1));
    const task = (): Int4RangesTask => ({
      kind: 'int4-range', sample: sharedF64(sample), d: dd,
      mx: sharedF64(Float64Array.from({ length: dd }, (_, k) => 15 * (1 + k))), rms: sharedF64(Float64Array.from({ length: dd }, (_, k) => 0.3 * (1 + k))),
      range: sharedF64(new Float64Array(dd)),
    });
    const here = task(), there = task();
    onDimensions(here, dd, 1, int4RangesWork(here));
    onDimensions(there, dd, 3, int4RangesWork(there), false); // every dimension on the workers
    expect(Array.from(there.range)).toEqual(Array.from(here.range));
    expect(new Set(here.range).size).toBeGreaterThan(1);
  });

  it('writes the same scales and codes on one thread and on two', async () => {
    const input = { x, n, d, anchors, assign };
    const one = (await encodeScalar('int4', input, 1)).residuals;
    const two = (await encodeScalar('int4', input, 2)).residuals;
    expect(Array.from(two.scales)).toEqual(Array.from(one.scales));
    expect(Buffer.from(two.codes.buffer, two.codes.byteOffset, two.codes.length).equals(Buffer.from(one.codes.buffer, one.codes.byteOffset, one.codes.length))).toBe(true);
  });
});
