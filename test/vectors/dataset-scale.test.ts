// datasetScale, the scale compress trains at, stops early on f16 data once a value reaches the safe
// band; it must give what the full scan gives (scaleFor(maxAbsOf(x))) at every magnitude.
import { describe, expect, it } from 'vitest';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { datasetScale, maxAbsOf, scaleFor, scaleMagnitude } from '../../dist/vectors/scale.js';
import { rng } from '../rng.js';

function rowsOf(values: number[], dtype: 'f16' | 'f32', d: number) {
  const n = values.length / d;
  if (dtype === 'f32') {
    const a = new Float32Array(new SharedArrayBuffer(values.length * 4));
    a.set(values);
    return { dtype, buffer: a.buffer as SharedArrayBuffer, byteOffset: 0, n, d };
  }
  const h = new Uint16Array(new SharedArrayBuffer(values.length * 2));
  values.forEach((v, i) => (h[i] = f32ToF16(v)));
  return { dtype, buffer: h.buffer as SharedArrayBuffer, byteOffset: 0, n, d };
}

describe('datasetScale', () => {
  it('equals the full scan for f16 and f32 data of every magnitude, the largest value anywhere', () => {
    const r = rng(3);
    for (const mag of [1e-9, 6e-8, 2 ** -17, 2 ** -16, 2 ** -15, 1e-3, 1, 3e4, 65504, 1e6, 1e19])
      for (const dtype of ['f16', 'f32'] as const)
        for (const at of [0, 77, 299]) {
          const d = 3;
          const values = Array.from({ length: 300 }, () => (r() - 0.5) * mag * 1e-3);
          values[at] = mag * (at % 2 ? -1 : 1);
          const x = rowsOf(values, dtype, d);
          expect(datasetScale(x), `${dtype} ${mag} at ${at}`).toBe(scaleFor(maxAbsOf(x)));
        }
  });
});

describe('scaleMagnitude (each MPI rank\'s part of the scale, combined by max)', () => {
  it('gives the scale of the whole data when maximised over its parts, f16 parts stopping early', () => {
    const r = rng(5);
    for (const mags of [[1e-9, 1], [2 ** -17, 2 ** -17], [1e-3, 65504], [3e4, 1e-9], [1e-9, 6e-8], [1e6, 1e-3], [1e19, 1]])
      for (const dtype of ['f16', 'f32'] as const) {
        const parts = mags.map((mag) => {
          const values = Array.from({ length: 60 }, () => (r() - 0.5) * mag * 1e-3);
          values[17] = -mag;
          return { values, x: rowsOf(values, dtype, 3) };
        });
        const whole = rowsOf(parts.flatMap((p) => p.values), dtype, 3);
        const combined = Math.max(...parts.map((p) => scaleMagnitude(p.x)));
        expect(scaleFor(combined), `${dtype} ${mags}`).toBe(datasetScale(whole));
        expect(scaleFor(combined), `${dtype} ${mags}`).toBe(scaleFor(maxAbsOf(whole)));
      }
  });
});

describe('maxAbsOf over listed rows (the recall plan\'s base)', () => {
  it('is the largest |x| of those rows, read by the bits, f16 and f32, at every magnitude', async () => {
    const { f16ToF32 } = await import('../../dist/vectors/dataset.js');
    const r = rng(8);
    const d = 7;
    for (const mag of [6e-8, 1e-3, 1, 300, 65504, 1e12])
      for (const dtype of ['f16', 'f32'] as const) {
        const values = Array.from({ length: 41 * d }, () => (r() - 0.5) * 2 * Math.min(mag, dtype === 'f16' ? 65504 : mag));
        const x = rowsOf(values, dtype, d);
        const list = [40, 3, 17, 3, 29];
        const stored = (v: number) => (dtype === 'f16' ? f16ToF32(f32ToF16(v)) : Math.fround(v));
        const want = Math.max(0, ...list.flatMap((row) => values.slice(row * d, row * d + d).map((v) => Math.abs(stored(v)))));
        expect(maxAbsOf(x, list), `${dtype} ${mag}`).toBe(want);
        expect(maxAbsOf(x, [])).toBe(0);
      }
  });
});
