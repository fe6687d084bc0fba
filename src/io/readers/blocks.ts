// Rows of a fixed-layout input file read where they lie, a block at a time, without holding the
// file: what compress streams inputs larger than memory through (api/compress-stream.ts). .npy
// (C order, little-endian f32 or f16) and .fvecs hold row i at a known offset, so rows [r0, r1)
// are one positional read (fvecs: and a check of each record's dimension), and a sample of rows
// is one read per row. Other formats (and these in another layout) are read whole by io/read.ts.
import * as fs from 'node:fs';
import { allocDataset, type Dataset, type InputDtype, type VectorDtype } from '../../vectors/dataset.js';
import { maxAbsOf, topValue } from '../../vectors/scale.js';
import { NPY_MAGIC, npyHeaderOf } from './npy.js';
import { parallelReadable, readParallel, readParallelTop } from './parallel-read.js';
import { badInput, fdSource, type ByteSource } from './source.js';
import { blockProblem } from './validate.js';

export interface BlockReader {
  readonly name: string;
  readonly n: number;
  readonly d: number;
  /** How the rows are held: f32, or f16 (half bits) for float16 .npy. */
  readonly dtype: VectorDtype;
  readonly inputDtype: InputDtype;
  /** What the reader saw, as Dataset.format says it. */
  readonly format: string;
  /** The input's bytes (progress). */
  readonly size: number;
  /** Rows [r0, r1) as a dataset of their own, in fresh shared memory (or in `into`'s, when it has room). */
  read(r0: number, r1: number, into?: Dataset): Dataset;
  /**
   * read() on threads where the layout allows (a .npy's rows: io/readers/parallel-read.ts), else
   * on this thread; readChecked also gives the first bad row's problem (validate.ts's words, and
   * the file it is in: a sharded input's rows numbered in their file, as the whole-file readers
   * number them) and the largest |x|, found by the threads as they read.
   */
  readAsync(r0: number, r1: number, into?: Dataset): Promise<Dataset>;
  readChecked(r0: number, r1: number, into?: Dataset): Promise<{ ds: Dataset; problem: { file: string; what: string } | undefined; maxAbs: number }>;
  /** The listed rows (any order, each in range), in that order, as a dataset of their own. */
  gather(list: ArrayLike<number>): Dataset;
  close(): void;
}

/**
 * A block reader over `path` when it is a regular file in a layout one (.npy C-order little-endian
 * f32/f16, .fvecs) with a size that matches its header; undefined otherwise (the whole-file
 * readers then read it and say what is wrong, if anything).
 */
export function openBlockReader(path: string, format?: string): BlockReader | undefined {
  if (path === '-' || (format !== undefined && format !== 'npy' && format !== 'fvecs')) return undefined;
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch {
    return undefined;
  }
  if (!st.isFile() || st.size < 16) return undefined;
  const src = fdSource(path, fs.openSync(path, 'r'), st.size, true);
  try {
    const head = src.read(0, 8);
    const npy = NPY_MAGIC.every((b, i) => head[i] === b);
    const reader = npy && format !== 'fvecs' ? npyBlocks(src) : !npy && (format === 'fvecs' || (format === undefined && /\.fvecs$/i.test(path))) ? fvecsBlocks(src) : undefined;
    if (!reader) src.close();
    return reader;
  } catch (e) {
    src.close();
    if ((e as Error).name === 'UsageError') return undefined; // the whole-file reader says it
    throw e;
  }
}

function npyBlocks(src: ByteSource): BlockReader | undefined {
  const h = npyHeaderOf(src);
  if (h.fortran || h.bigEndian || h.shape.length !== 2 || (h.elem !== 'f32' && h.elem !== 'f16')) return undefined;
  const [n, d] = h.shape;
  if (n === 0 || d === 0 || BigInt(src.size - h.dataOffset) !== h.dataBytes) return undefined;
  const dtype: VectorDtype = h.elem;
  const rowBytes = d * (dtype === 'f32' ? 4 : 2);
  const format = `npy ${h.elem}`;
  return rowsReader(src, n, d, dtype, h.elem, format, (r0, r1, dst) => src.readInto(dst, h.dataOffset + r0 * rowBytes), h.dataOffset);
}

function fvecsBlocks(src: ByteSource): BlockReader | undefined {
  const d = new DataView(src.read(0, 4).buffer).getInt32(0, true);
  if (!(d > 0 && d <= 1 << 20)) return undefined;
  const record = 4 + 4 * d;
  if (src.size % record !== 0) return undefined;
  const n = src.size / record;
  let scratch = new Uint8Array(0);
  return rowsReader(src, n, d, 'f32', 'f32', 'fvecs', (r0, r1, dst) => {
    const bytes = (r1 - r0) * record;
    if (scratch.length < bytes) scratch = new Uint8Array(bytes);
    const buf = scratch.subarray(0, bytes);
    src.readInto(buf, r0 * record);
    const view = new DataView(buf.buffer, buf.byteOffset, bytes);
    for (let i = 0; i < r1 - r0; i++) {
      const dimHere = view.getInt32(i * record, true);
      if (dimHere !== d)
        throw badInput(src, `record ${r0 + i} has dimension ${dimHere} but record 0 has ${d}: all vectors in a .fvecs file must have the same dimension`);
      dst.set(buf.subarray(i * record + 4, (i + 1) * record), i * 4 * d);
    }
  });
}

/**
 * A reader from `fill(r0, r1, dst)`, which puts the raw row bytes of rows [r0, r1) into dst; rows
 * that lie in the file as they are held, from byte `direct` on, are read on threads when a block is large.
 */
function rowsReader(
  src: ByteSource, n: number, d: number, dtype: VectorDtype, inputDtype: InputDtype, format: string,
  fill: (r0: number, r1: number, dst: Uint8Array) => void, direct?: number,
): BlockReader {
  const eb = dtype === 'f32' ? 4 : 2;
  const rowBytes = d * eb;
  const bytesOf = (ds: Dataset, rows: number) => new Uint8Array(ds.buffer, ds.byteOffset, rows * rowBytes);
  const target = (r0: number, r1: number, into?: Dataset): Dataset => {
    if (!(Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= n)) throw new RangeError(`rows ${r0}..${r1} of ${n}`);
    return into && into.dtype === dtype && into.buffer.byteLength - into.byteOffset >= (r1 - r0) * rowBytes
      ? { ...into, n: r1 - r0 }
      : allocDataset(r1 - r0, d, dtype, format);
  };
  const threaded = (r0: number, r1: number) => direct !== undefined && parallelReadable(src, (r1 - r0) * rowBytes);
  const reader: BlockReader = {
    name: src.name, n, d, dtype, inputDtype, format, size: src.size,
    read(r0, r1, into) {
      const ds = target(r0, r1, into);
      fill(r0, r1, bytesOf(ds, r1 - r0));
      return ds;
    },
    async readAsync(r0, r1, into) {
      if (!threaded(r0, r1)) return reader.read(r0, r1, into);
      const ds = target(r0, r1, into);
      await readParallel(src, direct! + r0 * rowBytes, (r1 - r0) * d, eb, ds, 0);
      return ds;
    },
    async readChecked(r0, r1, into) {
      if (!threaded(r0, r1)) {
        const ds = reader.read(r0, r1, into);
        return { ds, problem: problemIn(src.name, blockProblem(ds, r0)), maxAbs: maxAbsOf(ds) };
      }
      const ds = target(r0, r1, into);
      const { firstBad, top } = await readParallelTop(src, direct! + r0 * rowBytes, (r1 - r0) * d, eb, ds, 0);
      // A suspect value (NaN, Inf, or merely large) is judged by the readers' own rules.
      return { ds, problem: firstBad >= 0 ? problemIn(src.name, blockProblem(ds, r0)) : undefined, maxAbs: topValue(top, dtype) };
    },
    gather(list) {
      const ds = allocDataset(list.length, d, dtype, `${list.length} rows of ${format}`);
      const all = bytesOf(ds, list.length);
      // Runs of consecutive rows are one read each.
      for (let k = 0; k < list.length; ) {
        let e = k + 1;
        while (e < list.length && list[e] === list[e - 1] + 1 && e - k < 4096) e++;
        const r0 = list[k];
        if (!(Number.isInteger(r0) && r0 >= 0 && list[e - 1] < n)) throw new RangeError(`row ${r0} out of range 0..${n - 1}`);
        fill(r0, r0 + (e - k), all.subarray(k * rowBytes, e * rowBytes));
        k = e;
      }
      return ds;
    },
    close: () => src.close(),
  };
  return reader;
}

function problemIn(file: string, what: string | undefined): { file: string; what: string } | undefined {
  return what === undefined ? undefined : { file, what };
}

/**
 * Several block readers as one whose rows are theirs concatenated in the order given (a sharded
 * input: io/shards.ts expandInputs gives the files in the order the whole-file reader reads them).
 * Every part holds rows of the same dimension and element type (io/shards.ts openInputBlocks checks).
 */
export function concatBlockReaders(parts: BlockReader[]): BlockReader {
  if (parts.length === 1) return parts[0];
  const first = parts[0];
  if (parts.some((p) => p.d !== first.d || p.dtype !== first.dtype)) throw new Error('concatBlockReaders: parts of different shapes');
  const starts = [0];
  for (const p of parts) starts.push(starts[starts.length - 1] + p.n);
  const n = starts[parts.length];
  const { d, dtype } = first;
  const rowBytes = d * (dtype === 'f32' ? 4 : 2);
  const format = `${parts.length} files, ${first.format}`;
  /** The part holding row r (the last part whose first row is at most r). */
  const partOf = (r: number) => {
    let lo = 0, hi = parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= r) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const inputDtype = parts.every((p) => p.inputDtype === first.inputDtype) ? first.inputDtype : first.dtype;
  const target = (r0: number, r1: number, into?: Dataset): Dataset => {
    if (!(Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= n)) throw new RangeError(`rows ${r0}..${r1} of ${n}`);
    return into && into.dtype === dtype && into.buffer.byteLength - into.byteOffset >= (r1 - r0) * rowBytes
      ? { ...into, n: r1 - r0, format }
      : allocDataset(r1 - r0, d, dtype, format);
  };
  /** Rows [r0, r1) as runs of one part each: part k's rows [a, b), read in place into `view` of ds. */
  const runs = (ds: Dataset, r0: number, r1: number) => {
    const out: Array<{ k: number; a: number; b: number; view: Dataset }> = [];
    for (let r = r0; r < r1; ) {
      const k = partOf(r);
      const e = Math.min(r1, starts[k + 1]);
      out.push({ k, a: r - starts[k], b: e - starts[k], view: { ...ds, byteOffset: ds.byteOffset + (r - r0) * rowBytes, n: e - r } });
      r = e;
    }
    return out;
  };
  const same = (ds: Dataset, got: Dataset) => {
    if (got.buffer !== ds.buffer) throw new Error('concatBlockReaders: a part read outside the block');
  };
  return {
    name: first.name, n, d, dtype, inputDtype, format, size: parts.reduce((s, p) => s + p.size, 0),
    read(r0, r1, into) {
      const ds = target(r0, r1, into);
      for (const { k, a, b, view } of runs(ds, r0, r1)) same(ds, parts[k].read(a, b, view));
      return ds;
    },
    async readAsync(r0, r1, into) {
      const ds = target(r0, r1, into);
      for (const got of await Promise.all(runs(ds, r0, r1).map(({ k, a, b, view }) => parts[k].readAsync(a, b, view)))) same(ds, got);
      return ds;
    },
    async readChecked(r0, r1, into) {
      const ds = target(r0, r1, into);
      const got = await Promise.all(runs(ds, r0, r1).map(({ k, a, b, view }) => parts[k].readChecked(a, b, view)));
      got.forEach((g) => same(ds, g.ds));
      // The parts in row order: the first problem found is the first of the block.
      return { ds, problem: got.find((g) => g.problem)?.problem, maxAbs: got.reduce((t, g) => Math.max(t, g.maxAbs), 0) };
    },
    gather(list) {
      const ds = allocDataset(list.length, d, dtype, `${list.length} rows of ${format}`);
      const all = new Uint8Array(ds.buffer, ds.byteOffset, list.length * rowBytes);
      // Consecutive entries of one part are one gather of that part.
      for (let k = 0; k < list.length; ) {
        const r = list[k];
        if (!(Number.isInteger(r) && r >= 0 && r < n)) throw new RangeError(`row ${r} out of range 0..${n - 1}`);
        const p = partOf(r);
        let e = k + 1;
        while (e < list.length && list[e] >= starts[p] && list[e] < starts[p + 1]) e++;
        const local = Array.from({ length: e - k }, (_, j) => list[k + j] - starts[p]);
        const got = parts[p].gather(local);
        all.set(new Uint8Array(got.buffer, got.byteOffset, (e - k) * rowBytes), k * rowBytes);
        k = e;
      }
      return ds;
    },
    close: () => parts.forEach((p) => p.close()),
  };
}
