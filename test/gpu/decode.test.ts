// On a real GPU: a .vlc decoded on the device (src/backend/cuda/decode.ts, cuda/decode.cu) is the
// host's reconstruction (io/vlc/reconstruct.ts) bit for bit — none, int8, int4, pq with 4- and
// 8-bit codebooks (8-bit also on projected directions), bits, odd n, d, m, values over many magnitudes (test/cuda-host/decode-problem.ts),
// ranges anywhere in the file — and the k-NN over it (CudaKnn.knnDecoded) is the CPU's exact
// ranking of the host's reconstructions. Skipped without a GPU.
import { describe, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rng } from '../rng.js';
import { decodeProblem, expectDeviceRowsEqualHost, type DecodeMode } from '../cuda-host/decode-problem.js';
import { expectSameNeighbours } from '../cuda-host/knn-problem.js';
import { expectDecodeRowsAsHost } from '../cuda-host/ec-problem.js';

const hasGpu = probeCuda().ok;
const MODES: DecodeMode[] = ['none', 'int8', 'int4', 'pq4', 'pq8', 'pq8-projected', 'bits'];

describe.skipIf(!hasGpu)('decoding on the GPU = reconstructRange on the host, bit for bit', () => {
  for (const mode of MODES) {
    it(`${mode}: n 100,003, d 131, m 257`, async () => {
      const [n, d, m] = [100_003, 131, 257];
      const file = decodeProblem(mode, n, d, m, 1000 + MODES.indexOf(mode));
      const backend = await createCudaBackend(0);
      try {
        for (const [r0, r1] of [[0, n], [1, 2], [40_001, 77_777], [n - 5, n]]) await expectDeviceRowsEqualHost(backend.ctx, file, n, r0, r1);
      } finally {
        await backend.close();
      }
    }, 300_000);
  }

  it('CodecDevice.decodeRows (what --quality measures each codec by) = the host device, on the GPU, outputs prefilled with NaN', async () => {
    const [n, d, m] = [20_011, 67, 129];
    const backend = await createCudaBackend(0);
    try {
      for (const mode of MODES) {
        const file = decodeProblem(mode, n, d, m, 500 + MODES.indexOf(mode));
        await expectDecodeRowsAsHost(backend, file, [[0, n], [3, 9_999]]);
      }
    } finally {
      await backend.close();
    }
  }, 300_000);

  for (const mode of ['int8', 'pq8', 'pq8-projected', 'bits'] as const) {
    it(`${mode}: the k-NN over the device's decode = the CPU's over the host's (n 50,021, d 97, 333 queries, k 10)`, async () => {
      const [n, d, m, nq, k] = [50_021, 97, 101, 333, 10];
      const file = decodeProblem(mode, n, d, m, 77);
      const r = rng(3);
      const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 2);
      const backend = await createCudaBackend(0);
      try {
        const got = await backend.gpuKnn.knnDecoded(file, n, queries, nq, k);
        const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
        expectSameNeighbours(got, await cpuKnn(decoded, n, queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
      } finally {
        await backend.close();
      }
    }, 300_000);
  }
});
