// datasetScale, the scale compress trains at, stops early on f16 data once a value reaches the safe
// band; it must give what the full scan gives (scaleFor(maxAbsOf(x))) at every magnitude.
import { describe, expect, it } from 'vitest';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { datasetScale, maxAbsOf, scaleFor } from '../../dist/vectors/scale.js';
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
