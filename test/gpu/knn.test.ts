// On a real GPU: exact k-NN (src/backend/cuda/knn.ts, cuda/knn.cu) gives the CPU's answer
// (cpu/knn.ts) on odd sizes — every shared-memory stage and tile edge, k from 1 to the limit,
// duplicate base vectors (ties: the lower id), data far from the origin (every coordinate offset
// by 1000, where an expanded ‖q‖² − 2q·x + ‖x‖² would lose every digit), a base searched in
// pieces. Distances within a relative 1e-5, ids equal where the distances are clearly apart
// (test/cuda-host/knn-problem.ts). Skipped without a GPU.
import { describe, expect, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { CudaKnn, GPU_KNN_MAX_K } from '../../dist/backend/cuda/knn.js';
import { launch } from '../../dist/backend/cuda/kernels.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { expectSameNeighbours, knnProblem } from '../cuda-host/knn-problem.js';

const hasGpu = probeCuda().ok;

describe.skipIf(!hasGpu)('exact k-NN on the GPU = on the CPU', () => {
  for (const [nb, nq, d, k, offset] of [
    [100_003, 1001, 131, 10, 0],
    [77_777, 333, 17, 100, 0],
    [50_021, 257, 127, 11, 1000],
    [20_011, 65, 769, GPU_KNN_MAX_K, 1000],
    [9_999, 31, 3, 1, 0],
    [5_003, 97, 1, 7, 0], // one dimension: exact ties everywhere
    [127, 33, 33, 120, 0], // a base smaller than one tile, k close to nb
    [61, 5, 8, 100, 0], // k > nb: −1 / +∞ past the end
  ] as const) {
    it(`nb ${nb}, nq ${nq}, d ${d}, k ${k}, offset ${offset}`, async () => {
      const p = knnProblem(nb, nq, d, nb + nq + d + k, offset);
      const backend = await createCudaBackend(0);
      try {
        const got = await backend.gpuKnn.knn(p.base, nb, p.queries, nq, d, k);
        // The CPU's list one rank longer: a group of near-equal distances at rank k − 1 is then known closed.
        const want = await cpuKnn(p.base, nb, p.queries, nq, d, k + 1);
        expectSameNeighbours(got, want, nq, k, 1e-5, k + 1);
        if (k > nb) expect(Array.from(got.ids.subarray(nb, k)).every((id) => id === -1)).toBe(true);
      } finally {
        await backend.close();
      }
    }, 300_000);
  }

  it('a base larger than the memory allowed: pieces merged on the host, the same answer', async () => {
    const [nb, nq, d, k] = [40_009, 129, 37, 16];
    const p = knnProblem(nb, nq, d, 4242, 0);
    const backend = await createCudaBackend(0);
    try {
      // knn.ts's sizes: 160 padded queries, their partial lists (chunks: 8 blocks per multiprocessor
      // over 5 groups), results; plus 10,000 base rows: 5 pieces.
      const chunks = Math.ceil((backend.ctx.info.multiprocessors * 8) / 5);
      const fixed = 160 * d * 4 + 160 * k * 8 + 160 * chunks * k * 8;
      const got = await new CudaKnn(backend.ctx, fixed + 10_000 * d * 4).knn(p.base, nb, p.queries, nq, d, k);
      expectSameNeighbours(got, await cpuKnn(p.base, nb, p.queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
    } finally {
      await backend.close();
    }
  }, 300_000);

  it('the kernels launched directly over poisoned buffers: every partial and final entry written', async () => {
    const [nb, nq, d, k, chunkRows] = [3001, 45, 19, 13, 256];
    const nqPad = 64, chunks = Math.ceil(nb / chunkRows);
    const p = knnProblem(nb, nq, d, 77, 0);
    const backend = await createCudaBackend(0);
    const { ctx } = backend;
    try {
      const poisoned = (name: string, words: number) => {
        const b = ctx.pool.alloc(name, words * 4);
        ctx.upload(b, new Uint32Array(words).fill(0xa5a5a5a5));
        return b;
      };
      const QT = ctx.pool.alloc('QT', nqPad * d * 4);
      const qt = new Float32Array(nqPad * d);
      for (let q = 0; q < nq; q++) for (let c = 0; c < d; c++) qt[c * nqPad + q] = p.queries[q * d + c];
      ctx.upload(QT, qt);
      const X = ctx.pool.alloc('X', nb * d * 4);
      ctx.upload(X, p.base);
      const partD = poisoned('partD', nqPad * chunks * k), partI = poisoned('partI', nqPad * chunks * k);
      const outD = poisoned('outD', nq * k), outI = poisoned('outI', nq * k);
      launch(ctx, 'knn_scan', 'f32', nqPad / 32, { QT: QT.ptr, nqPad, nq, X: X.ptr, nb, d, k, chunkRows, partD: partD.ptr, partI: partI.ptr }, { gridY: chunks });
      launch(ctx, 'knn_merge', 'f32', Math.ceil(nq / 8), { partD: partD.ptr, partI: partI.ptr, nq, chunks, k, outD: outD.ptr, outI: outI.ptr });
      await ctx.finish();
      const pi = new Int32Array(nq * chunks * k);
      ctx.download(pi, partI);
      expect(pi.every((id) => id >= -1 && id < nb)).toBe(true); // no poison left among the queries' lists
      const got = { ids: new Int32Array(nq * k), dists: new Float32Array(nq * k) };
      ctx.download(got.ids, outI);
      ctx.download(got.dists, outD);
      expectSameNeighbours(got, await cpuKnn(p.base, nb, p.queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
    } finally {
      await backend.close();
    }
  }, 300_000);
});
