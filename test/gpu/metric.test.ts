// On a real GPU: --metric ip and cosine rank on the GPU's exact k-NN over vectors one dimension
// longer (src/search/metric.ts), the candidates rescored exactly — the same lists as on the CPU —
// both for raw vectors and for `vlc search`'s exhaustive path over a file's decoded vectors
// (search/exhaustive.ts: decoded on the host, ranked on the device). Skipped without a GPU.
import { describe, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { cpuKnn } from '../../dist/backend/cpu/knn.js';
import { searchDecoded } from '../../dist/search/exhaustive.js';
import { withMetric } from '../../dist/search/metric.js';
import { rng } from '../rng.js';
import { decodeProblem } from '../cuda-host/decode-problem.js';
import { expectSameNeighbours } from '../cuda-host/knn-problem.js';

const hasGpu = probeCuda().ok;

describe.skipIf(!hasGpu)('ip and cosine on the GPU = on the CPU', () => {
  for (const metric of ['ip', 'cosine'] as const) {
    it(`${metric}: the exact k-NN (n 30,011, d 93, 257 queries, k 10 and 125)`, async () => {
      const [n, d, nq] = [30_011, 93, 257];
      const r = rng(5);
      const base = Float32Array.from({ length: n * d }, (_, i) => (r() - 0.5) * (1 + (Math.floor(i / d) % 7)));
      const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 2);
      const backend = await createCudaBackend(0);
      try {
        for (const k of [10, 125]) {
          const got = await withMetric(backend.exactKnn, metric).knn(base, n, queries, nq, d, k);
          const want = await withMetric(cpuKnn, metric).knn(base, n, queries, nq, d, k);
          expectSameNeighbours(got, want, nq, k, 1e-5);
        }
      } finally {
        await backend.close();
      }
    }, 300_000);

    it(`${metric}: exhaustive search over a pq file's decoded vectors (n 20,021, d 67)`, async () => {
      const [n, d, m, nq, k] = [20_021, 67, 101, 111, 10];
      const file = { ...decodeProblem('pq8', n, d, m, 9), manifest: { n, d, m, metric } };
      const r = rng(4);
      const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 2);
      const backend = await createCudaBackend(0);
      try {
        const got = await searchDecoded(file as never, queries, nq, k, backend.exactKnn);
        const want = await searchDecoded(file as never, queries, nq, k, cpuKnn);
        expectSameNeighbours(got, want, nq, k, 1e-5);
      } finally {
        await backend.close();
      }
    }, 300_000);
  }
});
