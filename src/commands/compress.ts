// `vlc compress <input> [-o <out.vlc>]`: read vectors, learn m anchors with the annealing quantizer,
// write every vector as its anchor id into a .vlc file (atomically; `-o -` streams to stdout;
// without -o, x.npy gives x.vlc beside it).
import { Option, type Command } from 'commander';
import { DEFAULT_CONFIG, EFFORTS, type Effort } from '../anneal/config.js';
import { compress, compressOutputRules, type CompressResult } from '../api/compress.js';
import { defaultOutput, planOutput } from '../api/preflight.js';
import { parseSample, SAMPLE_PER_ANCHOR, type SampleSpec } from '../api/sample.js';
import * as fs from 'node:fs';
import { UsageError } from '../errors.js';
import { quoteName } from '../io/names.js';
import { writeOutput } from '../io/output.js';
import { grouped, percent } from '../io/vlc/stats.js';
import { log } from '../log.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { addDeviceOptions, addForceOption, addOutputOptions, addSeedOption, applyVerbosity, effectiveDevice, parseInteger, type CommonOptions } from './options.js';
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
}

export function register(program: Command): void {
  const cmd = program
    .command('compress')
    .description('learn m anchors and store every vector as its anchor id in a .vlc file')
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
    .option('--iters <n>', 'maximum annealing iterations', (v) => parseInteger('--iters', v, 1, 1_000_000), DEFAULT_CONFIG.maxIters)
    .addOption(
      new Option('--effort <level>', 'fast: k-means++ and Lloyd only; default: + warm phase and swap trials (inputs with n*m*d > 2^30: init on a sample, no warm phase, trials until they stop paying); best: the full schedule at any size')
        .choices([...EFFORTS])
        .default('default'),
    )
    .option(
      '--sample <rows>',
      `train on a seeded sample of this many rows (a count, or a fraction like 0.1 or 10%), then assign every row in one exact pass; auto (default): ${SAMPLE_PER_ANCHOR} per anchor; all: every row`,
      parseSample,
    );
  addSeedOption(cmd, 'random seed: same input + seed + device => same output file', DEFAULT_CONFIG.seed)
    .addOption(new Option('--anchor-dtype <dtype>', 'how anchors are stored').choices(['f16', 'f32']).default('f16'));
  addResidualOptions(cmd)
    .option('--stats <file>', 'write the result JSON (as --json prints) to this file; use with -o -');
  addInputOptions(cmd);
  addForceOption(cmd);
  addDeviceOptions(cmd, { gpuList: true });
  addOutputOptions(cmd);
  cmd.action(async (input: string[], o: CompressFlags, c: Command) => runCompress(input, o, c));
}

async function runCompress(input: string[], o: CompressFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  if (o.json && o.output === '-')
    throw new UsageError('--json prints to stdout, which -o - uses for the .vlc data; use --stats FILE instead');
  const device = effectiveDevice(cmd, o);
  // Both outputs are checked now, before the long work: never over the input, an existing file
  // only with --force, not both on one file.
  const rules = compressOutputRules(input, o.force);
  const output = planOutput(o.output ?? defaultOutput(defaultNameOf(input), '.vlc'), rules);
  const statsOut = o.stats === undefined ? undefined : planOutput(o.stats, { ...rules, binary: undefined, option: '--stats', others: [output] });
  const progress = progressFor(o);
  let stats: CompressResult;
  try {
    stats = await compress(input.length === 1 ? input[0] : input, {
      ...readOptionsFrom(o),
      output,
      anchors: o.anchors,
      iters: o.iters,
      sample: o.sample,
      effort: o.effort,
      seed: o.seed,
      // The default is left to compress(), which keeps anchors in f32 when f16 cannot hold them.
      anchorDtype: cmd.getOptionValueSource('anchorDtype') === 'cli' ? o.anchorDtype : undefined,
      ...residualChoiceFrom(o),
      device,
      gpu: o.gpu,
      onIter: (rec, maxIters) => progress.onIter(rec, maxIters),
      progress,
    });
  } finally {
    progress.done();
  }
  const json = JSON.stringify(stats) + '\n';
  if (o.json) process.stdout.write(json);
  if (statsOut) await writeOutput(statsOut, (sink) => sink.write(new TextEncoder().encode(json)));
  log().info(
    `compressed ${grouped(stats.n)} x ${stats.d} to ${stats.m} anchors on ${stats.device_label}: energy ${stats.energy.toPrecision(5)} after ` +
      `${stats.iterations} iterations${stats.converged ? ' (converged)' : ''} in ${stats.seconds.toFixed(2)} s ` +
      `(${stats.iter_ms.toFixed(2)} ms/iteration)` +
      (stats.residual_energy !== null ? `; with ${stats.residual} residuals ${stats.residual_energy.toPrecision(5)}` : '') +
      `; ${output.target === '-' ? 'stdout' : quoteName(output.target)}: ${grouped(stats.bytes)} bytes = ` +
      `${percent(stats.true_ratio)} of f32, ${stats.bytes_per_vector.toFixed(2)} bytes/vector`,
  );
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
