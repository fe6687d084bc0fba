// decompress(): rebuild the vectors of a .vlc file (each one its anchor, plus its residual) as
// npy / Arrow / Parquet / safetensors / fvecs, or export only its anchors or the anchor id of
// every vector. What `vlc decompress` runs, and what `import { decompress } from 'vlc'` gives.
import { UsageError } from '../errors.js';
import { quoteName } from '../io/names.js';
import { assertNamed, LIBRARY_NAMES, writeOutput, type OptionNames } from '../io/output.js';
import { computedRows, rowsOf } from '../io/rows.js';
import { openVlcRows, type VlcRows } from '../io/vlc/file.js';
import type { Assignments } from '../io/vlc/format.js';
import { cannotHold, formatFromPath, formatHolds, VECTOR_FORMATS, vectorBytes, writeVectors, type VectorFormat } from '../io/write.js';
import { clampRange, type OutputDtype } from '../io/writers/narrow.js';
import { INPUT_DTYPES, type InputDtype } from '../vectors/dataset.js';
import { npyHeader } from '../io/writers/npy.js';
import { silentReporter, type Reporter } from '../log.js';
import { checkRoom, defaultOutput, planOutput, type OutputPlan } from './preflight.js';

/** The element types decompress writes (`--dtype`), and the few-ids wording its summary uses. */
export { INPUT_DTYPES, type OutputDtype };
export { fewIds } from '../vectors/row-ids.js';

export interface DecompressOptions {
  /**
   * Output file, '-' for stdout (then give `format`), or a plan from planOutput(); default: the
   * input's name with .vlc replaced (x.npy; x.anchors.npy, x.assignments.npy with those options).
   */
  output?: string | OutputPlan;
  /** Replace an existing output file (never the input). */
  force?: boolean;
  /** npy, arrow (feather), parquet, safetensors, fvecs; with `assignments`: npy or txt. Default: from the extension of `output`. */
  format?: string;
  /**
   * Element type of the output vectors: 'input' (the default) gives the type the input came in
   * where the output format holds it (else f32: always for fvecs and Parquet, for bf16 in .npy and
   * Arrow); u8 and i8 are rounded to the nearest integer (ties to even) and clamped to their range,
   * f16 and bf16 saturate at their largest finite value.
   */
  dtype?: OutputDtype | 'input';
  /** Write only the m anchors (m × d). */
  anchors?: boolean;
  /** Write only each vector's anchor id. */
  assignments?: boolean;
  /** Hears reading and writing (the CLI draws them on a terminal). */
  progress?: Reporter;
  /** How messages name the output options (default: the library's, `output` and `force: true`; the CLI passes its flags). */
  optionNames?: OptionNames;
}

export interface DecompressResult {
  /** What was written: 'vectors', 'anchors' or 'assignments'. */
  what: 'vectors' | 'anchors' | 'assignments';
  rows: number;
  d: number;
  format: string;
  /** Element type of the vectors written (absent for assignments). */
  dtype?: OutputDtype;
  /** The element type the compressed input came in (absent for assignments). */
  inputDtype?: InputDtype;
  /** Values clamped to an integer type's range or saturated at f16/bf16's largest (0 when none). */
  clamped?: number;
  /** u8 / i8 output: the range values were clamped to ("0..255"). */
  range?: string;
  /** Input rows (ascending ids) --drop-invalid left out of the file, hence of the output: row i of the output is the i-th input row not listed. */
  droppedRows?: number[];
  /** Where it went: the output path, or '-' for stdout. */
  output: string;
}

const ID_FORMATS = ['npy', 'txt'] as const;

/** Decompress the .vlc file `input` (a path, or '-' for stdin) into `o.output`. */
export async function decompress(input: string, o: DecompressOptions): Promise<DecompressResult> {
  if (o.anchors && o.assignments) throw new UsageError('--anchors and --assignments each export one part; give only one');
  if (o.assignments && o.dtype) throw new UsageError('--dtype applies to vectors, not to --assignments');
  if (o.dtype !== undefined && o.dtype !== 'input' && !(INPUT_DTYPES as readonly string[]).includes(o.dtype))
    throw new UsageError(`dtype must be one of input, ${INPUT_DTYPES.join(', ')} (got '${o.dtype}')`);
  const target = typeof o.output === 'object' ? o.output.target : o.output ?? defaultOutput(input, defaultSuffix(o), '.vlc');
  assertNamed(target); // before the format is told from it
  const idFormat = o.assignments ? pickIdFormat(o.format, target) : undefined;
  const vectorFormat = o.assignments ? undefined : pickVectorFormat(o.format, target);
  if (vectorFormat && o.dtype && o.dtype !== 'input' && !formatHolds(vectorFormat, o.dtype)) throw new UsageError(cannotHold(vectorFormat, o.dtype));

  const out = typeof o.output === 'object' ? o.output : planOutput(target, { binary: idFormat === 'txt' ? undefined : 'binary vectors', force: o.force, inputs: [input], defaulted: o.output === undefined, names: o.optionNames ?? LIBRARY_NAMES });
  const progress = o.progress ?? silentReporter;
  const reading = progress.step(`reading ${input === '-' ? 'stdin' : quoteName(input)}`, 'bytes');
  let checking: ReturnType<typeof progress.step> | undefined;
  // A large file's codes stay on disk and are read a block of rows at a time (openVlcRows).
  const opened = await openVlcRows(input, (read, total) => reading.update(read, total), (bytes, total) => {
    checking ??= (reading.end(), progress.step(`checking ${input === '-' ? 'stdin' : quoteName(input)}`, 'bytes', total));
    checking.update(bytes, total);
  });
  reading.end();
  checking?.end();
  try {
    return await decompressOpened(opened, input, o, out, progress, idFormat, vectorFormat);
  } finally {
    opened.close();
  }
}

async function decompressOpened(
  opened: VlcRows, input: string, o: DecompressOptions, out: OutputPlan, progress: Reporter,
  idFormat: (typeof ID_FORMATS)[number] | undefined, vectorFormat: VectorFormat | undefined,
): Promise<DecompressResult> {
  const file = opened.file;
  const writing = (total: number) => {
    const step = progress.step(`writing ${out.target === '-' ? 'stdout' : quoteName(out.target)}`, 'bytes', total);
    return { onBytes: (written: number) => step.update(written), end: () => step.end() };
  };
  const { n, d, m } = file.manifest;
  if (idFormat) {
    checkRoom(out, n * (idFormat === 'npy' ? file.assignments.BYTES_PER_ELEMENT : 6));
    await writeIds(out, file.assignments, idFormat);
    return { what: 'assignments', rows: n, d: 1, format: idFormat, output: out.target };
  }
  const inputDtype = file.manifest.input.dtype;
  const dtype = outputDtype(o.dtype ?? 'input', inputDtype, vectorFormat!, o.anchors ?? false);
  if (dtype === 'f16') refuseBeyondF16(file.anchors, quoteName(input));
  // Rows are rebuilt and written a chunk at a time: n × d may be far larger than memory.
  const rows = o.anchors ? rowsOf(file.anchors, m, d) : computedRows(n, d, (r0, k, buf) => void opened.rows(r0, r0 + k, buf));
  const bytes = vectorBytes(vectorFormat!, rows.n, d, dtype);
  checkRoom(out, bytes);
  const w = writing(bytes);
  const tally = { clamped: 0 };
  await writeVectors(out, rows, { format: vectorFormat!, dtype, onBytes: w.onBytes, tally });
  w.end();
  const range = clampRange(dtype);
  const droppedRows = o.anchors ? undefined : file.manifest.input.droppedRows;
  return {
    what: o.anchors ? 'anchors' : 'vectors', rows: rows.n, d, format: vectorFormat!, dtype, inputDtype, clamped: tally.clamped,
    ...(range ? { range } : {}), ...(droppedRows ? { droppedRows } : {}), output: out.target,
  };
}

/**
 * f16 output holds ±65504 at most. Values a little beyond it (an f16 input's reconstruction
 * overshooting by its residual) are saturated to ±65504 by the one narrowing rule
 * (vectors/dataset.ts f32ToF16); vectors whose anchors alone lie beyond it would lose their
 * magnitudes, so that is refused before anything is written.
 */
function refuseBeyondF16(anchors: Float32Array, name: string): void {
  let max = 0;
  for (let i = 0; i < anchors.length; i++) max = Math.max(max, Math.abs(anchors[i]));
  if (max > 65504) throw new UsageError(`${name}: its vectors reach ${max.toPrecision(4)}, beyond float16's range (±65504); use --dtype f32`);
}

/**
 * The element type written: 'input' gives the input's own where the format holds it, else f32
 * (which holds every input type's values); anchors are centres, not input rows, so an integer
 * input does not round them (f32). An explicit type the format cannot hold is a usage error.
 */
function outputDtype(asked: OutputDtype | 'input', input: InputDtype, format: VectorFormat, anchors: boolean): OutputDtype {
  if (asked !== 'input') return asked; // checked against the format before reading
  if (anchors && (input === 'u8' || input === 'i8')) return 'f32';
  return formatHolds(format, input) ? input : 'f32';
}

/** What the default output name ends with: the format's extension, after .anchors / .assignments. */
function defaultSuffix(o: DecompressOptions): string {
  const f = o.format?.toLowerCase();
  if (o.assignments) return `.assignments.${f === 'txt' ? 'txt' : 'npy'}`;
  const ext = f === undefined ? 'npy' : f === 'feather' ? 'arrow' : f;
  return `${o.anchors ? '.anchors' : ''}.${ext}`;
}

function pickVectorFormat(format: string | undefined, output: string): VectorFormat {
  if (format !== undefined) {
    const f = format.toLowerCase() === 'feather' ? 'arrow' : (format.toLowerCase() as VectorFormat);
    if (!VECTOR_FORMATS.includes(f)) throw new UsageError(`--format must be one of ${VECTOR_FORMATS.join(', ')} (got '${format}')`);
    return f;
  }
  if (output === '-') throw new UsageError(`-o - needs --format (${VECTOR_FORMATS.join(', ')})`);
  const f = formatFromPath(output);
  if (!f) throw new UsageError(`cannot tell the output format from ${quoteName(output)}; use a .npy, .arrow, .parquet, .safetensors or .fvecs name, or --format`);
  return f;
}

function pickIdFormat(format: string | undefined, output: string): (typeof ID_FORMATS)[number] {
  const f = format?.toLowerCase() ?? (output.endsWith('.npy') ? 'npy' : /\.(txt|csv)$/.test(output) ? 'txt' : undefined);
  if (f === undefined)
    throw new UsageError(`cannot tell the --assignments format from ${quoteName(output)}; use a .npy or .txt name, or --format npy|txt`);
  if (!(ID_FORMATS as readonly string[]).includes(f))
    throw new UsageError(`--assignments are written as npy or txt (got --format '${format}')`);
  return f as (typeof ID_FORMATS)[number];
}

/** Anchor ids as .npy (1-D, the file's own unsigned width) or text (one id a line). */
async function writeIds(out: OutputPlan, ids: Assignments, format: 'npy' | 'txt'): Promise<void> {
  await writeOutput(out, async (sink) => {
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
