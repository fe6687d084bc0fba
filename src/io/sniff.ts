// Which reader to use: magic bytes first, then the file extension as a hint, then weak checks.
import { extname } from 'node:path';
import { NPY_MAGIC } from './readers/npy.js';
import { looksLikeSafetensors } from './readers/safetensors.js';
import { looksLikeCsv } from './readers/csv-sniff.js';

export type InputFormat = 'npy' | 'npz' | 'fvecs' | 'bvecs' | 'arrow' | 'arrow-stream' | 'parquet' | 'safetensors' | 'hdf5' | 'csv' | 'raw' | 'jsonl';

export const INPUT_FORMATS = ['npy', 'npz', 'fvecs', 'bvecs', 'arrow', 'parquet', 'safetensors', 'hdf5', 'csv', 'raw', 'jsonl'] as const;

export const SUPPORTED_INPUTS =
  '.npy, .npz, .fvecs, .bvecs, Arrow IPC file/stream or Feather v2, Parquet, safetensors, HDF5, CSV/TSV, JSONL, or raw f32/f16 (--format raw --dim D)';

/** HDF5's signature: at byte 0, or (after a user block) at 512, 1024, 2048... */
export const HDF5_MAGIC = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];
/**
 * The magic of vlc's own files (io/vlc/format.ts): 89 'V' 'L' 'C' 0D 0A 1A 0A. A .vlc given where
 * vectors are read (renamed x.npy, or under any --format) is recognised by it, whatever its name.
 */
export const VLC_MAGIC = [0x89, 0x56, 0x4c, 0x43, 0x0d, 0x0a, 0x1a, 0x0a];

/** Whether `head` starts with the .vlc magic: then the input is compressed already, not vectors. */
export function isVlcFile(head: Uint8Array): boolean {
  return startsWith(head, VLC_MAGIC);
}

/** Bytes sniffFormat wants to see: enough for a few CSV lines. */
export const SNIFF_BYTES = 4096;

const EXTENSIONS: Record<string, InputFormat> = {
  '.npy': 'npy',
  '.npz': 'npz',
  '.h5': 'hdf5',
  '.hdf5': 'hdf5',
  '.hdf': 'hdf5',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.fvecs': 'fvecs',
  '.bvecs': 'bvecs',
  '.arrow': 'arrow',
  '.feather': 'arrow',
  '.ipc': 'arrow',
  '.arrows': 'arrow-stream',
  '.parquet': 'parquet',
  '.pq': 'parquet',
  '.safetensors': 'safetensors',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'jsonl',
  '.f32': 'raw',
  '.f16': 'raw',
  '.raw': 'raw',
  '.bin': 'raw',
};

export function formatFromExtension(path: string): InputFormat | undefined {
  return EXTENSIONS[extname(path).toLowerCase()];
}

function startsWith(head: Uint8Array, magic: number[] | string): boolean {
  const bytes = typeof magic === 'string' ? [...magic].map((c) => c.charCodeAt(0)) : magic;
  return head.length >= bytes.length && bytes.every((b, i) => head[i] === b);
}

/**
 * Guess the format from the first bytes (`head`, at least 16 when the input has them), the total
 * size, and the name. Returns undefined when nothing fits.
 */
export function sniffFormat(head: Uint8Array, size: number, name: string): InputFormat | undefined {
  if (startsWith(head, NPY_MAGIC)) return 'npy';
  if (startsWith(head, HDF5_MAGIC)) return 'hdf5';
  // A zip archive: a local file header first (or the end record of an empty archive).
  if (startsWith(head, 'PK\x03\x04') || startsWith(head, 'PK\x05\x06')) return 'npz';
  if (startsWith(head, 'ARROW1')) return 'arrow';
  if (startsWith(head, 'PAR1')) return 'parquet';
  const hint = formatFromExtension(name);
  // Arrow IPC stream: a continuation marker (0xFFFFFFFF) and a message length. A .fvecs/.bvecs
  // file starting the same way has dimension -1: its reader says so.
  if (startsWith(head, [0xff, 0xff, 0xff, 0xff]) && head.length >= 8 && hint !== 'fvecs' && hint !== 'bvecs') return 'arrow-stream';
  if (looksLikeSafetensors(head, size)) return 'safetensors';

  // An extension that promises a magic we did not find: let the caller say so rather than guess.
  // (An HDF5 file with a user block has its signature further in: the extension lets its reader look.)
  if (hint === 'npy' || hint === 'npz' || hint === 'parquet' || hint === 'safetensors' || (hint === 'arrow' && !startsWith(head, [0xff, 0xff, 0xff, 0xff])))
    return undefined;
  if (hint === 'fvecs' || hint === 'bvecs' || hint === 'raw' || hint === 'jsonl' || hint === 'csv' || hint === 'hdf5') return hint;
  if (hint === 'arrow' && startsWith(head, [0xff, 0xff, 0xff, 0xff])) return 'arrow-stream';

  // No magic, no telling extension: vecs files are recognisable by their repeated dimension header.
  if (head.length >= 4) {
    const d = new DataView(head.buffer, head.byteOffset, head.length).getInt32(0, true);
    if (d > 0 && d <= 1 << 16) {
      if (size % (4 + 4 * d) === 0) return 'fvecs';
      if (size % (4 + d) === 0) return 'bvecs';
    }
  }
  const firstChar = head.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  if (firstChar === 0x7b) return 'jsonl'; // '{'
  if (looksLikeCsv(head, size)) return 'csv';
  return undefined;
}
