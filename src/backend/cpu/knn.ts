// Exact brute-force k-NN (squared L2, ascending) over worker threads and the SIMD kernel: the CPU's
// ExactKnn (../device.ts), the host's (../host.ts), used by src/search/ and by `eval` (recall
// against exact search).
import os from 'node:os';
import { BLOCK_FLOATS, decodedKnn } from '../block-knn.js';
import type { ExactKnn, Neighbours } from '../device.js';
import { cpuWorkers } from './pool.js';
import { searchPq } from './pq-search.js';
import { sharedF32, sharedI32 } from './shared.js';

function shared(a: Float32Array, len: number): Float32Array {
  if (a.buffer instanceof SharedArrayBuffer) return a.subarray(0, len);
  const s = sharedF32(len);
  s.set(a.subarray(0, len));
  return s;
}

/**
 * For each of nq queries, the k nearest of nb base vectors (d dims), sorted by ascending distance,
 * ties by lower id. When k > nb the missing entries are id -1, distance +Infinity.
 */
export async function knn(
  base: Float32Array, nb: number, queries: Float32Array, nq: number, d: number, k: number,
  threads = os.availableParallelism(),
): Promise<Neighbours> {
  if (!(k >= 1)) throw new Error(`knn: k must be >= 1, got ${k}`);
  const ids = sharedI32(nq * k), dists = sharedF32(nq * k);
  if (nq === 0) return { ids: new Int32Array(0), dists: new Float32Array(0) };
  const b = shared(base, nb * d), q = shared(queries, nq * d);
  await cpuWorkers.all(Math.max(1, Math.min(threads, Math.ceil(nq / 64))), (w, workers) => ({
    op: 'knn', base: b, nb, queries: q, d, k, ids, dists,
    q0: Math.floor((w * nq) / workers), q1: Math.floor(((w + 1) * nq) / workers),
  }));
  return { ids: ids.slice(), dists: dists.slice() };
}

/**
 * Start the CPU's workers (pool.ts's cpuWorkers, which knn() and the pq search share) now, in the
 * background (idle, they do not hold the process): a GPU run calls this before training, so the
 * quality figures after it do not wait for workers to start; `vlc search` before building the index.
 */
export function prewarmKnn(threads = os.availableParallelism()): void {
  cpuWorkers.prewarm(Math.max(1, Math.min(threads, 4)));
}

/**
 * The CPU's ExactKnn, the host's: knn() above on every available core, the pq search (pq-search.ts),
 * and the k-NN over decoded vectors, decoded a block at a time (../block-knn.ts).
 */
export const cpuKnn: ExactKnn = {
  knn: (base, nb, queries, nq, d, k) => knn(base, nb, queries, nq, d, k),
  searchPq,
  knnDecoded: decodedKnn({ knn: (base, nb, queries, nq, d, k) => knn(base, nb, queries, nq, d, k) }, BLOCK_FLOATS),
};
