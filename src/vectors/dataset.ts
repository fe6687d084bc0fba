// The in-memory form of an embedding file, shared by every reader, backend and command.
//
// The n×d values live in ONE SharedArrayBuffer of any size (Node allocates them beyond 4 GiB; CPU
// worker threads read them without a copy). What cannot exceed 4 GiB or 2^32 elements is a typed
// array or Buffer over them (V8, Node's fs, koffi), so nothing holds the vectors as one typed
// array: code reads them through views of at most maxViewBytes (rows(), forEachPiece()), which
// tests shrink to a few bytes (setMaxViewBytesForTests) so that every loop over pieces is
// exercised without multi-gigabyte fixtures. A SharedArrayBuffer posted to a worker keeps its
// size, but a typed array over more than 4 GiB of one arrives truncated (V8's serializer keeps 32
// bits of its length): workers get the buffer and offsets, and make their own views.

import { hugeSharedBuffer } from './huge-pages.js';

export type VectorDtype = 'f32' | 'f16';

/**
 * The element type the input came in, before the reader converted it (u8, i8, bf16 and f64 are
 * held as f32): kept so that ratios are told against the input's own bytes and decompress can
 * give the same type back.
 */
export type InputDtype = 'u8' | 'i8' | 'f16' | 'bf16' | 'f32' | 'f64';

export const INPUT_DTYPES: readonly InputDtype[] = ['u8', 'i8', 'f16', 'bf16', 'f32', 'f64'];

export const INPUT_DTYPE_BYTES: Record<InputDtype, number> = { u8: 1, i8: 1, f16: 2, bf16: 2, f32: 4, f64: 8 };

/** Where n×d elements of one dtype live: `buffer` from `byteOffset` on, row-major. */
export interface VectorStore {
  dtype: VectorDtype;
  buffer: SharedArrayBuffer;
  byteOffset: number;
}

/**
 * n vectors of d dimensions. f16 inputs stay f16 (raw IEEE half bits) so they stay half-size on
 * the GPU and on the host; every other input dtype (f64, u8, bvecs...) is converted to f32 while
 * reading.
 */
export interface Dataset extends VectorStore {
  n: number;
  d: number;
  /** What the reader saw, for logs and `info` (never written into .vlc files). */
  format: string;
  /** Rows skipped by --drop-invalid (NaN/Inf), 0 otherwise. */
  dropped: number;
  /** The input rows (0-based, ascending) --drop-invalid skipped, when known (their count is `dropped`). */
  droppedRows?: number[];
  /** The input's element type when it differs from `dtype` or is known (absent: `dtype`). */
  inputDtype?: InputDtype;
}

/** The element type the vectors came in: the reader's record, else how they are held. */
export function inputDtypeOf(ds: { dtype: VectorDtype; inputDtype?: InputDtype }): InputDtype {
  return ds.inputDtype ?? ds.dtype;
}

export type VectorView = Float32Array | Uint16Array;

/** What reading rows needs: where they are and their shape (a Dataset, or a reader's RawDataset). */
export type Rows = VectorStore & { n: number; d: number };

export function elementBytes(dtype: VectorDtype): number {
  return dtype === 'f32' ? 4 : 2;
}

/** Largest view of the vectors, in bytes: well inside V8's typed-array and Node's Buffer limits. */
const MAX_VIEW_BYTES = 2 ** 30;
let maxViewBytes = MAX_VIEW_BYTES;

/** Tests: make every view of the vectors at most `bytes` (undefined restores the default). */
export function setMaxViewBytesForTests(bytes?: number): void {
  maxViewBytes = bytes ?? MAX_VIEW_BYTES;
}

export function viewLimitBytes(): number {
  return maxViewBytes;
}

let storeBytes = 0;

/** Bytes allocStore has handed out in this process: tests and bench/ read it to see which steps copy vectors. */
export function storeBytesAllocated(): number {
  return storeBytes;
}

/** n×d elements of `dtype` in fresh shared memory; a clear error when the memory is not there. */
export function allocStore(n: number, d: number, dtype: VectorDtype): VectorStore {
  const bytes = n * d * elementBytes(dtype);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`cannot hold ${n} × ${d} ${dtype} values`);
  let buffer: SharedArrayBuffer;
  try {
    buffer = hugeSharedBuffer(Math.max(1, bytes)); // before the reader's first write: see huge-pages.ts
  } catch {
    throw new RangeError(`not enough memory for ${n} × ${d} ${dtype} vectors (${fmtGB(bytes)})`);
  }
  storeBytes += bytes;
  return { dtype, buffer, byteOffset: 0 };
}

/** A dataset of n×d zeros in fresh shared memory. */
export function allocDataset(n: number, d: number, dtype: VectorDtype, format: string): Dataset {
  return { n, d, ...allocStore(n, d, dtype), format, dropped: 0 };
}

function fmtGB(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** Elements [at, at + count) of a store as a typed view (no copy); at most maxViewBytes. */
export function elements(s: VectorStore, at: number, count: number): VectorView {
  const eb = elementBytes(s.dtype);
  if (count * eb > maxViewBytes) throw new RangeError(`a view of ${count} elements exceeds the ${maxViewBytes}-byte view limit (read in pieces)`);
  const off = s.byteOffset + at * eb;
  return s.dtype === 'f32' ? new Float32Array(s.buffer, off, count) : new Uint16Array(s.buffer, off, count);
}

/** Rows [r0, r1) as a typed view (no copy); at most pieceRows(ds) rows. */
export function rows(ds: Rows, r0: number, r1: number): VectorView {
  return elements(ds, r0 * ds.d, (r1 - r0) * ds.d);
}

/** Rows one view may hold (at least 1; the limit is never set below one row). */
export function pieceRows(d: number, dtype: VectorDtype, limit = maxViewBytes): number {
  return Math.max(1, Math.floor(limit / (d * elementBytes(dtype))));
}

/** f over consecutive views of the rows, each of at most `per` rows (default: as many as a view holds). */
export function forEachPiece(ds: Rows, f: (view: VectorView, r0: number, r1: number) => void, per = pieceRows(ds.d, ds.dtype)): void {
  for (let r0 = 0; r0 < ds.n; r0 += per) {
    const r1 = Math.min(ds.n, r0 + per);
    f(rows(ds, r0, r1), r0, r1);
  }
}

/** Rows [r0, r1) of a dataset, without a copy. */
export function sliceRows(ds: Dataset, r0: number, r1: number): Dataset {
  return { ...ds, n: r1 - r0, byteOffset: ds.byteOffset + r0 * ds.d * elementBytes(ds.dtype) };
}

/** The bytes of rows [r0, r1) (a view; at most the view limit). */
export function rowBytes(ds: Rows, r0: number, r1: number): Uint8Array {
  const rb = ds.d * elementBytes(ds.dtype);
  if ((r1 - r0) * rb > maxViewBytes) throw new RangeError(`a view of ${(r1 - r0) * rb} bytes exceeds the ${maxViewBytes}-byte view limit (read in pieces)`);
  return new Uint8Array(ds.buffer, ds.byteOffset + r0 * rb, (r1 - r0) * rb);
}

/**
 * The listed rows (in the order given) as a new dataset in shared memory, in the same dtype: an
 * engine's subset on the CPU (Engine.subset), and the training sample (--sample) on a backend
 * that cannot read the rows in place (Backend.openRows).
 */
export function selectRows(ds: Dataset, list: ArrayLike<number>): Dataset {
  const out = allocDataset(list.length, ds.d, ds.dtype, `${list.length} rows of ${ds.format}`);
  const per = pieceRows(ds.d, ds.dtype);
  for (let r0 = 0; r0 < list.length; r0 += per) {
    const r1 = Math.min(list.length, r0 + per);
    gatherRows(ds, list, r0, r1, rowBytes(out, r0, r1));
  }
  return out;
}

/**
 * The bytes of rows list[from], ..., list[to − 1] of `ds`, in that order, into `out` from its
 * start (room for to − from rows). The source is read through views of at most a view's worth
 * of rows, each reused while the rows stay inside it (the lists are mostly ascending).
 */
export function gatherRows(ds: Rows, list: ArrayLike<number>, from: number, to: number, out: Uint8Array): void {
  const rb = ds.d * elementBytes(ds.dtype);
  const per = pieceRows(ds.d, ds.dtype);
  const dst = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  let base = 0;
  let src: Buffer | undefined; // rows [base, base + per) of ds
  for (let r = from; r < to; r++) {
    const i = list[r];
    if (!(Number.isInteger(i) && i >= 0 && i < ds.n)) throw new Error(`selectRows: row ${i} out of range 0..${ds.n - 1}`);
    if (src === undefined || i < base || i >= base + per) {
      base = i;
      src = Buffer.from(ds.buffer, ds.byteOffset + i * rb, (Math.min(ds.n, i + per) - i) * rb);
    }
    src.copy(dst, (r - from) * rb, (i - base) * rb, (i - base + 1) * rb);
  }
}

const f16Table = (() => {
  // Exact decode of every half value: 65536 entries, 256 KiB, built once.
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const f = h & 0x3ff;
    if (e === 0) t[h] = s * f * 2 ** -24;
    else if (e === 31) t[h] = f ? NaN : s * Infinity;
    else t[h] = s * (1 + f / 1024) * 2 ** (e - 15);
  }
  return t;
})();

/** IEEE half bits -> float (exact). */
export function f16ToF32(h: number): number {
  return f16Table[h & 0xffff];
}

/** Decode half bits into out[at..] (exact). */
export function decodeHalf(src: Uint16Array, out: Float32Array, at = 0): void {
  for (let i = 0; i < src.length; i++) out[at + i] = f16Table[src[i]];
}

const bitsView = new Uint32Array(1);
const floatView = new Float32Array(bitsView.buffer);

/** Bits of float16's largest finite value, 65504: what a finite value beyond it becomes. */
export const F16_MAX_BITS = 0x7bff;

/**
 * float -> IEEE half bits, round to nearest even (as numpy's astype(float16) and CUDA's
 * __float2half_rn) — except that a finite value beyond ±65504 saturates to ±65504 instead of
 * becoming ±Inf. This is vlc's one narrowing rule (README "Your files are safe"): every f16 it
 * writes (decoded vectors, anchors, pq codebooks, projections) goes through here, so none holds an
 * Inf or NaN that was not in its input. ±Inf and NaN stay what they are.
 */
export function f32ToF16(v: number): number {
  floatView[0] = v;
  return halfFromFloatBits(bitsView[0]);
}

/** The same conversion from the float's 32 bits (bulk writers read them through one Uint32Array view). */
export function halfFromFloatBits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | F16_MAX_BITS; // finite, beyond f16: saturate
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | (h > F16_MAX_BITS ? F16_MAX_BITS : h); // 65520 and above would round up to Inf
}

/** Row i as f32 copied into `out` (length d), decoding f16; returns `out`. */
export function rowInto(ds: Rows, i: number, out: Float32Array): Float32Array {
  const v = rows(ds, i, i + 1);
  if (v instanceof Float32Array) out.set(v);
  else decodeHalf(v, out);
  return out;
}

/**
 * f over consecutive f32 views of rows [r0, r1) (f16 decoded into one reused buffer), each of at
 * most `per` rows and never more than a view holds: the row loops of the codecs and quality figures.
 */
export function forEachF32Rows(ds: Rows, r0: number, r1: number, f: (v: Float32Array, c0: number, c1: number) => void, per = pieceRows(ds.d, ds.dtype)): void {
  const step = Math.max(1, Math.min(per, pieceRows(ds.d, ds.dtype)));
  let scratch: Float32Array | undefined;
  for (let c0 = r0; c0 < r1; c0 += step) {
    const c1 = Math.min(r1, c0 + step);
    if (ds.dtype === 'f16') scratch ??= new Float32Array(Math.min(step, r1 - r0) * ds.d);
    f(rowsF32(ds, c0, c1, scratch), c0, c1);
  }
}

/** Row i as a fresh Float32Array (decoding f16). */
export function rowF32(ds: Rows, i: number): Float32Array {
  return rowsF32(ds, i, i + 1).slice();
}

/**
 * Rows list[0], list[1], … of `ds` as f32, one after another, into `out` (a fresh array when not
 * given: for many rows its page faults cost more than the copy itself). The rows are read
 * through one view per piece of pieceRows rows, made on first need and kept (a view of its own per
 * row, as rowsF32 makes, took a quarter longer).
 */
export function listedRowsF32(ds: Rows, list: ArrayLike<number>, out: Float32Array = new Float32Array(list.length * ds.d)): Float32Array {
  const d = ds.d, per = pieceRows(d, ds.dtype);
  if (out.length < list.length * d) throw new Error(`listedRowsF32: room for ${out.length / d} rows, ${list.length} asked`);
  const views: VectorView[] = [];
  for (let k = 0; k < list.length; k++) {
    const i = list[k];
    if (!(Number.isInteger(i) && i >= 0 && i < ds.n)) throw new Error(`row ${i} out of range 0..${ds.n - 1}`);
    const p = Math.floor(i / per);
    const v = (views[p] ??= rows(ds, p * per, Math.min(ds.n, (p + 1) * per)));
    const row = v.subarray((i - p * per) * d, (i - p * per + 1) * d);
    if (row instanceof Float32Array) out.set(row, k * d);
    else decodeHalf(row, out, k * d);
  }
  return out;
}

/**
 * Rows [r0, r1) as f32: a view of f32 data (do not write to it), a decoded copy of f16 data (into
 * `out` when given). At most a view's worth of rows.
 */
export function rowsF32(ds: Rows, r0: number, r1: number, out?: Float32Array): Float32Array {
  const v = rows(ds, r0, r1);
  if (v instanceof Float32Array) return v;
  const dst = out && out.length >= v.length ? out.subarray(0, v.length) : new Float32Array(v.length);
  decodeHalf(v, dst);
  return dst;
}

/**
 * The whole dataset as one f32 array (a view of f32 data, a decoded copy of f16): only for data
 * known to be small (queries, samples, tests) — it throws past the view limit.
 */
export function smallF32(ds: Rows): Float32Array {
  return rowsF32(ds, 0, ds.n);
}

/** n×d f32 values (any ArrayLike, e.g. a test's Float32Array) as a dataset in fresh shared memory. */
export function datasetFromF32(values: ArrayLike<number>, n: number, d: number, format = 'memory f32'): Dataset {
  const ds = allocDataset(n, d, 'f32', format);
  const per = pieceRows(d, 'f32');
  for (let r0 = 0; r0 < n; r0 += per) {
    const r1 = Math.min(n, r0 + per);
    const v = rows(ds, r0, r1);
    const base = r0 * d;
    if (ArrayBuffer.isView(values)) v.set((values as unknown as Float32Array).subarray(base, r1 * d));
    else for (let k = 0; k < v.length; k++) v[k] = values[base + k];
  }
  return ds;
}

/** Most elements one typed array can hold in this V8 (2^32 − 1). */
export const MAX_TYPED_ELEMENTS = 2 ** 32 - 1;

/** n×d vectors as Rows (any size), or as one Float32Array (small data: tests, library callers). */
export type VectorsLike = Rows | Float32Array;

/** `x` as Rows: itself, or an array's values in shared memory (used in place when already shared). */
export function asRows(x: VectorsLike, n: number, d: number): Rows {
  return x instanceof Float32Array ? datasetFromArray(x, n, d) : x;
}

/** Every row as one typed view (no copy): for small data — it throws past the view limit. */
export function viewAll(ds: Rows): VectorView {
  return rows(ds, 0, ds.n);
}

/**
 * n×d values already in a typed array as a dataset: f32 for a Float32Array, f16 half bits for a
 * Uint16Array. Shared memory is used in place; other memory is copied into shared memory.
 */
export function datasetFromArray(data: VectorView, n: number, d: number, format = 'memory'): Dataset {
  const dtype: VectorDtype = data instanceof Uint16Array ? 'f16' : 'f32';
  if (data.length < n * d) throw new RangeError(`${data.length} values given for ${n} × ${d}`);
  if (data.buffer instanceof SharedArrayBuffer) return { n, d, dtype, buffer: data.buffer, byteOffset: data.byteOffset, format, dropped: 0 };
  const ds = allocDataset(n, d, dtype, format);
  forEachPiece(ds, (v, r0, r1) => v.set(data.subarray(r0 * d, r1 * d)));
  return ds;
}
