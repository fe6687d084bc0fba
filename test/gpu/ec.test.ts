// On a real GPU: the ec section decoded on the device (src/backend/cuda/ec.ts, cuda/ec.cu) is the
// host's reconstruction (codecs/ec/residuals.ts addTo after io/vlc/reconstruct.ts) bit for bit —
// both layouts (axes, principal directions), odd n and d (d < 32: a warp's lanes span rows),
// escaped codes, uncoded dimensions, scale bits 9 to 16, blocks of 4,096 rows and odd sizes, ranges
// anywhere in the file, the device's output first filled with NaN — and through the backend's
// CodecDevice.decodeRows (cosine norms) and the k-NN over the decoded base. Skipped without a GPU.
import { describe, expect, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rng } from '../rng.js';
import { ecProblem, escapedCodes, expectDecodeRowsAsHost, expectEcRowsEqualHost, type EcLayoutKind } from '../cuda-host/ec-problem.js';
import { expectSameNeighbours } from '../cuda-host/knn-problem.js';

const hasGpu = probeCuda().ok;

const CASES: Array<[EcLayoutKind, number, number, number, { blockRows?: number; scaleBits?: number }]> = [
  ['axis', 100_003, 131, 257, {}],
  ['axis', 30_011, 7, 33, { blockRows: 1000, scaleBits: 9 }],
  ['axis', 20_001, 45, 17, { scaleBits: 16 }],
  ['rotated', 20_011, 97, 101, {}],
  ['rotated', 9_001, 33, 13, { blockRows: 777, scaleBits: 14 }],
];

describe.skipIf(!hasGpu)('ec decode on the GPU = the host, bit for bit', () => {
  for (const [layout, n, d, m, o] of CASES) {
    it(`${layout}: n ${n}, d ${d}, m ${m}, ${JSON.stringify(o)}`, async () => {
      const file = await ecProblem(layout, n, d, m, n + d, o);
      expect(escapedCodes(file)).toBeGreaterThan(0);
      const br = file.residuals.layout.blockRows;
      const backend = await createCudaBackend(0);
      try {
        for (const [r0, r1] of [[0, n], [1, 2], [br - 1, Math.min(n, 3 * br + 5)], [Math.floor(n / 3), Math.floor((3 * n) / 4)], [n - 5, n]])
          {
          await expectEcRowsEqualHost(backend.ctx, file, n, r0, r1);
          // Blocks decoded a few per launch (as when the codes do not fit the GPU at once).
          await expectEcRowsEqualHost(backend.ctx, file, n, r0, r1, { ecSpanBlocks: 2 });
        }
      } finally {
        await backend.close();
      }
    }, 300_000);
  }

  it('CodecDevice.decodeRows (a cosine file: norms applied) = the host device, outputs prefilled with NaN', async () => {
    const backend = await createCudaBackend(0);
    try {
      for (const layout of ['axis', 'rotated'] as const) {
        const [n, d] = [12_345, 61];
        const file = await ecProblem(layout, n, d, 29, 5, { norms: true });
        await expectDecodeRowsAsHost(backend, file, [[0, n], [4095, 8193]]);
      }
    } finally {
      await backend.close();
    }
  }, 300_000);

  it('the k-NN over an ec base decoded on the device = the CPU over the host decode (n 50,021, d 97, 333 queries, k 10)', async () => {
    const [n, d, m, nq, k] = [50_021, 97, 101, 333, 10];
    const file = await ecProblem('axis', n, d, m, 77);
    const r = rng(3);
    const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 2);
    const backend = await createCudaBackend(0);
    try {
      const got = await backend.gpuKnn.knnDecoded(file, n, queries, nq, k);
      expect(got).toBeDefined();
      const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
      expectSameNeighbours(got!, await cpuKnn(decoded, n, queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
    } finally {
      await backend.close();
    }
  }, 300_000);
});
