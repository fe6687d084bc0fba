// On a real GPU: pq's subspaces trained several at once (TrainEngine.smallEnginesAtOnce, as the CUDA
// backend does) give the bytes of one at a time, on odd sizes, f32 and f16, with the training sample
// every vector or a part of them. Skipped without one.
import { describe, expect, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { encodePq } from '../../dist/codec-train/pq.js';
import { bytes, problem } from '../cuda-host/residual-problem.js';

const hasGpu = probeCuda().ok;

describe.skipIf(!hasGpu)('pq trained several subspaces at once on the GPU = one at a time', () => {
  for (const [n, d, m, dtype, M, bits, sample] of [
    [20_011, 67, 33, 'f32', 13, 8, undefined],
    [9_973, 131, 17, 'f16', 11, 4, 3_001],
  ] as const) {
    it(`${n} × ${d} ${dtype}, ${M} subspaces of ${bits} bits${sample ? `, trained on ${sample} rows` : ''}`, async () => {
      const input = problem(n, d, m, dtype, 0, n + d);
      const backend = await createCudaBackend(0);
      try {
        expect(backend.smallEnginesAtOnce).toBeGreaterThan(1);
        const o = { subspaces: M, bits, seed: 7, maxIters: 12, ...(sample ? { sample } : {}) };
        const one = bytes((await encodePq(input, backend, { ...o, atOnce: 1 })).payload());
        const many = bytes((await encodePq(input, backend, o)).payload());
        expect(many.equals(one)).toBe(true);
      } finally {
        await backend.close();
      }
    }, 120_000);
  }
});
