// `vlc decompress <in.vlc> [-o <out>]`: rebuild the vectors (each one its anchor) as npy / Arrow /
// Parquet / safetensors / fvecs, or export only the anchors (`--anchors`) or the anchor id of every vector (`--assignments`).
import { Option, type Command } from 'commander';
import type { DecompressResult, OutputDtype } from '../api/decompress.js';
import { fewIds, INPUT_DTYPES } from '../api/flags.js';
import { log } from '../log.js';
import { quoteName } from '../io/names.js';
import { progressFor } from './progress.js';
import { addExamples } from './help.js';
import { addForceOption, addVerbosityOptions, applyVerbosity, type VerbosityFlags } from './options.js';
import { grouped } from '../io/vlc/stats.js';
import { CLI_NAMES } from '../io/output.js';

interface DecompressFlags extends VerbosityFlags {
  output?: string;
  force?: boolean;
  format?: string;
  dtype?: OutputDtype | 'input';
  anchors?: boolean;
  assignments?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('decompress')
    .description('rebuild vectors from a .vlc file (npy, Arrow, Parquet, safetensors or fvecs), or export its anchors or assignments')
    .argument('<in.vlc>', '.vlc file, or - for stdin')
    .option('-o, --output <file>', 'output file, or - for stdout (then give --format); default: the input with .vlc replaced by the format\'s extension (x.npy; x.anchors.npy, x.assignments.npy), beside it')
    .option('--format <format>', 'output format: npy, arrow, parquet, safetensors, fvecs (--assignments: npy, txt); default: from the extension of -o')
    .addOption(
      new Option('--dtype <dtype>', 'element type of the output vectors: input (default: the type the input came in, where the format holds it, else f32; u8/i8 rounded to nearest and clamped, f16/bf16 saturated), or one of them').choices(['input', ...INPUT_DTYPES]),
    )
    .option('--anchors', 'write only the m anchors (m x d) instead of the n vectors')
    .option('--assignments', 'write only the anchor id of every vector (npy of unsigned ints, or txt: one id a line)');
  addForceOption(cmd);
  // No --json: decompress has no result to report, and its stdout may be the data itself.
  addVerbosityOptions(cmd);
  addExamples(cmd, [
    ['vlc decompress emb.vlc -o emb-rebuilt.npy', 'every vector rebuilt (anchor + residual), as .npy'],
    ['vlc decompress emb.vlc --assignments -o ids.txt', 'only each vector\'s anchor id, one a line'],
    ['vlc decompress emb.vlc -o - --format npy | python3 -c \'import io, numpy, sys; print(numpy.load(io.BytesIO(sys.stdin.buffer.read())).shape)\'', 'a pipeline: the vectors on stdout, into numpy'],
  ]);
  cmd.action(async (input: string, o: DecompressFlags) => runDecompress(input, o));
}

async function runDecompress(input: string, o: DecompressFlags): Promise<void> {
  applyVerbosity(o);
  const { decompress } = await import('../api/decompress.js'); // on use: see src/commands/index.ts
  const progress = progressFor(o);
  let r: DecompressResult;
  try {
    r = await decompress(input, { output: o.output, force: o.force, format: o.format, dtype: o.dtype, anchors: o.anchors, assignments: o.assignments, progress, optionNames: CLI_NAMES });
  } finally {
    progress.done();
  }
  const where = r.output === '-' ? 'stdout' : quoteName(r.output);
  if (r.what === 'assignments') log().info(`wrote ${grouped(r.rows)} anchor ids to ${where}`);
  else log().info(`wrote ${grouped(r.rows)} x ${r.d} ${r.dtype} ${r.what} to ${where}${narrowingNote(r)}`);
  if (r.droppedRows?.length) {
    const k = r.droppedRows.length;
    log().info(`${grouped(k)} input row${k === 1 ? ' was' : 's were'} dropped by --drop-invalid at compress and ${k === 1 ? 'is' : 'are'} not in the output: ${fewIds(r.droppedRows, 10)} (vlc info --json lists them)`);
  }
}

/** What rounding or saturation the output type took, said once ("" for f32 and f64). */
function narrowingNote(r: DecompressResult): string {
  const why = r.dtype === r.inputDtype ? `the input's type` : 'as asked';
  const clamped = r.clamped ? `; ${grouped(r.clamped)} value${r.clamped === 1 ? '' : 's'}` : '';
  if (r.range) return ` (${why}: rounded to the nearest integer, ties to even${clamped ? `${clamped} clamped to ${r.range}` : `, none outside ${r.range}`})`;
  if (r.dtype === 'f16' || r.dtype === 'bf16') return ` (${why}: rounded to nearest even${clamped ? `${clamped} saturated at its largest finite value` : ''})`;
  return '';
}
