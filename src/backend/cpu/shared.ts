// The shared-memory state of one CPU engine, seen identically by the main thread and its workers.
// Everything n-sized lives here (SharedArrayBuffers), so an iteration moves no vectors between
// threads: workers read X and the anchors in place and write per-point results in place.
import type { VectorStore } from '../../vectors/dataset.js';
import type { GroupedPass } from './groups.js';
import type { PqRange } from './pq-search.js';

/** How reduceSplit (worker.ts) takes S: see there. */
export interface SplitReduce {
  /** m×d unit sums of the assignments (shared, kept between passes). */
  hard: Float64Array;
  /** Move these points from their previous anchors (`from`); absent: rebuild `hard`. */
  changed?: { points: Int32Array; from: Int32Array };
  /** The points whose weights are not (1, 0); absent: `hard` only, S not wanted. */
  weighted?: Int32Array;
}

/**
 * Points per chunk. Seeding sums are taken per fixed chunk and then added in chunk order, and
 * worker ranges are whole chunks, so every sum is the same whatever the thread count.
 */
export const CHUNK = 256;

export interface SharedState {
  n: number;
  d: number;
  m: number;
  x: VectorStore; // n×d vectors as read (f16 stays f16: workers decode the rows they use)
  anchors: Float32Array; // m×d
  huberH: Float64Array; // m: Huber thresholds H_j (+inf = off)
  j1: Int32Array; // n: nearest anchor
  d1: Float32Array; // n: its distance
  j2: Int32Array; // n: runner-up (-1 when m = 1)
  d2: Float32Array; // n
  w1: Float64Array; // n: w1·r(d1, j1), the point's weight for j1
  w2: Float64Array; // n: w2·r(d2, j2), 0 when no share
  lower: Float64Array; // n: lower bound on the distance (not squared) to every anchor but j1
  lower3: Float64Array; // n: the same for every anchor but j1 and j2
  drift: Float64Array; // m: how far (not squared) each anchor moved since the last assignment
  sums: Float64Array; // m×d: S (weighted sums, fixed point: integers, ../fixed.ts), filled by dimension slices
  seedD: Float32Array; // n: k-means++ D[i]
  chunkSums: Float64Array; // nChunks × maxCands: per-chunk seeding sums (units: integers)
  cands: Float32Array; // maxCands×d: candidate anchors for seeding
}

export function sharedF32(len: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(Math.max(1, len) * 4));
}
export function sharedF64(len: number): Float64Array {
  return new Float64Array(new SharedArrayBuffer(Math.max(1, len) * 8));
}
export function sharedI32(len: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Math.max(1, len) * 4));
}

export function chunkCount(n: number): number {
  return Math.ceil(n / CHUNK);
}

export function allocShared(x: VectorStore, n: number, d: number, m: number, maxCands: number): SharedState {
  return {
    n, d, m, x,
    anchors: sharedF32(m * d),
    huberH: sharedF64(m).fill(Infinity),
    j1: sharedI32(n),
    d1: sharedF32(n),
    j2: sharedI32(n),
    d2: sharedF32(n),
    w1: sharedF64(n),
    w2: sharedF64(n),
    lower: sharedF64(n),
    lower3: sharedF64(n),
    drift: sharedF64(m),
    sums: sharedF64(m * d),
    seedD: sharedF32(n),
    chunkSums: sharedF64(chunkCount(n) * maxCands),
    cands: sharedF32(maxCands * d),
  };
}

/**
 * Messages main -> worker. Every reply is { ok: true } or { ok: false, error }. A worker serves
 * several engines (an engine and its subsets share one pool): `engine` names whose state a
 * message is about; 'free' forgets one.
 */
export type WorkerRequest =
  | {
      op: 'init'; engine: number; state: PortableState; kernel: 'wasm' | 'js'; chunk0: number; chunk1: number;
      /** The worker writes the largest |x| of its rows to maxAbs[slot] (NaN if one is NaN). */
      maxAbs: Float64Array; slot: number;
      /** work[slot] counts the point-anchor distances its searches compute (the engine's profile). */
      work: Float64Array;
    }
  | { op: 'free'; engine: number }
  | {
      op: 'assign'; engine: number; version: number; temperature: number; bounds: boolean;
      /** Largest drift among the anchors not in `jumped`; distances to `jumped` are computed. */
      maxDrift: number; jumped: Int32Array;
      /** At T = 0 with enough anchors: the group bounds (groups.ts) replace `bounds`. */
      grouped?: GroupedPass;
    }
  | {
      op: 'reduce'; engine: number; k0: number; k1: number; sScale: number;
      /** Through the unit sums instead (reduceSplit in worker.ts). */
      split?: SplitReduce;
    }
  | {
      op: 'seed'; engine: number; step: 'begin' | 'add' | 'try' | 'many'; count: number; cands?: Float32Array; chunkSums?: Float64Array;
      /** Units per unit of squared distance of the chunk sums (fixed.ts seedScale). */
      seedScale: number;
      /** try: keep each point's distances to the L candidates here (n×L); add: reuse column fromTry. */
      tryDist?: Float32Array; fromTry?: number; tryL?: number;
      /** f16 rows: decode this worker's rows once and keep them while seeding (seeding.ts decides, by size). */
      cacheRows?: boolean;
    }
  | { op: 'knn'; base: Float32Array; nb: number; queries: Float32Array; q0: number; q1: number; d: number; k: number; ids: Int32Array; dists: Float32Array }
  | ({ op: 'pqSearch' } & PqRange);

type Typed = Float32Array | Float64Array | Int32Array;
const TYPED = { Float32Array, Float64Array, Int32Array };
/** A typed array as its buffer and place, which survive postMessage at any size. */
interface PortableArray {
  kind: keyof typeof TYPED;
  buffer: SharedArrayBuffer;
  byteOffset: number;
  length: number;
}
export type PortableState = { [K in keyof SharedState]: SharedState[K] extends Typed ? PortableArray : SharedState[K] };

/**
 * The state as the worker receives it. A typed array posted to a worker arrives truncated when it
 * spans more than 4 GiB (V8's serializer keeps 32 bits of its length; its buffer arrives whole), so
 * the arrays travel as buffers and offsets and the worker makes its own views (fromPortable).
 */
export function toPortable(st: SharedState): PortableState {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(st)) {
    const kind = (Object.keys(TYPED) as (keyof typeof TYPED)[]).find((t) => v instanceof TYPED[t]);
    out[k] = kind ? { kind, buffer: (v as Typed).buffer, byteOffset: (v as Typed).byteOffset, length: (v as Typed).length } : v;
  }
  return out as PortableState;
}

export function fromPortable(p: PortableState): SharedState {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    const a = v as PortableArray;
    out[k] = a && typeof a === 'object' && 'kind' in a && a.kind in TYPED ? new TYPED[a.kind](a.buffer as unknown as ArrayBuffer, a.byteOffset, a.length) : v;
  }
  return out as unknown as SharedState;
}
