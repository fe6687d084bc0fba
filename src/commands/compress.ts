// `vlc compress <input> [-o <out.vlc>]`: the flags of src/api/compress.ts, its progress line on a
// terminal, and what it reports: the result JSON (--json, --stats) and one summary line on stderr —
// size and quality first, then how training went. Without -o, x.npy gives x.vlc beside it.
import { Option, type Command } from 'commander';
import type { CompressResult } from '../api/compress.js';
import { DEFAULT_QUALITY } from '../api/compress-codec.js';
import { DEFAULT_CONFIG, EFFORTS, type Effort, type IterRecord, type Metric } from '../api/options.js';
import { parseSample, SAMPLE_PER_ANCHOR, type SampleSpec } from '../api/sample.js';
import * as fs from 'node:fs';
import { UsageError } from '../errors.js';
import { quoteName } from '../io/names.js';
import { grouped, percent } from '../io/vlc/stats.js';
import { log } from '../log.js';
import { addExamples } from './help.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { jsonResult } from './json.js';
import { recallFigures } from './recall-figures.js';
import { addDeviceOptions, addForceOption, addMetricOption, addOutputOptions, addSeedOption, applyVerbosity, effectiveDevice, parseInteger, type CommonOptions } from './options.js';
import { progressFor } from './progress.js';
import { addResidualOptions, residualChoiceFrom, type ResidualFlags } from './residual-options.js';

interface CompressFlags extends CommonOptions, InputFlags, ResidualFlags {
  output?: string;
  force?: boolean;
  anchors?: number;
  iters: number;
  sample?: SampleSpec;
  effort: Effort;
  seed: number;
  anchorDtype: 'f16' | 'f32';
  stats?: string;
  distributed?: boolean;
  metric?: Metric;
  allGpus?: boolean;
  stream?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('compress')
    .description(
      'learn m anchors and store every vector as its anchor id plus what keeps recall@10 of exact search over the decoded ' +
        `vectors >= ${DEFAULT_QUALITY} (measured on a sample), or what --quality, --bytes or --residual ask for, in a .vlc file`,
    )
    .summary('compress embedding vectors into a .vlc file')
    .argument(
      '<input...>',
      'embedding file (npy, npz, fvecs, bvecs, Arrow/Feather, Parquet, safetensors, HDF5, CSV/TSV, JSONL, raw), or - for stdin; ' +
        'several files, a directory or a quoted glob (shards/*.parquet) are read as one, rows in name order',
    )
    .option('-o, --output <file>', 'output .vlc file, or - for stdout (default: the input, or its directory, with a .vlc extension, beside it)')
    .option(
      '--anchors <m>',
      'number of anchors m, 1..n (default: the largest power of two <= 4*sqrt(n), at most 65536)',
      (v) => parseInteger('--anchors', v, 1),
    )
    .option('--iters <n>', "maximum annealing iterations (init's polishing passes count too)", (v) => parseInteger('--iters', v, 1, 1_000_000), DEFAULT_CONFIG.maxIters)
    .addOption(
      new Option('--effort <level>', 'fast: k-means++ and Lloyd only; default: + warm phase and swap trials (inputs with n*m*d > 2^30: k-means++ on a sample, no warm phase, Lloyd until its energy stops falling, trials until they stop paying); best: the full schedule at any size')
        .choices([...EFFORTS])
        .default('default'),
    )
    .option(
      '--sample <rows>',
      `train on a seeded sample of this many rows (a count, or a fraction like 0.1 or 10%), then assign every row in one exact pass; auto (default): ${SAMPLE_PER_ANCHOR} per anchor (on a GPU every row up to n·m·d = 2^40); all: every row`,
      parseSample,
    );
  addSeedOption(cmd, 'random seed: same input + seed + device => same output file', DEFAULT_CONFIG.seed)
    .addOption(new Option('--anchor-dtype <dtype>', 'how anchors are stored').choices(['f16', 'f32']).default('f16'));
  addMetricOption(
    cmd,
    'what search will rank by, recorded in the file: l2 (default; squared Euclidean distance), ip (largest inner product) or cosine ' +
      '(the vectors trained and coded at unit length, each norm stored as f32 so decompress restores it); --quality and the recall figures measure it',
  );
  addResidualOptions(cmd).option('--stats <file>', 'write the result JSON (as --json prints) to this file; use with -o -');
  cmd.option('--distributed', 'run as one rank of an MPI job, each rank training on its share of the rows, rank 0 encoding and writing (implied when started by mpirun; needs Open MPI)');
  addInputOptions(cmd);
  addForceOption(cmd);
  addDeviceOptions(cmd, { gpuList: true });
  cmd.option('--all-gpus', 'use every GPU of --gpu even where vlc predicts that fewer finish sooner (it says so when it uses fewer)');
  cmd.option('--stream', 'read a .npy/.fvecs input (or shards of one) a block of rows at a time whatever its size, where the run allows it (a fixed --residual int8, int4 or none; l2): the same file, less memory');
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc compress emb.npy -o emb.vlc', `the smallest file that keeps recall@10 >= ${DEFAULT_QUALITY} (what it chose and measured goes to stderr)`],
    ['vlc compress emb.npy -o emb.vlc --bytes 40 --json', 'the best recall within 40 bytes per vector; the result as JSON on stdout'],
    ['zstd -dc emb.npy.zst | vlc compress - -o - --residual int8 > emb.vlc', 'a pipeline: vectors on stdin, the .vlc on stdout'],
  ]);
  cmd.action(async (input: string[], o: CompressFlags, c: Command) => runCompress(input, o, c));
}

async function runCompress(input: string[], o: CompressFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  // Loaded here, not at the top: every command starts faster for not loading the others' work (src/commands/index.ts).
  const [{ compress, compressOutputRules }, { distributedRun, runDistributed }, { defaultOutput, planOutput }, { writeOutput }] = await Promise.all([
    import('../api/compress.js'), import('../api/compress-mpi.js'), import('../api/preflight.js'), import('../io/output.js'),
  ]);
  if (o.json && o.output === '-')
    throw new UsageError('--json prints to stdout, which -o - uses for the .vlc data; use --stats FILE instead');
  const device = effectiveDevice(cmd, o);
  // Both outputs are checked before the long work: never over the input, an existing file only
  // with --force, not both on one file. Now — or under MPI by rank 0 alone, once MPI has started,
  // so that the ranks fail together with one message (api/compress-mpi.ts).
  const planOutputs = () => {
    const rules = compressOutputRules(input, o.force);
    const output = planOutput(o.output ?? defaultOutput(defaultNameOf(input), '.vlc'), { ...rules, defaulted: o.output === undefined });
    const statsOut = o.stats === undefined ? undefined : planOutput(o.stats, { ...rules, binary: undefined, option: '--stats', others: [output] });
    return { output, statsOut };
  };
  const distributed = distributedRun(o.distributed);
  let planned = distributed ? undefined : planOutputs();
  const progress = progressFor(o);
  let stats: CompressResult | undefined;
  const options = {
      ...readOptionsFrom(o),
      anchors: o.anchors,
      iters: o.iters,
      sample: o.sample,
      effort: o.effort,
      seed: o.seed,
      metric: o.metric,
      // The default is left to compress(), which keeps anchors in f32 when f16 cannot hold them.
      anchorDtype: cmd.getOptionValueSource('anchorDtype') === 'cli' ? o.anchorDtype : undefined,
      ...residualChoiceFrom(o),
      device,
      // Under MPI no --gpu means one GPU per rank on each machine (api/compress-mpi.ts rankGpu).
      gpu: distributedRun(o.distributed) && cmd.getOptionValueSource('gpu') !== 'cli' ? undefined : o.gpu,
      allGpus: o.allGpus,
      stream: o.stream,
      onIter: (rec: IterRecord, maxIters: number) => progress.onIter(rec, maxIters),
      progress,
  };
  // Seconds since the process began: Node's start, vlc's modules loading, the flags read.
  const started = performance.now() / 1000;
  try {
    stats = distributed
      ? await runDistributed(input, { ...options, output: o.output, planOutput: () => (planned = planOutputs()).output })
      : await compress(input.length === 1 ? input[0] : input, { ...options, output: planned!.output });
  } finally {
    progress.done();
  }
  if (!stats || !planned) return; // an MPI rank other than 0: rank 0 reports
  stats = withStart(stats, started);
  const { output, statsOut } = planned;
  const json = JSON.stringify(jsonResult('compress', stats)) + '\n';
  if (o.json) process.stdout.write(json);
  if (statsOut) await writeOutput(statsOut, (sink) => sink.write(new TextEncoder().encode(json)));
  log().info(summaryLine(stats, output.target === '-' ? '-' : quoteName(output.target)));
  // -v: where the wall time went (the same phases as --json), adding up to the total.
  log().debug(`phases (s): ${Object.entries(stats.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}; total ${stats.total_seconds.toFixed(2)}`);
}

/**
 * The report with the command's start as its first phase: wall time the user waits before
 * compress() begins its clock, so that total_seconds is the process's own time up to the report.
 */
function withStart(stats: CompressResult, started: number): CompressResult {
  return { ...stats, total_seconds: stats.total_seconds + started, phases: { start: started, ...stats.phases } };
}

/** The name a default output follows: the input file, or a directory of shards (several files or a glob need -o). */
function defaultNameOf(input: string[]): string {
  const one = input.length === 1 ? input[0] : undefined;
  if (one !== undefined && isDirectory(one)) return one.replace(/\/+$/, '') || one;
  if (one !== undefined && (one === '-' || fs.existsSync(one) || !/[*?[]/.test(one))) return one;
  throw new UsageError('several input files need -o FILE to name the one .vlc they become');
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** "52.0% of the u8 input, ": the ratio against the input's own bytes, first, when its type is not f32. */
export function ofInput(s: { input_dtype: string; ratio_input: number }): string {
  return s.input_dtype === 'f32' ? '' : `${percent(s.ratio_input)} of the ${s.input_dtype} input, `;
}

/**
 * "x.vlc: 41.79 bytes/vector = 16.3% of f32 (83,584 bytes); relative error 0.0543, cosine 0.99855,
 * recall@10 0.922; 2,000 x 64, 128 anchors + int4 residuals, cpu (2 threads): init 3.04 s, then 94
 * iterations in 1.18 s (2.4 ms each), converged".
 */
export function summaryLine(s: CompressResult, output: string): string {
  const recall = s.recall_at_10 === null ? '' : `, recall@10${s.metric === 'l2' ? '' : ` (${s.metric})`} ${recallFigures(s)}`;
  const polish = s.init_iterations ? ` (${s.init_iterations} Lloyd passes)` : '';
  const loop = s.iterations
    ? `then ${s.iterations} iterations in ${s.loop_seconds.toFixed(2)} s (${s.iter_ms_median.toFixed(1)} ms each)`
    : `no iterations after it`;
  return (
    `${output === '-' ? 'stdout' : output}: ${s.bytes_per_vector.toFixed(2)} bytes/vector = ${ofInput(s)}${percent(s.ratio_f32)} of f32 ` +
    `(${grouped(s.bytes)} bytes); relative error ${s.relative_error.toFixed(4)}, cosine ${s.mean_cosine.toFixed(5)}${recall}; ` +
    `${grouped(s.n)} x ${s.d}, ${grouped(s.m)} anchors${s.coded ? ` + ${s.codec} residuals` : ''}, ${s.device_label}: ` +
    `init ${s.init_seconds.toFixed(2)} s${polish}, ${loop}${s.converged ? ', converged' : ', stopped at --iters'}`
  );
}
