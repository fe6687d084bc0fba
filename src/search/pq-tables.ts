// A query's product-quantization lookup tables, T[t][c] = <q_t, codebook_t[c]> (pq-adc.ts), on
// the wasm SIMD kernel (wasm/kernel.c pq_tables): the K × d multiply-adds per query were most of
// the CPU search's time in plain JS. Both forms sum each entry in f64 over the subspace's
// dimensions in ascending order and round it once to f32, so the tables are bit for bit the same
// (test/search/pq-tables.test.ts).
import { wasmModule } from '../backend/cpu/kernel.js';
import type { PqAdcData } from './pq-adc.js';

interface TablesExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  pq_tables(q: number, cbT: number, bounds: number, M: number, K: number, out: number): void;
}

/** Builds one query's M × K tables at a time; one per thread (it owns a wasm instance). */
export interface PqTables {
  /** The tables of `query` (length d). The array is reused by the next call. */
  build(query: Float32Array): Float32Array;
}

/** The wasm tables when K is a multiple of 4 (the kernel's vectors), else the JS loop. */
export function pqTables(pq: PqAdcData): PqTables {
  return pq.K % 4 === 0 ? new WasmPqTables(pq) : new JsPqTables(pq);
}

class WasmPqTables implements PqTables {
  private ex: TablesExports;
  private off: { cbT: number; bounds: number; query: number; table: number };
  private query: Float32Array;
  private table: Float32Array;

  constructor(private pq: PqAdcData) {
    const { M, K, bounds, codebooks } = pq;
    const d = bounds[M];
    this.ex = new WebAssembly.Instance(wasmModule(), {}).exports as unknown as TablesExports;
    const align = (v: number) => (v + 15) & ~15;
    const cbT = align(this.ex.__heap_base.value as number);
    const boundsAt = align(cbT + K * d * 4);
    const query = align(boundsAt + (M + 1) * 4);
    const table = align(query + d * 4);
    this.off = { cbT, bounds: boundsAt, query, table };
    const mem = this.ex.memory;
    const end = table + M * K * 4;
    if (end > mem.buffer.byteLength) mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
    // Each subspace's K × w block transposed to w rows of K: four centroids per vector load.
    const transposed = new Float32Array(mem.buffer, cbT, K * d);
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      for (let c = 0; c < K; c++) for (let k = 0; k < w; k++) transposed[K * lo + k * K + c] = codebooks[K * lo + c * w + k];
    }
    new Int32Array(mem.buffer, boundsAt, M + 1).set(bounds);
    this.query = new Float32Array(mem.buffer, query, d);
    this.table = new Float32Array(mem.buffer, table, M * K);
  }

  build(query: Float32Array): Float32Array {
    this.query.set(query);
    this.ex.pq_tables(this.off.query, this.off.cbT, this.off.bounds, this.pq.M, this.pq.K, this.off.table);
    return this.table;
  }
}

/** The same tables in plain JS (the reference the wasm tables are tested against). */
export class JsPqTables implements PqTables {
  private table: Float32Array;

  constructor(private pq: PqAdcData) {
    this.table = new Float32Array(pq.M * pq.K);
  }

  build(query: Float32Array): Float32Array {
    const { M, K, bounds, codebooks } = this.pq;
    const table = this.table;
    for (let t = 0; t < M; t++) {
      const lo = bounds[t];
      const w = bounds[t + 1] - lo;
      for (let c = 0; c < K; c++) {
        const e = K * lo + c * w;
        let s = 0;
        for (let k = 0; k < w; k++) s += query[lo + k] * codebooks[e + k];
        table[t * K + c] = s;
      }
    }
    return table;
  }
}
