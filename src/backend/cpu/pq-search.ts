// The CPU's search of a pq-coded index (ExactKnn.searchPq, backend/device.ts): the queries cut into
// one contiguous range per worker thread (the workers knn.ts keeps, worker.ts's 'pqSearch'), or a
// small batch on the calling thread. Each range runs search/index.ts's three steps fused per block
// of queries, so nothing goes back and forth between threads, the arithmetic on the wasm kernel
// (pq-kernel.ts) —
//   1. the block's squared L2 to every anchor (the values the CPU's ExactKnn gives), then per
//      query the nearest FIRST_RANKING (or nprobe) anchors by a partial insertion sort (ties: the
//      lower id); a query that needs more anchors has its whole row sorted in place, where
//      search/index.ts's generic steps rank it again against all anchors;
//   2. the query's lookup tables (from its projection when the codes have one: codecs/pq.ts tableQuery);
//   3. the anchors visited by the probing rule (neighbours.ts anchorsVisited, as search/scan.ts),
//      each visited list's asymmetric distances (search/pq-adc.ts's formula), kept in a bounded
//      insertion list of the k best (neighbours.ts keepBest: ascending distance, ties to the lower id).
// The ids and distances are exactly those of the generic steps (test/search/pq-search.test.ts).
import os from 'node:os';
import { checkpoint } from '../../interrupt.js';
import type { Neighbours, PqIndex, PqSearchOptions } from '../device.js';
import { anchorsVisited, keepBest, writeBest } from '../neighbours.js';
import { tableQuery } from '../../codecs/pq.js';
import { PqKernel } from './pq-kernel.js';
import { cpuWorkers } from './pool.js';
import { sharedF32, sharedI32 } from './shared.js';

/** One worker's part of a search (worker.ts): the SharedArrayBuffer-backed arrays are shared, not copied. */
export interface PqRange {
  index: PqIndex;
  queries: Float32Array;
  options: Pick<PqSearchOptions, 'k' | 'nprobe' | 'exclude'>;
  out: Neighbours;
  q0: number;
  q1: number;
}

/**
 * Fewest queries per worker: handing a range to a thread costs a message and the worker sets up
 * its kernel and tables, so small batches (eval's samples) stay on the calling thread.
 */
export const MIN_QUERIES_PER_WORKER = 1000;

/** Threads for nq queries: every core (or `cores`), as long as each has MIN_QUERIES_PER_WORKER. */
export function searchThreads(nq: number, cores = os.availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.floor(nq / MIN_QUERIES_PER_WORKER)));
}

/** Queries searched on the calling thread between progress reports and Ctrl-C checks. */
const QUERIES_PER_REPORT = 256;

/** ExactKnn.searchPq on the CPU: every query's k nearest into `out` (nq × k). */
export async function searchPq(index: PqIndex, queries: Float32Array, nq: number, o: PqSearchOptions, out: Neighbours): Promise<void> {
  const options = { k: o.k, nprobe: o.nprobe, exclude: o.exclude };
  const threads = searchThreads(nq, o.threads);
  if (threads > 1) {
    const { d } = index;
    const shared = { ids: sharedI32(nq * o.k), dists: sharedF32(nq * o.k) };
    const q = shareable(queries.subarray(0, nq * d), sharedF32);
    // The codes go as their buffer and offsets (worker.ts makes its views: a class does not survive postMessage).
    const pq = { ...index.pq, codes: index.pq.codes.handle() as unknown as typeof index.pq.codes };
    const range = { index: { ...index, pq, anchors: shareable(index.anchors, sharedF32) }, queries: q, options, out: shared };
    await cpuWorkers.all(threads, (w, used) => ({ op: 'pqSearch', ...range, q0: Math.floor((w * nq) / used), q1: Math.floor(((w + 1) * nq) / used) }));
    out.ids.set(shared.ids);
    out.dists.set(shared.dists);
    return;
  }
  const searcher = new PqSearcher(index);
  for (let q0 = 0; q0 < nq; q0 += QUERIES_PER_REPORT) {
    const q1 = Math.min(nq, q0 + QUERIES_PER_REPORT);
    searcher.search(queries, q0, q1, options, out);
    if (q1 < nq) {
      o.onProgress?.(q1);
      await checkpoint(); // a long search yields now and then, so Ctrl-C is heard
    }
  }
}

const shareable = (a: Float32Array, make: (n: number) => Float32Array): Float32Array => {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const s = make(a.length);
  s.set(a);
  return s;
};

/**
 * Anchors ranked per query before the walk: enough for nearly every query to find k vectors
 * (lists hold n / m vectors on average); the rare query that needs more sorts its whole row.
 */
const FIRST_RANKING = 8;

/** Queries ranked per kernel call: 64, fewer when m is large (at most 2^20 distances, 4 MiB, held). */
const QUERY_BLOCK = 64;
const DIST_FLOATS = 1 << 20;

export class PqSearcher {
  private kernel: PqKernel;
  private block: number;
  private topD = new Float64Array(0);
  private topI = new Int32Array(0);

  constructor(private index: PqIndex) {
    this.block = Math.max(1, Math.min(QUERY_BLOCK, Math.floor(DIST_FLOATS / index.m)));
    this.kernel = new PqKernel(index, this.block);
  }

  /** Queries q0..q1 (rows of `queries`) into out.ids/out.dists at q·k. */
  search(queries: Float32Array, q0: number, q1: number, o: PqRange['options'], out: Neighbours): void {
    if (this.topD.length !== o.k) {
      this.topD = new Float64Array(o.k);
      this.topI = new Int32Array(o.k);
    }
    for (let b0 = q0; b0 < q1; b0 += this.block) {
      const b1 = Math.min(q1, b0 + this.block);
      this.kernel.rankBlock(queries, b0, b1);
      for (let q = b0; q < b1; q++) this.searchOne(queries, q, q - b0, o, out);
    }
  }

  private searchOne(queries: Float32Array, q: number, r: number, o: PqRange['options'], out: Neighbours): void {
    const { d, m, lists, pq } = this.index;
    const { start, members } = lists;
    const { k, nprobe } = o;
    const { kernel, topD, topI } = this;
    const skip = o.exclude ? o.exclude[q] : -1;
    const ranked = Math.min(m, Math.max(nprobe, FIRST_RANKING));
    kernel.selectNearest(r, ranked);
    let visits = anchorsVisited(kernel.order, 0, ranked, lists, k, nprobe, skip, ranked < m);
    if (visits < 0) {
      kernel.sortAll(r); // ran short: every anchor, in order
      visits = anchorsVisited(kernel.order, 0, m, lists, k, nprobe, skip, false);
    }
    kernel.tables(tableQuery(pq.projection, pq.bounds[pq.M], queries.subarray(q * d, (q + 1) * d)));
    const { order, dists } = kernel;
    let count = 0;
    for (let a = 0; a < visits; a++) {
      const j = order[a];
      const p0 = start[j];
      const len = start[j + 1] - p0;
      kernel.scanList(p0, len, kernel.anchorDist(r, j), pq.scale[j]);
      for (let e = 0; e < len; e++) {
        const id = members[p0 + e];
        if (id === skip) continue;
        count = keepBest(topD, topI, count, k, dists[e], id);
      }
    }
    writeBest(out, q, k, topD, topI, count);
  }
}
