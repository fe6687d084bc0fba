// Exact k-NN on the GPU (src/backend/cuda/knn.ts; cuda/knn.cu through the fake driver's emulation,
// fake-knn.ts) gives the CPU's answer (cpu/knn.ts) on odd sizes, with duplicate base vectors
// (ties: the lower id), far from the origin, over several chunks and over several pieces of the
// base; it refuses k above its limit, and backend.exactKnn then runs the CPU. Device memory starts
// poisoned (an output a kernel leaves unwritten shows) and nothing stays allocated.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { GPU_KNN_MAX_K, KnnLimitError } from '../../dist/backend/cuda/knn.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { FakeCuda } from './fake-driver.js';
import { expectSameNeighbours, knnProblem } from './knn-problem.js';

afterEach(() => setDriverForTests(undefined));

async function onFake(o: { maxDeviceBytes?: number } = {}) {
  const fake = new FakeCuda({ poison: true });
  setDriverForTests(fake.api);
  const backend = await createCudaBackend(0, o);
  return { fake, backend };
}

describe('exact k-NN on the GPU (fake driver) = on the CPU', () => {
  for (const [nb, nq, d, k, offset] of [
    [3001, 37, 13, 10, 0], // several chunks per query group: the merge kernel combines them
    [1237, 70, 131, 11, 0], // d past several shared-memory stages
    [911, 33, 7, 100, 1000], // far from the origin; k = 100
    [53, 9, 5, 61, 0], // k > nb: the missing neighbours are id −1, +∞
    [700, 6, 2, 5, 0], // two dimensions: close and equal distances
  ] as const) {
    it(`nb ${nb}, nq ${nq}, d ${d}, k ${k}, offset ${offset}`, async () => {
      const p = knnProblem(nb, nq, d, nb + nq + d + k, offset);
      const { fake, backend } = await onFake();
      const got = await backend.gpuKnn.knn(p.base, nb, p.queries, nq, d, k);
      await backend.close();
      const want = await cpuKnn(p.base, nb, p.queries, nq, d, k, 2);
      expect(fake.launches).toContain('knn_scan');
      expect(fake.launches).toContain('knn_merge');
      expectSameNeighbours(got, want, nq, k);
      if (k > nb) {
        for (let q = 0; q < nq; q++) {
          expect(Array.from(got.ids.subarray(q * k + nb, (q + 1) * k)).every((id) => id === -1)).toBe(true);
          expect(Array.from(got.dists.subarray(q * k + nb, (q + 1) * k)).every((v) => v === Infinity)).toBe(true);
        }
      }
      expect(fake.live).toBe(0);
    });
  }

  it('a base larger than the memory allowed is searched in pieces, merged on the host', async () => {
    const [nb, nq, d, k] = [2203, 41, 9, 12];
    const p = knnProblem(nb, nq, d, 99);
    // Room for the queries (2 groups of 32), their results, the partial lists (the fake GPU's 4
    // multiprocessors × 8 blocks / 2 groups = 16 chunks), and about 700 base rows: 4 pieces.
    const { fake, backend } = await onFake({ maxDeviceBytes: 64 * d * 4 + 64 * k * 8 + 64 * 16 * k * 8 + 700 * d * 4 });
    const got = await backend.gpuKnn.knn(p.base, nb, p.queries, nq, d, k);
    await backend.close();
    expect(fake.launches.filter((l) => l === 'knn_scan').length).toBeGreaterThan(1);
    expectSameNeighbours(got, await cpuKnn(p.base, nb, p.queries, nq, d, k, 2), nq, k);
    expect(fake.live).toBe(0);
  });

  it('no room on the GPU even for the queries: refused, and backend.exactKnn runs the CPU', async () => {
    const p = knnProblem(400, 10, 6, 11);
    const { fake, backend } = await onFake({ maxDeviceBytes: 1000 });
    await expect(backend.gpuKnn.knn(p.base, 400, p.queries, 10, 6, 5)).rejects.toThrow(/^GPU exact k-NN: not enough GPU memory on cuda:0 for 10 queries of 6 dims/);
    const got = await backend.exactKnn.knn(p.base, 400, p.queries, 10, 6, 5);
    await backend.close();
    expect(fake.launches.filter((l) => l.startsWith('knn'))).toEqual([]);
    expectSameNeighbours(got, await cpuKnn(p.base, 400, p.queries, 10, 6, 5, 2), 10, 5);
    expect(fake.live).toBe(0);
  });

  it('no queries or no base: empty lists, nothing launched', async () => {
    const { fake, backend } = await onFake();
    const none = await backend.gpuKnn.knn(new Float32Array(0), 0, new Float32Array(8), 2, 4, 3);
    expect(Array.from(none.ids)).toEqual([-1, -1, -1, -1, -1, -1]);
    expect(Array.from(none.dists).every((v) => v === Infinity)).toBe(true);
    expect((await backend.gpuKnn.knn(new Float32Array(8), 2, new Float32Array(0), 0, 4, 3)).ids.length).toBe(0);
    expect(fake.launches.filter((l) => l.startsWith('knn'))).toEqual([]);
    await backend.close();
  });

  it(`k above ${GPU_KNN_MAX_K} is refused with a one-line error; backend.exactKnn runs the CPU instead`, async () => {
    const p = knnProblem(300, 6, 5, 7);
    const { fake, backend } = await onFake();
    const k = GPU_KNN_MAX_K + 1;
    const refused = backend.gpuKnn.knn(p.base, 300, p.queries, 6, 5, k);
    await expect(refused).rejects.toThrow(KnnLimitError);
    await expect(backend.gpuKnn.knn(p.base, 300, p.queries, 6, 5, k)).rejects.toThrow(/^GPU exact k-NN keeps at most k = 128 neighbours per query, got k = 129$/);
    const viaCpu = await backend.exactKnn.knn(p.base, 300, p.queries, 6, 5, k);
    expect(fake.launches.filter((l) => l.startsWith('knn'))).toEqual([]);
    const viaGpu = await backend.exactKnn.knn(p.base, 300, p.queries, 6, 5, 20);
    expect(fake.launches).toContain('knn_scan');
    await backend.close();
    expectSameNeighbours(viaCpu, await cpuKnn(p.base, 300, p.queries, 6, 5, k, 2), 6, k);
    expectSameNeighbours(viaGpu, await cpuKnn(p.base, 300, p.queries, 6, 5, 20, 2), 6, 20);
  });
});
