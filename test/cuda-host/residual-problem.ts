// The inputs of the residual codec tests, host (test/cuda-host/residual.test.ts) and GPU
// (test/gpu/residual.test.ts): n × d vectors around `offset`, one dimension without spread, anchors
// taken from the rows, random assignments.
import { datasetFromArray, f32ToF16, f16ToF32 } from '../../dist/io/dataset.js';
import { rng } from '../rng.js';

export function problem(n: number, d: number, m: number, dtype: 'f32' | 'f16', offset: number, seed: number) {
  const r = rng(seed);
  const v = Float32Array.from({ length: n * d }, (_, e) => (e % d === 3 ? 0.5 : offset + (r() - 0.5) * 3));
  const data = dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16);
  const x = datasetFromArray(data, n, d, 'test');
  const rows = (i: number) => Array.from({ length: d }, (_, k) => (dtype === 'f32' ? v[i * d + k] : f16ToF32(f32ToF16(v[i * d + k]))));
  // Anchors are some of the rows (ties: residuals of exactly half a step happen), as stored (f32 here).
  const anchors = Float32Array.from({ length: m * d }, (_, e) => rows(Math.floor(e / d) * 7)[e % d]);
  const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
  return { x, n, d, anchors, assign };
}


/** A payload, in one piece or several, as one Buffer. */
export const bytes = (p: Uint8Array | Uint8Array[]) => Buffer.concat(Array.isArray(p) ? p : [p]);
