// The pq search on every core: the queries are cut into one contiguous range per worker thread
// (worker.ts), each ranking the anchors, building the tables and scanning the lists of its range
// (pq-search.ts) over the same shared arrays, writing its rows of the shared result. The workers
// are started once and kept (backend/cpu/pool.ts's KeptPool, as the CPU's k-NN workers are).
import os from 'node:os';
import { KeptPool } from '../backend/cpu/pool.js';
import type { Neighbours } from '../backend/types.js';
import type { PqSearchIndex, PqSearchOptions } from './pq-search.js';

/** What one worker is handed (structured-cloned; the SharedArrayBuffer-backed arrays are shared, not copied). */
export interface WorkerTask {
  index: PqSearchIndex;
  queries: Float32Array;
  options: PqSearchOptions;
  out: Neighbours;
  q0: number;
  q1: number;
}

/**
 * Fewest queries per worker: handing a range to a thread costs a message and each worker sets up
 * its kernel and tables (and the first search starts the threads, tens of milliseconds), so small
 * batches stay on the calling thread.
 */
export const MIN_QUERIES_PER_WORKER = 1000;

/** Threads for nq queries: every core, as long as each has MIN_QUERIES_PER_WORKER. */
export function searchThreads(nq: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.floor(nq / MIN_QUERIES_PER_WORKER)));
}

const shareable = <T extends Float32Array | Int32Array>(a: T): T => {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const copy = new (a.constructor as { new (b: SharedArrayBuffer): T })(new SharedArrayBuffer(a.byteLength));
  copy.set(a as never);
  return copy;
};

/** The search's workers (worker.ts), kept between searches. */
const pool = new KeptPool<WorkerTask>(new URL('./worker.js', import.meta.url));

/** Every query's results into `out` (nq × k), searched by `threads` workers (fewer while another search holds them). */
export async function searchInWorkers(
  index: PqSearchIndex,
  queries: Float32Array,
  nq: number,
  options: PqSearchOptions,
  out: Neighbours,
  threads: number,
): Promise<void> {
  const { d, lists, pq } = index;
  const shared: Neighbours = { ids: shareable(out.ids), dists: shareable(out.dists) };
  const base = {
    index: { n: index.n, d, m: index.m, anchors: shareable(index.anchors), lists, pq },
    queries: shareable(queries.subarray(0, nq * d)),
    options: { k: options.k, nprobe: options.nprobe, exclude: options.exclude },
    out: shared,
  };
  await pool.all(threads, (w, used) => ({ ...base, q0: Math.floor((w * nq) / used), q1: Math.floor(((w + 1) * nq) / used) }));
  if (shared.ids !== out.ids) out.ids.set(shared.ids);
  if (shared.dists !== out.dists) out.dists.set(shared.dists);
}
