// The one entry point for reading embedding files: open (file or stdin), pick a reader by magic
// bytes / extension / --format, read, then refuse (or drop) rows with NaN or Inf.
// Our own readers (npy, npz, vecs, raw, safetensors, CSV, JSONL) run here; Arrow, Parquet and
// HDF5 go through third-party decoders, run in a guarded worker (readers/guard.ts).
import type { Dataset } from './dataset.js';
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { formatFromExtension, INPUT_FORMATS, SNIFF_BYTES, sniffFormat, SUPPORTED_INPUTS, type InputFormat } from './sniff.js';
import { badInput, openFileSource, readStdin, type ByteSource } from './readers/source.js';
import { readNpy } from './readers/npy.js';
import { readVecs } from './readers/vecs.js';
import { readRaw } from './readers/raw.js';
import { readSafetensors } from './readers/safetensors.js';
import { checkFinite } from './readers/validate.js';
import { readGuarded } from './readers/guard.js';
import type { RawDataset } from './readers/types.js';

export interface ReadOptions {
  format?: string; // force: npy | npz | fvecs | bvecs | arrow | parquet | safetensors | hdf5 | csv | raw | jsonl
  column?: string; // Arrow/Parquet column (default: the only/first vector-like column)
  tensor?: string; // safetensors tensor name (default: the only 2-D tensor)
  array?: string; // .npz array name (default: the only 2-D float array)
  dataset?: string; // HDF5 dataset path (default: the only 2-D float dataset, or 'train')
  field?: string; // JSONL field (default "embedding", else the only array field)
  dim?: number; // raw f32/f16 input: dimension (required for raw)
  rawDtype?: 'f32' | 'f16'; // raw input element type (default f32)
  dropInvalid?: boolean; // skip rows with NaN/Inf (count in Dataset.dropped) instead of failing
}

export async function readDataset(path: string, o: ReadOptions = {}): Promise<Dataset> {
  const forced = o.format === undefined ? undefined : parseFormat(o.format);
  const src = path === '-' ? readStdin() : openFileSource(path);
  try {
    const format = forced ?? detect(src, o);
    const { note, ...raw } = await readAs(src, format, o);
    if (note) log().info(note);
    return checkFinite(raw, src.name, o.dropInvalid ?? false);
  } finally {
    src.close();
  }
}

function parseFormat(f: string): InputFormat {
  const v = f.toLowerCase();
  if (v === 'feather' || v === 'ipc') return 'arrow';
  if (v === 'tsv') return 'csv';
  if (v === 'h5') return 'hdf5';
  if ((INPUT_FORMATS as readonly string[]).includes(v)) return v as InputFormat;
  throw new UsageError(`--format must be one of ${INPUT_FORMATS.join(', ')} (got '${f}')`);
}

function detect(src: ByteSource, o: ReadOptions): InputFormat {
  const head = src.read(0, Math.min(src.size, SNIFF_BYTES));
  const found = sniffFormat(head, src.size, src.name);
  if (found) return found;
  if (o.dim !== undefined) return 'raw'; // headerless bytes plus a dimension: the user means raw
  const hex = [...head.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const hint = formatFromExtension(src.name);
  const what = hint && hint !== 'raw' ? `not a valid ${hint === 'arrow-stream' ? 'arrow' : hint} file (wrong magic bytes: ${hex})` : `unrecognized format (first bytes: ${hex})`;
  throw badInput(src, `${what}; supported: ${SUPPORTED_INPUTS}; use --format to force one`);
}

async function readAs(src: ByteSource, format: InputFormat, o: ReadOptions): Promise<RawDataset> {
  switch (format) {
    case 'npy':
      return readNpy(src);
    case 'npz':
      return (await import('./readers/npz.js')).readNpz(src, o.array);
    case 'csv':
      return (await import('./readers/csv.js')).readCsv(src);
    case 'hdf5':
      return readGuarded(src, 'hdf5', o.dataset, o.dropInvalid ?? false);
    case 'fvecs':
    case 'bvecs':
      return readVecs(src, format);
    case 'raw':
      return readRaw(src, o.dim, o.rawDtype);
    case 'safetensors':
      return readSafetensors(src, o.tensor);
    case 'arrow':
    case 'arrow-stream':
      return readGuarded(src, 'arrow', o.column, o.dropInvalid ?? false);
    case 'parquet':
      return readGuarded(src, 'parquet', o.column, o.dropInvalid ?? false);
    case 'jsonl':
      return (await import('./readers/jsonl.js')).readJsonl(src, o.field);
  }
}
