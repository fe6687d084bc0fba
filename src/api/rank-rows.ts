// What one MPI rank reads of the input (api/compress-mpi.ts): only its own rows where the format
// allows it, so no rank holds the whole data.
//   - as many input files as ranks (a sharded input): rank r reads file r, whole;
//   - one .npy (C order) or .fvecs file: rank r reads its range of rows (evenSplit), by position;
//   - anything else (other formats, Fortran-order .npy, stdin is refused): every rank reads the
//     whole input, then keeps its range — the same rows, but each rank holds all of them while
//     reading (README "Several machines").
// Rows are the single-process rows in the same order, so the ranks' rows concatenated in rank
// order are exactly what `vlc compress` without MPI trains on.
import * as fs from 'node:fs';
import { evenSplit } from '../backend/sharded/backend.js';
import { UsageError } from '../errors.js';
import { allocStore, sliceRows, type Dataset } from '../vectors/dataset.js';
import { probeRows, readDataset, type ReadOptions } from '../io/read.js';
import { keptAs, readElements } from '../io/readers/elements.js';
import { npyHeaderOf } from '../io/readers/npy.js';
import { fdSource, type ByteSource } from '../io/readers/source.js';
import { checkFinite } from '../io/readers/validate.js';
import { readVecs } from '../io/readers/vecs.js';
import { expandInputs, readInPlace, readInputs } from '../io/shards.js';
import { SNIFF_BYTES, sniffFormat } from '../io/sniff.js';

export interface RankRows {
  ds: Dataset;
  /** How the rows were found, for the log: 'file 2 of 4', 'rows 0..4999 of 10000', 'whole input, sliced'. */
  how: string;
}

export async function readRankRows(input: string[], rank: number, size: number, o: ReadOptions): Promise<RankRows> {
  if (input.includes('-')) throw new UsageError('under MPI every rank reads the input itself: give a file, not - (stdin)');
  const files = expandInputs(input, o.allowDuplicateInputs);
  if (files.length === size && size > 1) return { ds: await readDataset(files[rank], o), how: `file ${rank + 1} of ${size}` };
  if (files.length === 1) {
    const ranged = await readRange(files[0], rank, size, o);
    if (ranged) return ranged;
  }
  // Several fixed-layout files: this rank's rows read where they lie (a bad value with
  // --drop-invalid renumbers every rank's rows: then the whole input is read, as below).
  const mine = files.length > 1 && !o.dropInvalid ? await readInPlace(files, o, (n) => rangeOf(n, rank, size)) : undefined;
  if (mine) {
    const { r0, of, ...ds } = mine;
    return { ds, how: `rows ${r0}..${r0 + ds.n - 1} of ${of} in ${files.length} files` };
  }
  const whole = await readInputs(files.length === 1 ? files[0] : files, o);
  const { r0, r1 } = rangeOf(whole.n, rank, size);
  // The dropped rows are told once, by rank 0, with their input ids (compress-mpi.ts adds the ranks' lists).
  const dropped = rank === 0 ? { dropped: whole.dropped, droppedRows: whole.droppedRows } : { dropped: 0, droppedRows: undefined };
  return { ds: { ...sliceRows(whole, r0, r1), format: whole.format, ...dropped }, how: 'whole input read, then sliced' };
}

/** Rank `rank`'s rows of n: the evenSplit range. */
function rangeOf(n: number, rank: number, size: number): { r0: number; r1: number } {
  if (n < size) throw new UsageError(`${n} vectors cannot be shared among ${size} MPI ranks; run fewer ranks (mpirun -n ${Math.max(1, n)})`);
  const rows = evenSplit(n, size);
  const r0 = rows.slice(0, rank).reduce((a, b) => a + b, 0);
  return { r0, r1: r0 + rows[rank] };
}

/** A C-order .npy or a .fvecs file's range of rows, read by position; undefined for other inputs. */
async function readRange(path: string, rank: number, size: number, o: ReadOptions): Promise<RankRows | undefined> {
  const n = await probeRows(path, o); // undefined when anything is off: the whole-file reader then explains
  if (n === undefined || (o.format !== undefined && o.format !== 'npy' && o.format !== 'fvecs')) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch {
    return undefined; // the whole-file reader gives the usual message
  }
  const src = fdSource(path, fd, fs.fstatSync(fd).size, true);
  try {
    const format = o.format ?? sniffFormat(src.read(0, Math.min(src.size, SNIFF_BYTES)), src.size, path);
    const { r0, r1 } = rangeOf(n, rank, size);
    const how = `rows ${r0}..${r1 - 1} of ${n}`;
    if (format === 'npy') {
      const h = npyHeaderOf(src);
      if (h.fortran || h.shape.length !== 2 || BigInt(src.size - h.dataOffset) !== h.dataBytes) return undefined;
      const d = h.shape[1];
      const eb = Number(h.dataBytes / BigInt(n * d));
      const store = allocStore(r1 - r0, d, keptAs(h.elem));
      const bad = await readElements(src, h.dataOffset + r0 * d * eb, (r1 - r0) * d, h.elem, store, 0, h.bigEndian);
      const raw = { n: r1 - r0, d, ...store, format: `npy ${h.elem}`, inputDtype: h.elem, firstBadRow: bad < 0 ? -1 : Math.floor(bad / d) };
      return { ds: checkFinite(raw, path, o.dropInvalid ?? false), how };
    }
    if (format === 'fvecs') {
      const record = src.size / n;
      if (!Number.isInteger(record)) return undefined; // trailing bytes: the whole-file reader refuses them
      const raw = await readVecs(window(src, r0 * record, (r1 - r0) * record), 'fvecs');
      return { ds: checkFinite(raw, path, o.dropInvalid ?? false), how };
    }
    return undefined;
  } finally {
    src.close();
  }
}

/** `length` bytes of src from `start`, as a source of their own (for a reader that reads records from 0). */
function window(src: ByteSource, start: number, length: number): ByteSource {
  return {
    name: src.name,
    size: length,
    readInto: (dst, position) => src.readInto(dst, start + position),
    read: (position, n) => src.read(start + position, Math.min(n, length - position)),
    get ref(): never {
      throw new Error('a window of a file cannot be handed to a decoder worker');
    },
    close: () => {},
  };
}
