// Rows of a fixed-layout input file read where they lie, a block at a time, without holding the
// file: what compress streams inputs larger than memory through (api/compress-stream.ts). .npy
// (C order, little-endian f32 or f16) and .fvecs hold row i at a known offset, so rows [r0, r1)
// are one positional read (fvecs: and a check of each record's dimension), and a sample of rows
// is one read per row. Other formats (and these in another layout) are read whole by io/read.ts.
import * as fs from 'node:fs';
import { allocDataset, type Dataset, type InputDtype, type VectorDtype } from '../../vectors/dataset.js';
import { NPY_MAGIC, npyHeaderOf } from './npy.js';
import { badInput, fdSource, type ByteSource } from './source.js';

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
  return rowsReader(src, n, d, dtype, h.elem, format, (r0, r1, dst) => src.readInto(dst, h.dataOffset + r0 * rowBytes));
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

/** A reader from `fill(r0, r1, dst)`, which puts the raw row bytes of rows [r0, r1) into dst. */
function rowsReader(
  src: ByteSource, n: number, d: number, dtype: VectorDtype, inputDtype: InputDtype, format: string,
  fill: (r0: number, r1: number, dst: Uint8Array) => void,
): BlockReader {
  const rowBytes = d * (dtype === 'f32' ? 4 : 2);
  const bytesOf = (ds: Dataset, rows: number) => new Uint8Array(ds.buffer, ds.byteOffset, rows * rowBytes);
  return {
    name: src.name, n, d, dtype, inputDtype, format, size: src.size,
    read(r0, r1, into) {
      if (!(Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= n)) throw new RangeError(`rows ${r0}..${r1} of ${n}`);
      const ds = into && into.dtype === dtype && into.buffer.byteLength - into.byteOffset >= (r1 - r0) * rowBytes
        ? { ...into, n: r1 - r0 }
        : allocDataset(r1 - r0, d, dtype, format);
      fill(r0, r1, bytesOf(ds, r1 - r0));
      return ds;
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
}
