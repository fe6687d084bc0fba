// decompress(): rebuild the vectors of a .vlc file (each one its anchor, plus its residual) as
// npy / Arrow / Parquet / safetensors / fvecs, or export only its anchors or the anchor id of
// every vector. What `vlc decompress` runs, and what `import { decompress } from 'vlc'` gives.
import { UsageError } from '../errors.js';
import { writeAtomic } from '../io/atomic.js';
import { readVlc } from '../io/vlc/file.js';
import type { Assignments } from '../io/vlc/format.js';
import { reconstruct } from '../io/vlc/reconstruct.js';
import { formatFromPath, VECTOR_FORMATS, writeVectors, type VectorFormat } from '../io/write.js';
import { npyHeader } from '../io/writers/npy.js';
import { assertNotTerminal, assertWritable } from './preflight.js';

export interface DecompressOptions {
  /** Output file, or '-' for stdout (then give `format`). */
  output: string;
  /** npy, arrow (feather), parquet, safetensors, fvecs; with `assignments`: npy or txt. Default: from the extension of `output`. */
  format?: string;
  /** Element type of the output vectors (default: that of the compressed input; f32 for fvecs and Parquet). */
  dtype?: 'f32' | 'f16';
  /** Write only the m anchors (m × d). */
  anchors?: boolean;
  /** Write only each vector's anchor id. */
  assignments?: boolean;
}

export interface DecompressResult {
  /** What was written: 'vectors', 'anchors' or 'assignments'. */
  what: 'vectors' | 'anchors' | 'assignments';
  rows: number;
  d: number;
  format: string;
  /** Element type of the vectors written (absent for assignments). */
  dtype?: 'f32' | 'f16';
}

const ID_FORMATS = ['npy', 'txt'] as const;

/** Decompress the .vlc file `input` (a path, or '-' for stdin) into `o.output`. */
export async function decompress(input: string, o: DecompressOptions): Promise<DecompressResult> {
  if (o.anchors && o.assignments) throw new UsageError('--anchors and --assignments each export one part; give only one');
  if (o.assignments && o.dtype) throw new UsageError('--dtype applies to vectors, not to --assignments');
  const idFormat = o.assignments ? pickIdFormat(o) : undefined;
  const vectorFormat = o.assignments ? undefined : pickVectorFormat(o);

  assertWritable(o.output);
  if (idFormat !== 'txt') assertNotTerminal(o.output, 'binary vectors');
  const file = await readVlc(input);
  const { n, d, m } = file.manifest;
  if (idFormat) {
    await writeIds(o.output, file.assignments, idFormat);
    return { what: 'assignments', rows: n, d: 1, format: idFormat };
  }
  // Default: the dtype the vectors came in (f16 stays f16), except .fvecs and Parquet, written as f32 only.
  const dtype = o.dtype ?? (vectorFormat === 'fvecs' || vectorFormat === 'parquet' ? 'f32' : file.manifest.input.dtype);
  const [data, rows] = o.anchors ? [file.anchors, m] : [reconstruct(file), n];
  await writeVectors(o.output, data, rows, d, { format: vectorFormat!, dtype });
  return { what: o.anchors ? 'anchors' : 'vectors', rows, d, format: vectorFormat!, dtype };
}

function pickVectorFormat(o: DecompressOptions): VectorFormat {
  if (o.format !== undefined) {
    const f = o.format.toLowerCase() === 'feather' ? 'arrow' : (o.format.toLowerCase() as VectorFormat);
    if (!VECTOR_FORMATS.includes(f)) throw new UsageError(`--format must be one of ${VECTOR_FORMATS.join(', ')} (got '${o.format}')`);
    return f;
  }
  if (o.output === '-') throw new UsageError(`-o - needs --format (${VECTOR_FORMATS.join(', ')})`);
  const f = formatFromPath(o.output);
  if (!f) throw new UsageError(`cannot tell the output format from '${o.output}'; use a .npy, .arrow, .parquet, .safetensors or .fvecs name, or --format`);
  return f;
}

function pickIdFormat(o: DecompressOptions): (typeof ID_FORMATS)[number] {
  const f = o.format?.toLowerCase() ?? (o.output.endsWith('.npy') ? 'npy' : /\.(txt|csv)$/.test(o.output) ? 'txt' : undefined);
  if (f === undefined)
    throw new UsageError(`cannot tell the --assignments format from '${o.output}'; use a .npy or .txt name, or --format npy|txt`);
  if (!(ID_FORMATS as readonly string[]).includes(f))
    throw new UsageError(`--assignments are written as npy or txt (got --format '${o.format}')`);
  return f as (typeof ID_FORMATS)[number];
}

/** Anchor ids as .npy (1-D, the file's own unsigned width) or text (one id a line). */
async function writeIds(target: string, ids: Assignments, format: 'npy' | 'txt'): Promise<void> {
  await writeAtomic(target, async (sink) => {
    if (format === 'npy') {
      await sink.write(npyHeader(`<u${ids.BYTES_PER_ELEMENT}`, [ids.length]));
      await sink.write(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
      return;
    }
    const enc = new TextEncoder();
    for (let i = 0; i < ids.length; i += 65536) {
      const part = Array.from(ids.subarray(i, i + 65536)).join('\n') + '\n';
      await sink.write(enc.encode(part));
    }
  });
}
