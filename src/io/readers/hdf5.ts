// HDF5 (h5py, the ann-benchmarks files) through h5wasm, the HDF5 C library compiled to wasm. Its
// Node build reads the file by path (no copy of it in memory); the chosen dataset is read in
// slabs of rows (chunked and gzip-compressed datasets too) straight into the Dataset's array.
// Runs in the guarded decoder worker (guard.ts), like the other third-party decoders.
import * as h5 from 'h5wasm/node';
import { allocStore, elements, pieceRows, type VectorStore } from '../../vectors/dataset.js';
import { decodeElements, keptAs, type ElementType } from './elements.js';
import { firstSuspect } from './validate.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

/** Bytes of rows read per call into the library (its wasm heap holds one slab at a time). */
const SLAB_BYTES = 16 << 20;
const FLOAT_CLASS = 1; // H5T_FLOAT
const ELEMENTS: Record<number, ElementType> = { 2: 'f16', 4: 'f32', 8: 'f64' };

interface Candidate {
  path: string;
  shape: number[];
  /** e.g. 'f32', or the HDF5 type when vlc cannot read it. */
  type: string;
  /** Set when vlc can read it: a float16/32/64 dataset. */
  elem?: ElementType;
  littleEndian: boolean;
}

/** The path h5wasm opens: the descriptor we already hold (Linux), so stdin redirected from a file works too. */
function pathOf(src: ByteSource): string {
  if (!('fd' in src.ref)) throw badInput(src, 'HDF5 input must be a file (the HDF5 library reads by position); save the pipe to a file first');
  return process.platform === 'linux' ? `/proc/self/fd/${src.ref.fd}` : src.name;
}

function describe(c: Candidate): string {
  return `${c.path} (${c.type} ${c.shape.join(' × ') || 'scalar'})`;
}

function candidates(file: h5.File): Candidate[] {
  const out: Candidate[] = [];
  for (const path of file.paths()) {
    const entity = file.get(path);
    if (!(entity instanceof h5.Dataset)) continue;
    const m = entity.metadata;
    const elem = m.type === FLOAT_CLASS ? ELEMENTS[m.size] : undefined;
    const type = elem ?? (m.type === FLOAT_CLASS ? `float${m.size * 8}` : String(entity.dtype));
    out.push({ path: `/${path.replace(/^\//, '')}`, shape: m.shape ?? [], type, elem, littleEndian: m.littleEndian });
  }
  return out;
}

/** --dataset, else the only 2-D float dataset, else 'train' when the file has the ann-benchmarks layout. */
function choose(src: ByteSource, all: Candidate[], wanted: string | undefined): { chosen: Candidate; note?: string } {
  const listing = all.map(describe).join(', ') || 'none';
  if (wanted !== undefined) {
    const path = `/${wanted.replace(/^\//, '')}`;
    const chosen = all.find((c) => c.path === path);
    if (!chosen) throw badInput(src, `no dataset named '${wanted}' (datasets: ${listing})`);
    return { chosen };
  }
  const matrices = all.filter((c) => c.elem && c.shape.length === 2);
  if (matrices.length === 1) return { chosen: matrices[0] };
  const train = matrices.find((c) => c.path === '/train');
  if (train && all.some((c) => c.path === '/test' || c.path === '/neighbors'))
    return { chosen: train, note: `${src.name}: reading dataset 'train' (ann-benchmarks layout); --dataset picks another` };
  const why = matrices.length === 0 ? 'has no 2-D float dataset' : 'has several 2-D float datasets';
  throw badInput(src, `${why}; pick one with --dataset NAME (datasets: ${listing})`);
}

/**
 * The HDF5 library reports an error as a stack, outermost call first; its last entry is the cause
 * ("file signature not found"). One line for the user.
 */
function reason(e: unknown): string {
  const text = (e as Error).message ?? String(e);
  const causes = [...text.matchAll(/#\d+: .*? in [^:]*\(\): (.*)/g)].map((m) => m[1].trim());
  return causes.at(-1) ?? text.split('\n')[0];
}

let errorsThrow = false;

export async function readHdf5(src: ByteSource, wanted: string | undefined, _dropInvalid: boolean, progress: () => void = () => {}): Promise<RawDataset> {
  const path = pathOf(src);
  await h5.ready;
  if (!errorsThrow) {
    // Errors become exceptions instead of HDF5-DIAG lines printed on stderr.
    h5.Module.activate_throwing_error_handler();
    errorsThrow = true;
  }
  let file: h5.File;
  try {
    file = new h5.File(path, 'r');
  } catch (e) {
    throw badInput(src, `not a readable HDF5 file (${reason(e)})`);
  }
  try {
    const { chosen, note } = choose(src, candidates(file), wanted);
    const elem = chosen.elem;
    if (!elem)
      throw badInput(src, `dataset '${chosen.path}' holds ${chosen.type}; vlc reads float16, float32 and float64 datasets`);
    if (chosen.shape.length !== 2 || chosen.shape[0] === 0 || chosen.shape[1] === 0)
      throw badInput(src, `dataset '${chosen.path}' has shape (${chosen.shape.join(', ')}); vlc needs a non-empty 2-D dataset of n vectors × d dims`);
    const [n, d] = chosen.shape;
    const dataset = file.get(chosen.path) as h5.Dataset;
    // A contiguous dataset must fit in the file; compressed chunks may of course be larger.
    const bytes = n * d * dataset.metadata.size;
    if (dataset.metadata.chunks === null && bytes > src.size)
      throw badInput(src, `truncated HDF5: dataset '${chosen.path}' (${n} × ${d} ${chosen.type}) needs ${bytes} bytes, the file has ${src.size}`);
    const store = allocStore(n, d, keptAs(elem));
    const firstBad = readRows(src, file, chosen, elem, n, d, dataset.metadata.size, store, progress);
    const order = chosen.littleEndian ? '' : ' big-endian';
    return { n, d, ...store, format: `hdf5 '${chosen.path}' ${chosen.type}${order}`, inputDtype: elem, firstBadRow: firstBad, ...(note ? { note } : {}) };
  } finally {
    file.close();
  }
}

/** Read the dataset in slabs of rows into `store`; returns the first row holding NaN/Inf, or -1. */
function readRows(src: ByteSource, file: h5.File, c: Candidate, elem: ElementType, n: number, d: number, size: number, store: VectorStore, progress: () => void): number {
  const M = h5.Module;
  const rowsPerSlab = Math.max(1, Math.min(Math.floor(SLAB_BYTES / (d * size)), pieceRows(d, store.dtype)));
  const ptr = M._malloc(Math.min(n, rowsPerSlab) * d * size);
  if (ptr === 0) throw badInput(src, `the HDF5 library could not allocate ${rowsPerSlab * d * size} bytes`);
  let firstBad = -1;
  try {
    for (let r0 = 0; r0 < n; r0 += rowsPerSlab) {
      const k = Math.min(rowsPerSlab, n - r0);
      try {
        M.get_dataset_data(file.file_id, c.path, [BigInt(k), BigInt(d)], [BigInt(r0), 0n], [1n, 1n], BigInt(ptr));
      } catch (e) {
        throw badInput(src, `cannot read rows ${r0}..${r0 + k - 1} of dataset '${c.path}' (${reason(e)}); the file is probably corrupt or uses a filter vlc lacks (gzip and shuffle are built in)`);
      }
      // Re-read HEAPU8 every time: the wasm memory may have grown (and moved) during the read.
      const slab = M.HEAPU8.subarray(ptr, ptr + k * d * size);
      // (Big-endian data arrives little-endian: h5wasm reads into a little-endian copy of the type.)
      const data = elements(store, r0 * d, k * d);
      decodeElements(slab, elem, k * d, data, 0);
      if (firstBad < 0) {
        const bad = firstSuspect(data, 0, k * d);
        if (bad >= 0) firstBad = r0 + Math.floor(bad / d);
      }
      progress();
    }
  } finally {
    M._free(ptr);
  }
  return firstBad;
}
