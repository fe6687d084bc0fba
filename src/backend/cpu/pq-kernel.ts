// The pq search's per-query arithmetic on the wasm SIMD kernel (wasm/kernel.c): one instance per
// thread, its memory holding the anchors, a block of queries and their distances to every anchor
// (the kernel's `dists`, the values the CPU's exact k-NN gives), the transposed codebooks, the
// query's lookup tables and the list being scanned. Each step performs the operations of the JS it
// replaced in the same order (f64 sums in subspace order, one rounding to f32 for the tables), so
// ids and distances are bit for bit those of search/index.ts's generic steps
// (test/search/pq-search.test.ts, test/cpu/pq-kernel.test.ts).
import type { PqIndex } from '../types.js';
import { wasmModule } from './kernel.js';

interface Exports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  dists(x: number, np: number, c: number, m: number, d: number, out: number): void;
  select_nearest(row: number, m: number, w: number, order: number, best: number): void;
  pq_tables(q: number, cbT: number, bounds: number, M: number, K: number, out: number): void;
  pq_scan(codes: number, extra: number, n: number, M: number, K: number, table: number, anchorDist: number, scale: number, out: number): void;
}

/** Anchors loaded at once (floats of m × d): beyond it, tiles of ANCHOR_TILE anchors are loaded in turn. */
const ANCHOR_FLOATS = 1 << 22;
const ANCHOR_TILE = 1024;

export class PqKernel {
  private ex: Exports;
  private at: Record<'anchors' | 'queries' | 'tile' | 'rows' | 'order' | 'best' | 'cbT' | 'bounds' | 'query' | 'table' | 'codes' | 'extra' | 'dists', number>;
  private tiled: boolean;
  private longest: number;
  private mem!: { f32: Float32Array; u8: Uint8Array };
  /** Distances of the list last scanned (scanList), in list order. */
  dists!: Float64Array;
  /** Anchors ranked for the query last selected (selectNearest). */
  order!: Int32Array;

  /** `block`: queries ranked at once (rankBlock). */
  constructor(private index: PqIndex, private block: number) {
    const { m, d, lists, pq } = index;
    const { M, K, bounds, codebooks } = pq;
    let longest = 0;
    for (let j = 0; j < m; j++) longest = Math.max(longest, lists.start[j + 1] - lists.start[j]);
    this.longest = longest;
    this.tiled = m * d > ANCHOR_FLOATS;
    this.ex = new WebAssembly.Instance(wasmModule(), {}).exports as unknown as Exports;
    let end = this.ex.__heap_base.value as number;
    const take = (bytes: number) => {
      const start = (end + 15) & ~15;
      end = start + bytes;
      return start;
    };
    const loaded = this.tiled ? ANCHOR_TILE : m;
    this.at = {
      anchors: take(loaded * d * 4),
      queries: take(block * d * 4),
      tile: take(this.tiled ? block * ANCHOR_TILE * 4 : 0),
      rows: take(block * m * 4),
      order: take(m * 4),
      best: take(m * 4),
      cbT: take(K * d * 8),
      bounds: take((M + 1) * 4),
      query: take(d * 4),
      table: take(M * K * 4),
      codes: take(longest * M),
      extra: take(longest * 4),
      dists: take(longest * 8),
    };
    const memory = this.ex.memory;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    this.views();
    if (!this.tiled) this.mem.f32.set(index.anchors.subarray(0, m * d), this.at.anchors >> 2);
    // Each subspace's K × w block of codebook values transposed to w rows of K (centroids side by side), in f64.
    const cbT = new Float64Array(memory.buffer, this.at.cbT, K * d);
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      for (let c = 0; c < K; c++) for (let k = 0; k < w; k++) cbT[K * lo + k * K + c] = codebooks[K * lo + c * w + k];
    }
    new Int32Array(memory.buffer, this.at.bounds, M + 1).set(bounds);
  }

  private views(): void {
    const buf = this.ex.memory.buffer;
    this.mem = { f32: new Float32Array(buf), u8: new Uint8Array(buf) };
    this.dists = new Float64Array(buf, this.at.dists, this.longest);
    this.order = new Int32Array(buf, this.at.order, this.index.m);
  }

  /** Squared L2 from queries b0..b1 (rows of `queries`, at most `block`) to every anchor, kept for selectNearest. */
  rankBlock(queries: Float32Array, b0: number, b1: number): void {
    const { m, d, anchors } = this.index;
    const nb = b1 - b0;
    const { f32 } = this.mem;
    f32.set(queries.subarray(b0 * d, b1 * d), this.at.queries >> 2);
    if (!this.tiled) {
      this.ex.dists(this.at.queries, nb, this.at.anchors, m, d, this.at.rows);
      return;
    }
    for (let j0 = 0; j0 < m; j0 += ANCHOR_TILE) {
      const jt = Math.min(ANCHOR_TILE, m - j0);
      f32.set(anchors.subarray(j0 * d, (j0 + jt) * d), this.at.anchors >> 2);
      this.ex.dists(this.at.queries, nb, this.at.anchors, jt, d, this.at.tile);
      const tile = this.at.tile >> 2;
      for (let r = 0; r < nb; r++) f32.copyWithin((this.at.rows >> 2) + r * m + j0, tile + r * jt, tile + (r + 1) * jt);
    }
  }

  /** Query r of the block's distance to anchor j. */
  anchorDist(r: number, j: number): number {
    return this.mem.f32[(this.at.rows >> 2) + r * this.index.m + j];
  }

  /** order[0..w) = the w nearest anchors of query r of the block (ties: the lower id; -1 past the finite distances). */
  selectNearest(r: number, w: number): void {
    this.ex.select_nearest(this.at.rows + r * this.index.m * 4, this.index.m, w, this.at.order, this.at.best);
  }

  /** order = every anchor of query r of the block in the same order, by a sort (selectNearest with w = m). */
  sortAll(r: number): void {
    const { m } = this.index;
    const row = this.mem.f32.subarray((this.at.rows >> 2) + r * m, (this.at.rows >> 2) + (r + 1) * m);
    const finite: number[] = [];
    for (let j = 0; j < m; j++) if (row[j] < Infinity) finite.push(j);
    finite.sort((a, b) => row[a] - row[b] || a - b);
    this.order.fill(-1);
    this.order.set(finite);
  }

  /** The lookup tables of `query` (length D = bounds[M]: d, or the projected dimensions), kept for scanList. */
  tables(query: Float32Array): void {
    this.mem.f32.set(query, this.at.query >> 2);
    const { M, K } = this.index.pq;
    this.ex.pq_tables(this.at.query, this.at.cbT, this.at.bounds, M, K, this.at.table);
  }

  /** The tables last built (tests compare them with the JS loop). */
  lastTables(): Float32Array {
    const { M, K } = this.index.pq;
    return this.mem.f32.subarray(this.at.table >> 2, (this.at.table >> 2) + M * K);
  }

  /** dists[0..n) = the distances of list positions p0..p0+n to the query of the last tables, its anchor at anchorDist. */
  scanList(p0: number, n: number, anchorDist: number, scale: number): void {
    const { M, K, codes, extra } = this.index.pq;
    codes.copyRows(p0, p0 + n, this.mem.u8, this.at.codes); // a list's run may span pieces
    this.mem.f32.set(extra.subarray(p0, p0 + n), this.at.extra >> 2);
    this.ex.pq_scan(this.at.codes, this.at.extra, n, M, K, this.at.table, anchorDist, scale, this.at.dists);
  }
}
