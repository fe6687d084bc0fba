// The search of a pq-coded index over a range of queries on one thread (a worker of parallel.ts,
// or the calling thread): the same three steps as index.ts, fused per block of queries so that
// nothing goes back and forth between threads —
//   1. the block's squared L2 to every anchor by the SIMD kernel (the values the CPU's ExactKnn
//      gives), then per query the nearest FIRST_RANKING (or nprobe) anchors by a partial
//      insertion sort (ties: the lower id); a query that needs more anchors has its whole row
//      sorted in place, where index.ts's generic path ranks it again against all anchors;
//   2. the query's lookup tables (pq-tables.ts, wasm);
//   3. the visited lists' asymmetric distances (pq-adc.ts's formula, the same f64 operations in
//      the same order) into a bounded insertion list of the k best (scan.ts's rule).
// The ids and distances are exactly those of the generic path (test/search/pq-search.test.ts).
import type { Neighbours } from '../backend/types.js';
import { makeKernel, type Kernel } from '../backend/cpu/kernel.js';
import type { PqAdcData } from './pq-adc.js';
import { pqTables, type PqTables } from './pq-tables.js';
import type { InvertedLists, SearchOptions } from './types.js';

/** What the pq search reads: plain arrays, shareable with worker threads. */
export interface PqSearchIndex {
  n: number;
  d: number;
  m: number;
  anchors: Float32Array;
  lists: InvertedLists;
  pq: PqAdcData;
}

export type PqSearchOptions = Pick<SearchOptions, 'k' | 'exclude'> & { nprobe: number };

/**
 * Anchors ranked per query before the walk: enough for nearly every query to find k vectors
 * (lists hold n / m vectors on average); the rare query that needs more sorts its whole row.
 */
const FIRST_RANKING = 8;

/** Queries per kernel call: the block's m distances per query stay within DIST_FLOATS. */
const QUERY_BLOCK = 64;
/** Distances held per block (floats): 64 queries × 16,384 anchors, 4 MiB. */
const DIST_FLOATS = 1 << 20;
/** Anchors loaded into the kernel at once (floats of m × d): beyond it, tiles of ANCHOR_TILE. */
const ANCHOR_FLOATS = 1 << 22;
const ANCHOR_TILE = 1024;

export class PqSearcher {
  private kernel: Kernel = makeKernel('wasm');
  private tables: PqTables;
  private block: number;
  private rows: Float32Array;
  private tile: Float32Array;
  private order: Int32Array;
  private best: Float32Array;
  private topD: Float64Array;
  private topI: Int32Array;

  constructor(private index: PqSearchIndex) {
    const { m, d } = index;
    this.tables = pqTables(index.pq);
    this.block = Math.max(1, Math.min(QUERY_BLOCK, Math.floor(DIST_FLOATS / m)));
    this.rows = new Float32Array(this.block * m);
    this.tile = m * d > ANCHOR_FLOATS ? new Float32Array(this.block * ANCHOR_TILE) : this.rows;
    this.order = new Int32Array(m);
    this.best = new Float32Array(m);
    this.topD = new Float64Array(0);
    this.topI = new Int32Array(0);
  }

  /** Queries q0..q1 (rows of `queries`) into out.ids/out.dists at q·k. */
  search(queries: Float32Array, q0: number, q1: number, o: PqSearchOptions, out: Neighbours): void {
    for (let b0 = q0; b0 < q1; b0 += this.block) {
      const b1 = Math.min(q1, b0 + this.block);
      this.rankBlock(queries, b0, b1);
      for (let q = b0; q < b1; q++) this.searchOne(queries, q, this.rows.subarray((q - b0) * this.index.m), o, out);
    }
  }

  /** rows[r·m + j] = squared L2 from query b0 + r to anchor j. */
  private rankBlock(queries: Float32Array, b0: number, b1: number): void {
    const { m, d, anchors } = this.index;
    const nb = b1 - b0;
    const qs = queries.subarray(b0 * d, b1 * d);
    if (this.tile === this.rows) {
      this.kernel.dists(qs, nb, anchors, m, d, this.rows, 0); // version 0: the anchors never change
      return;
    }
    for (let j0 = 0; j0 < m; j0 += ANCHOR_TILE) {
      const jt = Math.min(ANCHOR_TILE, m - j0);
      this.kernel.dists(qs, nb, anchors.subarray(j0 * d, (j0 + jt) * d), jt, d, this.tile);
      for (let r = 0; r < nb; r++) this.rows.set(this.tile.subarray(r * jt, (r + 1) * jt), r * m + j0);
    }
  }

  private searchOne(queries: Float32Array, q: number, row: Float32Array, o: PqSearchOptions, out: Neighbours): void {
    const { d, m, lists, pq } = this.index;
    const { start, members } = lists;
    const { M, K, codes, extra, scale } = pq;
    const { k, nprobe } = o;
    const skip = o.exclude ? o.exclude[q] : -1;
    const order = this.order;
    let ranked = selectNearest(row, m, Math.min(m, Math.max(nprobe, FIRST_RANKING)), order, this.best);
    const table = this.tables.build(queries.subarray(q * d, (q + 1) * d));
    if (this.topD.length !== k) {
      this.topD = new Float64Array(k);
      this.topI = new Int32Array(k);
    }
    const { topD, topI } = this;
    let count = 0;
    let seen = 0;
    for (let a = 0; ; a++) {
      if (a === ranked && seen < k && ranked < m) ranked = sortAll(row, m, order); // ran short: every anchor, in order
      if (a === ranked) break;
      const j = order[a];
      if (j < 0 || (seen >= k && a >= nprobe)) break;
      const anchorDist = row[j];
      const twoScale = 2 * scale[j];
      for (let p = start[j]; p < start[j + 1]; p++) {
        const id = members[p];
        if (id === skip) continue;
        seen++;
        let dot = 0;
        const codeRow = p * M;
        for (let t = 0; t < M; t++) dot += table[t * K + codes[codeRow + t]];
        const dist = anchorDist + extra[p] - twoScale * dot;
        if (count === k && !(dist < topD[k - 1] || (dist === topD[k - 1] && id < topI[k - 1]))) continue;
        let at = count < k ? count++ : k - 1;
        while (at > 0 && (topD[at - 1] > dist || (topD[at - 1] === dist && topI[at - 1] > id))) {
          topD[at] = topD[at - 1];
          topI[at] = topI[at - 1];
          at--;
        }
        topD[at] = dist;
        topI[at] = id;
      }
    }
    for (let t = 0; t < k; t++) {
      out.ids[q * k + t] = t < count ? topI[t] : -1;
      out.dists[q * k + t] = t < count ? topD[t] : Infinity;
    }
  }
}

/**
 * order[0..w) = the w nearest anchors of `row` ascending (ties: the lower id; -1 past the finite
 * distances), by the exact k-NN's rule (backend/cpu/knn-core.ts): a value joins only when below
 * the current w-th, after any equal ones. `best` (m) is scratch. Returns w.
 */
function selectNearest(row: Float32Array, m: number, w: number, order: Int32Array, best: Float32Array): number {
  best.fill(Infinity, 0, w);
  order.fill(-1, 0, w);
  let worst = Infinity;
  for (let j = 0; j < m; j++) {
    const v = row[j];
    if (!(v < worst)) continue;
    let pos = w - 1;
    while (pos > 0 && best[pos - 1] > v) {
      best[pos] = best[pos - 1];
      order[pos] = order[pos - 1];
      pos--;
    }
    best[pos] = v;
    order[pos] = j;
    worst = best[w - 1];
  }
  return w;
}

/** Every anchor of `row` in the same order (selectNearest with w = m, by a sort). Returns m. */
function sortAll(row: Float32Array, m: number, order: Int32Array): number {
  const finite: number[] = [];
  for (let j = 0; j < m; j++) if (row[j] < Infinity) finite.push(j);
  finite.sort((a, b) => row[a] - row[b] || a - b);
  order.fill(-1);
  order.set(finite);
  return m;
}
