// Decoding a .vlc on the GPU (src/backend/cuda/decode.ts; cuda/decode.cu through the fake driver's
// emulation) writes the host's reconstructions (io/vlc/reconstruct.ts) bit for bit, for ranges
// anywhere in the file; the k-NN over a base decoded on the device (CudaKnn.knnDecoded) is the
// CPU's exact ranking of the host's reconstructions, in one piece and in several; nothing stays
// allocated. The GPU suite (test/gpu/decode.test.ts) runs the same checks on the real kernels.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rng } from '../rng.js';
import { decodeProblem, expectDeviceRowsEqualHost, type DecodeMode } from './decode-problem.js';
import { FakeCuda } from './fake-driver.js';
import { expectSameNeighbours } from './knn-problem.js';

afterEach(() => setDriverForTests(undefined));

async function onFake(o: { maxDeviceBytes?: number } = {}) {
  const fake = new FakeCuda({ poison: true });
  setDriverForTests(fake.api);
  return { fake, backend: await createCudaBackend(0, o) };
}

const MODES: DecodeMode[] = ['none', 'int8', 'int4', 'pq4', 'pq8', 'pq8-projected', 'bits'];

describe('decoding on the GPU (fake driver) = reconstructRange on the host', () => {
  for (const mode of MODES) {
    it(`${mode}: n 301, d 37, m 13, ranges at the start, inside, at the end`, async () => {
      const [n, d, m] = [301, 37, 13];
      const file = decodeProblem(mode, n, d, m, 7 + MODES.indexOf(mode));
      const { fake, backend } = await onFake();
      try {
        for (const [r0, r1] of [[0, n], [0, 1], [117, 250], [n - 3, n]]) await expectDeviceRowsEqualHost(backend.ctx, file, n, r0, r1);
        expect(fake.launches).toContain(mode === 'pq8-projected' ? 'decode_pq_projected' : mode.startsWith('pq') ? 'decode_pq' : mode === 'bits' ? 'decode_bits' : 'decode_scalar');
      } finally {
        await backend.close();
      }
      expect(fake.live).toBe(0);
    });
  }
});

describe('exact k-NN over a base decoded on the GPU (fake driver) = the CPU over the host decode', () => {
  for (const mode of MODES) {
    for (const pieces of ['one piece', 'several pieces'] as const) {
      it(`${mode}, ${pieces}: n 1003, d 11, m 9, 29 queries, k 9`, async () => {
        const [n, d, m, nq, k] = [1003, 11, 9, 29, 9];
        const file = decodeProblem(mode, n, d, m, 40 + MODES.indexOf(mode));
        const r = rng(5);
        const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 4);
        // Room for the queries (one group of 32), their lists (the fake GPU's 4 multiprocessors × 8
        // blocks = 32 chunks), and ~300 rows of base: 4 pieces.
        const { fake, backend } = await onFake(pieces === 'one piece' ? {} : { maxDeviceBytes: 32 * d * 4 + 32 * k * 8 + 32 * 32 * k * 8 + 300 * d * 4 });
        let got;
        try {
          got = await backend.gpuKnn.knnDecoded(file, n, queries, nq, k);
        } finally {
          await backend.close();
        }
        const scans = fake.launches.filter((l) => l === 'knn_scan').length;
        expect(pieces === 'one piece' ? scans === 1 : scans > 1).toBe(true);
        expect(fake.live).toBe(0);
        const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
        expectSameNeighbours(got, await cpuKnn(decoded, n, queries, nq, d, k, 2), nq, k);
      });
    }
  }
});

