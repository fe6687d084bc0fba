// The 'bits' codec's encoder (codecs/bits.ts): which bits and step each dimension gets, chosen on a
// sample of residuals, then every vector's codes. Deterministic: the sample is fixed rows
// (residualSample), the allocation breaks ties by dimension, so the same input gives the same bytes.
import { checkpoint } from '../interrupt.js';
import { asRows, forEachF32Rows, pieceRows } from '../io/dataset.js';
import { BitsResiduals, MAX_BITS, levelOffset } from './bits.js';
import { residualSample } from './scalar-rows.js';
import type { ResidualInput } from './types.js';

/** Rows of the sample the bits and steps are chosen on (all rows when fewer). */
const SAMPLE_ROWS = 4096;
/** Candidate ranges, in RMS residuals of the dimension (the largest |r| is tried too). */
const RANGES = [1, 1.5, 2, 2.6, 3, 3.5, 4, 5, 6, 8];

const quantize = (r: number, s: number, b: number) => {
  const L = (1 << b) - 1;
  const q = Math.round(r / s) + levelOffset(b);
  return q < 0 ? 0 : q > L ? L : q;
};

/**
 * Per dimension and bit count (0..8): the step with the least squared error on the sample, and
 * that error. err[k·9 + b], step[k·9 + b] (b = 0: no code, the error of r̂ = 0).
 */
function stepTable(sample: Float64Array, d: number): { err: Float64Array; step: Float64Array } {
  const rows = sample.length / d;
  const err = new Float64Array(d * (MAX_BITS + 1)), step = new Float64Array(d * (MAX_BITS + 1));
  const col = new Float64Array(rows);
  for (let k = 0; k < d; k++) {
    let sq = 0, mx = 0;
    for (let j = 0; j < rows; j++) {
      const r = (col[j] = sample[j * d + k]);
      sq += r * r;
      if (Math.abs(r) > mx) mx = Math.abs(r);
    }
    err[k * (MAX_BITS + 1)] = sq;
    const rms = Math.sqrt(sq / Math.max(1, rows));
    for (let b = 1; b <= MAX_BITS; b++) {
      let best = Infinity, bestStep = 0;
      if (mx > 0)
        for (const range of [...RANGES.map((c) => Math.min(mx, c * rms)), mx]) {
          const s = Math.fround((2 * range) / ((1 << b) - 1));
          if (!(s > 0)) continue;
          const off = levelOffset(b);
          let e = 0;
          for (let j = 0; j < rows; j++) e += (col[j] - s * (quantize(col[j], s, b) - off)) ** 2;
          if (e < best) {
            best = e;
            bestStep = s;
          }
        }
      err[k * (MAX_BITS + 1) + b] = mx > 0 ? best : 0;
      step[k * (MAX_BITS + 1) + b] = bestStep;
    }
  }
  return { err, step };
}

/**
 * Bits per dimension, at most 8·R in all: repeatedly the dimension and the number of bits to add
 * to it (one or more) that lower the sample's error most per bit added (ties: the lower dimension,
 * then fewer bits). More than one at a time because the error need not fall evenly: 1 bit (levels at
 * ±range) can cost a dimension more than 0 bits where 2 or more pay well.
 */
export function allocateBits(err: Float64Array, d: number, R: number): Uint8Array {
  const bits = new Uint8Array(d);
  const W = MAX_BITS + 1;
  for (let left = 8 * R; left > 0; ) {
    let bestK = -1, bestAdd = 0, bestRate = 0;
    for (let k = 0; k < d; k++) {
      const b = bits[k], e = err[k * W + b];
      for (let to = b + 1; to <= Math.min(MAX_BITS, b + left); to++) {
        const rate = (e - err[k * W + to]) / (to - b);
        if (rate > bestRate) {
          bestRate = rate;
          bestK = k;
          bestAdd = to - b;
        }
      }
    }
    if (bestK < 0) break; // no bits lower the error any more
    bits[bestK] += bestAdd;
    left -= bestAdd;
  }
  return bits;
}

/**
 * The 'bits' residuals of every vector with R code bytes each, and their mean squared error (x
 * against the reconstruction as a decoder holds it: f32(anchor + s·(q − o))), summed as it codes.
 */
export async function encodeBits(input: ResidualInput, R: number): Promise<{ residuals: BitsResiduals; residualEnergy: number }> {
  const { n, d, anchors } = input;
  const assign = input.assign instanceof Uint32Array ? input.assign : Uint32Array.from(input.assign);
  const x = asRows(input.x, n, d);
  const { err, step } = stepTable(residualSample({ x, d, anchors, assign }, n, SAMPLE_ROWS), d);
  const bits = allocateBits(err, d, R);
  const steps = Float32Array.from(bits, (b, k) => step[k * (MAX_BITS + 1) + b]);
  // Only the coded dimensions are visited in the row loop; the others decode to the anchor.
  const coded = Int32Array.from(Array.from(bits.keys()).filter((k) => bits[k] > 0));
  const offsets = Float64Array.from(bits, levelOffset);
  const tops = Float64Array.from(bits, (b) => (1 << b) - 1);
  const codes = new Uint8Array(n * R);
  let sum = 0;
  const per = pieceRows(d, x.dtype);
  for (let c0 = 0; c0 < n; c0 += per) {
    await checkpoint(); // Ctrl-C is heard between pieces of rows
    forEachF32Rows(x, c0, Math.min(n, c0 + per), (v, r0, r1) => {
      for (let i = r0; i < r1; i++) {
        const a = assign[i] * d, o = (i - r0) * d, row = i * R;
        let rowErr = 0;
        for (let k = 0; k < d; k++) {
          if (bits[k] !== 0) continue;
          const e = v[o + k] - anchors[a + k];
          rowErr += e * e;
        }
        let bit = 0;
        for (let c = 0; c < coded.length; c++) {
          const k = coded[c], s = steps[k], off = offsets[k], xv = v[o + k], av = anchors[a + k];
          let q = Math.round((xv - av) / s) + off;
          q = q < 0 ? 0 : q > tops[k] ? tops[k] : q;
          const e = xv - Math.fround(av + s * (q - off));
          rowErr += e * e;
          const at = row + (bit >> 3), sh = bit & 7, w = q << sh;
          codes[at] |= w & 0xff;
          if (sh + bits[k] > 8) codes[at + 1] |= w >> 8;
          bit += bits[k];
        }
        sum += rowErr;
      }
    });
  }
  return { residuals: new BitsResiduals(n, d, R, bits, steps, codes), residualEnergy: n ? sum / n : 0 };
}
