// The inputs of the residual codec tests, host (test/cuda-host/residual.test.ts) and GPU
// (test/gpu/residual.test.ts): n × d vectors around `offset`, one dimension without spread, anchors
// taken from the rows, random assignments.
import { datasetFromArray, f32ToF16, f16ToF32 } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';
import type { CodedResiduals } from '../../dist/codecs/types.js';
import { reconstructInto } from '../../dist/io/vlc/reconstruct.js';
import { reconstructionQuality } from '../../dist/quality/reconstruction.js';
import type { Rows } from '../../dist/quality/sample.js';

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


/**
 * The host's reconstruction figures (quality/reconstruction.ts) of `rows` of the problem's vectors
 * decoded with `residuals`: what the GPU encoder's figures (measureRows) must equal, to the bit.
 */
export function hostFigures(input: ReturnType<typeof problem>, residuals: CodedResiduals, rows: Rows) {
  const file = { manifest: { d: input.d }, anchors: input.anchors, assignments: input.assign, residuals };
  return reconstructionQuality(input.x, input.n, input.d, (i, out) => void reconstructInto(file, i, out), rows);
}

/** A payload, in one piece or several, as one Buffer. */
export const bytes = (p: Uint8Array | Uint8Array[]) => Buffer.concat(Array.isArray(p) ? p : [p]);
