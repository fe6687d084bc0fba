// `vlc decompress <in.vlc> -o <out>`: rebuild the vectors (each one its anchor) as npy / Arrow /
// Parquet / safetensors / fvecs, or export only the anchors (`--anchors`) or the anchor id of every vector (`--assignments`).
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { writeAtomic } from '../io/atomic.js';
import { readVlc } from '../io/vlc/file.js';
import type { Assignments } from '../io/vlc/format.js';
import { reconstruct } from '../io/vlc/reconstruct.js';
import { formatFromPath, VECTOR_FORMATS, writeVectors, type VectorFormat } from '../io/write.js';
import { npyHeader } from '../io/writers/npy.js';
import { log } from '../log.js';
import { addVerbosityOptions, applyVerbosity, type VerbosityFlags } from './options.js';
import { assertNotTerminal, assertWritable } from './preflight.js';

interface DecompressFlags extends VerbosityFlags {
  output: string;
  format?: string;
  dtype?: 'f32' | 'f16';
  anchors?: boolean;
  assignments?: boolean;
}

const ID_FORMATS = ['npy', 'txt'] as const;

export function register(program: Command): void {
  const cmd = program
    .command('decompress')
    .description('rebuild vectors from a .vlc file (npy, Arrow, Parquet, safetensors or fvecs), or export its anchors or assignments')
    .argument('<in.vlc>', '.vlc file, or - for stdin')
    .requiredOption('-o, --output <file>', 'output file, or - for stdout (then give --format)')
    .option('--format <format>', 'output format: npy, arrow, parquet, safetensors, fvecs (--assignments: npy, txt); default: from the extension of -o')
    .addOption(
      new Option('--dtype <dtype>', 'element type of the output vectors (default: that of the compressed input; f32 for fvecs and Parquet)').choices(['f32', 'f16']),
    )
    .option('--anchors', 'write only the m anchors (m x d) instead of the n vectors')
    .option('--assignments', 'write only the anchor id of every vector (npy of unsigned ints, or txt: one id a line)');
  // No --json: decompress has no result to report, and its stdout may be the data itself.
  addVerbosityOptions(cmd);
  cmd.action(async (input: string, o: DecompressFlags) => runDecompress(input, o));
}

async function runDecompress(input: string, o: DecompressFlags): Promise<void> {
  applyVerbosity(o);
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
    log().info(`wrote ${n} anchor ids to ${o.output === '-' ? 'stdout' : o.output}`);
    return;
  }
  // Default: the dtype the vectors came in (f16 stays f16), except .fvecs and Parquet, written as f32 only.
  const dtype = o.dtype ?? (vectorFormat === 'fvecs' || vectorFormat === 'parquet' ? 'f32' : file.manifest.input.dtype);
  const [data, rows] = o.anchors ? [file.anchors, m] : [reconstruct(file), n];
  await writeVectors(o.output, data, rows, d, { format: vectorFormat!, dtype });
  log().info(`wrote ${rows} x ${d} ${dtype} ${o.anchors ? 'anchors' : 'vectors'} to ${o.output === '-' ? 'stdout' : o.output}`);
}

function pickVectorFormat(o: DecompressFlags): VectorFormat {
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

function pickIdFormat(o: DecompressFlags): (typeof ID_FORMATS)[number] {
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
