// The one entry point for reading embedding files: open (file, stdin, FIFO, device), pick a reader
// by magic bytes / extension / --format, read, then refuse (or drop) rows with NaN or Inf.
// Files are read by position; streams (readers/stream.ts) are held in memory, bounded by what
// their header promises or by the memory budget.
// Our own readers (npy, npz, vecs, raw, safetensors, CSV, JSONL) run here; Arrow, Parquet and
// HDF5 go through third-party decoders, run in a guarded worker (readers/guard.ts).
import * as fs from 'node:fs';
import type { Dataset } from '../vectors/dataset.js';
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { formatFromExtension, INPUT_FORMATS, isVlcFile, SNIFF_BYTES, sniffFormat, SUPPORTED_INPUTS, type InputFormat } from './sniff.js';
import { badInput, fdSource, type ByteSource } from './readers/source.js';
import { openInput, streamBudget, type StreamInput } from './readers/stream.js';
import { npyHeaderEnd, parseNpyHeader, readNpy } from './readers/npy.js';
import { checkVecsDimension, readVecs } from './readers/vecs.js';
import { readRaw } from './readers/raw.js';
import { parseSafetensorsHeader, readSafetensors, safetensorsHeaderEnd } from './readers/safetensors.js';
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
  allowDuplicateInputs?: boolean; // several inputs: one file may be named twice (its rows read twice; io/shards.ts)
  /** Hears the input's bytes read so far, and its size when known (progress displays). */
  onBytes?: (read: number, total?: number) => void;
}

export async function readDataset(path: string, o: ReadOptions = {}): Promise<Dataset> {
  const forced = o.format === undefined ? undefined : parseFormat(o.format);
  const input = openInput(path, o.onBytes);
  let src: ByteSource | undefined;
  try {
    let format: InputFormat;
    if (input.file) {
      if (input.size === 0) throw badInput(path === '-' ? 'stdin' : path, 'is empty (0 bytes)');
      src = fdSource(path === '-' ? 'stdin' : path, input.fd, input.size, input.owned, o.onBytes && ((b) => o.onBytes!(b, input.size)));
      const head = src.read(0, Math.min(src.size, SNIFF_BYTES));
      refuseVlc(head, src.name);
      format = forced ?? detect(head, src.size, src.name, o);
    } else {
      ({ src, format } = await readStream(input.stream, forced, o));
    }
    const { note, ...raw } = await readAs(src, format, o);
    if (note) log().info(note);
    return checkFinite(raw, src.name, o.dropInvalid ?? false);
  } finally {
    if (src) src.close();
    if (!input.file) input.stream.close();
    else if (!src && input.owned) fs.closeSync(input.fd);
  }
}

/**
 * A stream is sniffed from its first bytes and its header checked before the rest is read; then
 * it is read to its end, never past the size its header promises (npy, safetensors) or, for
 * formats without one, past the memory budget.
 */
async function readStream(stream: StreamInput, forced: InputFormat | undefined, o: ReadOptions): Promise<{ src: ByteSource; format: InputFormat }> {
  const held = await stream.fill(HEAD_BYTES);
  if (held === 0) throw badInput(stream.name, 'is empty (0 bytes)');
  const head = stream.prefix(HEAD_BYTES);
  refuseVlc(head, stream.name);
  const format = forced ?? sniffFormat(head, Number.MAX_SAFE_INTEGER, stream.name) ?? plausibleHeadless(head, stream.name, o);
  const promised = await streamedSize(stream, format, o);
  const budget = streamBudget();
  if (promised !== undefined && promised > budget)
    throw badInput(stream.name, `its header describes ${promised} bytes, more than vlc can hold in memory here (${budget}); give a regular file`);
  const limit = promised ?? budget;
  const src = await stream.readToEnd(limit, () =>
    badInput(stream.name, promised !== undefined
      ? `the input goes on past the ${promised} bytes its ${format} header describes; refusing the rest`
      : `more than ${limit} bytes without an end (half this machine's memory); vlc refuses streams it cannot hold — give a regular file`),
  );
  if (promised !== undefined || forced) return { src, format };
  // Headerless formats are told apart by their size too (fvecs/bvecs records), now that it is known.
  return { src, format: detect(src.read(0, Math.min(src.size, SNIFF_BYTES)), src.size, src.name, o) };
}

/** Bytes read before the format is decided. */
const HEAD_BYTES = SNIFF_BYTES;

/**
 * Without a magic number, a stream must at least start like one of the headerless formats
 * (an fvecs/bvecs dimension, a JSON object, or raw with --dim); otherwise it is refused before
 * anything more is read.
 */
function plausibleHeadless(head: Uint8Array, name: string, o: ReadOptions): InputFormat {
  if (o.dim !== undefined) return 'raw';
  const d = head.length >= 4 ? new DataView(head.buffer, head.byteOffset, head.length).getInt32(0, true) : 0;
  const firstChar = head.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  if ((d > 0 && d <= 1 << 16) || firstChar === 0x7b) return 'fvecs'; // refined by detect() once the size is known
  throw unrecognized(head, name);
}

/** The input's total size when its header gives it; checks the header (or first record) either way. */
async function streamedSize(stream: StreamInput, format: InputFormat, o: ReadOptions): Promise<number | undefined> {
  const bytes = async (k: number) => (await stream.fill(k), stream.prefix(k));
  switch (format) {
    case 'npy': {
      const end = npyHeaderEnd(stream.name, await bytes(12));
      const h = parseNpyHeader(stream.name, await bytes(end));
      return end + Number(h.dataBytes > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : h.dataBytes);
    }
    case 'safetensors': {
      const end = safetensorsHeaderEnd(stream.name, await bytes(8));
      return end + Number(parseSafetensorsHeader(stream.name, await bytes(end), undefined).dataBytes);
    }
    case 'fvecs':
    case 'bvecs':
      if (o.format !== undefined) checkVecsDimension(stream.name, await bytes(4), format);
      return undefined;
    case 'jsonl': {
      const first = (await bytes(HEAD_BYTES)).find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
      if (first !== 0x7b) throw badInput(stream.name, 'does not start with a JSON object; JSON lines look like {"embedding": [0.1, ...]}');
      return undefined;
    }
    case 'parquet':
      if (!startsWithText(await bytes(4), 'PAR1')) throw badInput(stream.name, 'not a Parquet file (no PAR1 magic at the start)');
      return undefined;
    case 'arrow':
    case 'arrow-stream': {
      const head = await bytes(8);
      const stream8 = head.length >= 8 && new DataView(head.buffer, head.byteOffset, 8).getInt32(0, true) === -1;
      if (!startsWithText(head, 'ARROW1') && !stream8) throw badInput(stream.name, 'not an Arrow IPC file or stream (no ARROW1 magic or message marker at the start)');
      return undefined;
    }
    case 'npz':
      if (!startsWithText(await bytes(4), 'PK\x03\x04') && !startsWithText(await bytes(4), 'PK\x05\x06'))
        throw badInput(stream.name, 'not an .npz (zip) file (no PK magic at the start)');
      return undefined;
    case 'hdf5': // its signature may sit after a user block: the reader looks for it
      return undefined;
    case 'csv': {
      const head = await bytes(HEAD_BYTES);
      if (head.some((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f))
        throw badInput(stream.name, 'is not text (binary bytes in its first lines); CSV input is numbers split by commas, tabs or spaces');
      return undefined;
    }
    case 'raw':
      return undefined;
  }
}

/**
 * Every input of vectors, whatever its name or --format, is first told apart from vlc's own files:
 * a .vlc read as npy or raw would give a misleading "wrong magic" or garbage vectors. (The 8-byte
 * magic, with its CR LF SUB LF, cannot plausibly start float data, so even --format raw is refused.)
 */
function refuseVlc(head: Uint8Array, name: string): void {
  if (isVlcFile(head)) throw badInput(name, 'this is already a .vlc file; use vlc decompress to get its vectors back');
}

function startsWithText(head: Uint8Array, magic: string): boolean {
  return [...magic].every((c, i) => head[i] === c.charCodeAt(0));
}

function parseFormat(f: string): InputFormat {
  const v = f.toLowerCase();
  if (v === 'feather' || v === 'ipc') return 'arrow';
  if (v === 'tsv') return 'csv';
  if (v === 'h5') return 'hdf5';
  if ((INPUT_FORMATS as readonly string[]).includes(v)) return v as InputFormat;
  throw new UsageError(`--format must be one of ${INPUT_FORMATS.join(', ')} (got '${f}')`);
}

function detect(head: Uint8Array, size: number, name: string, o: ReadOptions): InputFormat {
  const found = sniffFormat(head, size, name);
  if (found) return found;
  if (o.dim !== undefined) return 'raw'; // headerless bytes plus a dimension: the user means raw
  throw unrecognized(head, name);
}

function unrecognized(head: Uint8Array, name: string) {
  const hex = [...head.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const hint = formatFromExtension(name);
  const what = hint && hint !== 'raw' ? `not a valid ${hint === 'arrow-stream' ? 'arrow' : hint} file (wrong magic bytes: ${hex})` : `unrecognized format (first bytes: ${hex})`;
  return badInput(name, `${what}; supported: ${SUPPORTED_INPUTS}; use --format to force one`);
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

/**
 * The row count of a regular file when its header or footer says it (npy, safetensors, fvecs,
 * bvecs, raw with --dim, Parquet), without reading its data; undefined when only its contents
 * can tell, or when anything about it is off (the reader then explains). Sharded inputs
 * (shards.ts) size their memory with it. A Parquet count includes rows --drop-invalid may skip.
 */
export async function probeRows(path: string, o: ReadOptions = {}): Promise<number | undefined> {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    const size = fs.fstatSync(fd).size;
    const src = fdSource(path, fd, size, false);
    const format = o.format === undefined ? sniffFormat(src.read(0, Math.min(size, SNIFF_BYTES)), size, path) : parseFormat(o.format);
    switch (format) {
      case 'npy': {
        const h = parseNpyHeader(path, src.read(0, Math.min(size, npyHeaderEnd(path, src.read(0, Math.min(size, 12))))));
        return h.shape.length === 2 ? h.shape[0] : undefined;
      }
      case 'safetensors': {
        const end = safetensorsHeaderEnd(path, src.read(0, 8));
        const { tensors } = parseSafetensorsHeader(path, src.read(0, end), BigInt(size - end));
        const t = o.tensor === undefined ? tensors.filter((x) => x.shape.length === 2) : tensors.filter((x) => x.name === o.tensor);
        return t.length === 1 && t[0].shape.length === 2 ? t[0].shape[0] : undefined;
      }
      case 'fvecs':
      case 'bvecs': {
        const d = checkVecsDimension(path, src.read(0, 4), format);
        return Math.floor(size / (4 + d * (format === 'fvecs' ? 4 : 1)));
      }
      case 'raw':
        return o.dim ? Math.floor(size / (o.dim * (o.rawDtype === 'f16' ? 2 : 4))) : undefined;
      case 'parquet':
        return await parquetRows(src);
      default:
        return undefined;
    }
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** num_rows of a Parquet footer (its length in the last 8 bytes), parsed by hyparquet (loaded on use). */
async function parquetRows(src: ByteSource): Promise<number | undefined> {
  if (src.size < 12) return undefined;
  const tail = src.read(src.size - 8, 8);
  const len = new DataView(tail.buffer, tail.byteOffset, 8).getUint32(0, true);
  if (!startsWithText(tail.subarray(4), 'PAR1') || len + 12 > src.size) return undefined;
  const { parquetMetadata } = await import('hyparquet');
  const footer = src.read(src.size - 8 - len, len + 8);
  return Number(parquetMetadata(footer.buffer as ArrayBuffer).num_rows);
}
