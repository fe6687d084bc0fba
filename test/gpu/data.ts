// Random test vectors shared by the GPU suites: uniform in ±1 around a per-row level
// ((row % 7)·0.5, plus offset), as a Dataset (f32, or f16 rounded) and exactly as f64 for the reference.
import { datasetFromArray, f16ToF32, f32ToF16, type Dataset } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

export function randomData(n: number, d: number, dtype: 'f32' | 'f16', seed: number, offset = 0) {
  const r = rng(seed);
  const X = new Float64Array(n * d);
  const data = dtype === 'f32' ? new Float32Array(n * d) : new Uint16Array(n * d);
  for (let e = 0; e < n * d; e++) {
    const v = offset + (r() - 0.5) * 2 + ((e / d) % 7 | 0) * 0.5;
    if (dtype === 'f32') X[e] = (data[e] = v);
    else X[e] = f16ToF32((data[e] = f32ToF16(v)));
  }
  const ds: Dataset = datasetFromArray(data, n, d, 'test');
  return { ds, X };
}
