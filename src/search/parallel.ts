// Scoring on every core: the queries of a pq-coded index are cut into one contiguous range per
// worker thread (worker.ts), each scoring its range over the same shared arrays (lists, codes,
// per-vector terms, ranked anchors) and writing its rows of the shared result.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Neighbours } from '../backend/types.js';
import type { Ranking } from './scan.js';
import type { SearchIndex, SearchOptions } from './types.js';

/** What one worker is handed (structured-cloned; the SharedArrayBuffer-backed arrays are shared, not copied). */
export interface WorkerTask {
  index: Pick<SearchIndex, 'n' | 'd' | 'm' | 'lists' | 'pq'>;
  queries: Float32Array;
  ranked: Ranking;
  options: SearchOptions & { nprobe: number };
  out: Neighbours;
  q0: number;
  q1: number;
}

/**
 * Fewest queries per worker: starting a thread costs tens of milliseconds, about what a thousand
 * pq queries cost to score, so small batches stay on the calling thread.
 */
export const MIN_QUERIES_PER_WORKER = 1000;

/** Threads for nq queries: every core, as long as each has MIN_QUERIES_PER_WORKER. */
export function searchThreads(nq: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.floor(nq / MIN_QUERIES_PER_WORKER)));
}

const sharedCopy = <T extends Float32Array | Int32Array>(a: T): T => {
  const copy = new (a.constructor as { new (b: SharedArrayBuffer): T })(new SharedArrayBuffer(a.byteLength));
  copy.set(a as never);
  return copy;
};

/**
 * Every query's results into `out` (nq × k), scored by `threads` workers; returns the queries that
 * ran short (as scanQueries does), in ascending order.
 */
export async function scanInWorkers(
  index: SearchIndex,
  queries: Float32Array,
  nq: number,
  ranked: Ranking,
  options: SearchOptions & { nprobe: number },
  out: Neighbours,
  threads: number,
): Promise<number[]> {
  const { n, d, m, lists, pq } = index;
  const k = options.k;
  const shared: Neighbours = { ids: sharedCopy(out.ids), dists: sharedCopy(out.dists) };
  const base = {
    index: { n, d, m, lists, pq },
    queries: sharedCopy(queries.subarray(0, nq * d)),
    ranked: { ids: sharedCopy(ranked.ids), dists: sharedCopy(ranked.dists), width: ranked.width },
    // Only what the workers read: a callback (onProgress) cannot be posted to a thread.
    options: { k, nprobe: options.nprobe, exclude: options.exclude },
    out: shared,
  };
  const per = Math.ceil(nq / threads);
  const parts = await Promise.all(
    Array.from({ length: threads }, (_, w) => {
      const task: WorkerTask = { ...base, q0: Math.min(nq, w * per), q1: Math.min(nq, (w + 1) * per) };
      return new Promise<number[]>((resolve, reject) => {
        // The parent's flags (e.g. --input-type of `node -e`) can be invalid for a worker file.
        const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData: task, execArgv: [] });
        worker.once('message', (short: number[]) => resolve(short));
        worker.once('error', reject);
        worker.once('exit', (code) => code !== 0 && reject(new Error(`search worker exited with code ${code}`)));
      });
    }),
  );
  out.ids.set(shared.ids.subarray(0, nq * k));
  out.dists.set(shared.dists.subarray(0, nq * k));
  return parts.flat();
}
