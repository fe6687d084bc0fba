// `vlc compress <input> -o <out.vlc>`: read vectors, learn m anchors with the annealing quantizer,
// write every vector as its anchor id into a .vlc file (atomically; `-o -` streams to stdout).
import { Option, type Command } from 'commander';
import { DEFAULT_CONFIG, type AnnealConfig } from '../anneal/config.js';
import { selectBackend } from '../backend/select.js';
import type { Engine } from '../backend/types.js';
import type { AnnealResult, IterRecord } from '../anneal/types.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { writeAtomic } from '../io/atomic.js';
import { readDataset } from '../io/read.js';
import { writeVlc } from '../io/vlc/file.js';
import { assignmentWidthFor } from '../io/vlc/manifest.js';
import { storedAnchors } from '../io/vlc/format.js';
import { residualMse, type CodedResiduals } from '../codecs/index.js';
import { encodeScalar } from '../codecs/scalar.js';
import { toF32, type Dataset } from '../io/dataset.js';
import { bytesPerVector, grouped, percent, seedRatio, trueRatio } from '../io/vlc/stats.js';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { addDeviceOptions, addOutputOptions, addSeedOption, applyVerbosity, effectiveDevice, parseInteger, type CommonOptions } from './options.js';
import { createProgress } from './progress.js';
import { assertNotTerminal, assertWritable } from './preflight.js';

interface CompressFlags extends CommonOptions, InputFlags {
  output: string;
  anchors?: number;
  iters: number;
  seed: number;
  anchorDtype: 'f16' | 'f32';
  residual: 'none' | 'int8' | 'int4';
  stats?: string;
}

/**
 * Default number of anchors: the largest power of two <= 4·√n, capped at n and at 65536 (so ids
 * fit in u16). It grows slowly with n, keeping the anchors a small part of the file, and gives the
 * SPEC's workloads their m: 1,000 → 64 (u8 ids), 10,000 → 256, 100,000 → 1,024, 1,000,000 → 2,048.
 */
export function defaultAnchors(n: number): number {
  const pow2 = 2 ** Math.floor(Math.log2(4 * Math.sqrt(n)));
  return Math.max(1, Math.min(n, 65536, pow2));
}

export function register(program: Command): void {
  const cmd = program
    .command('compress')
    .description('learn m anchors and store every vector as its anchor id in a .vlc file')
    .argument('<input>', 'embedding file (npy, fvecs, bvecs, Arrow/Feather, Parquet, safetensors, JSONL, raw), or - for stdin')
    .requiredOption('-o, --output <file>', 'output .vlc file, or - for stdout')
    .option(
      '--anchors <m>',
      'number of anchors m, 1..n (default: the largest power of two <= 4*sqrt(n), at most 65536)',
      (v) => parseInteger('--anchors', v, 1),
    )
    .option('--iters <n>', 'maximum annealing iterations', (v) => parseInteger('--iters', v, 1, 1_000_000), DEFAULT_CONFIG.maxIters);
  addSeedOption(cmd, 'random seed: same input + seed + device => same output file', DEFAULT_CONFIG.seed)
    .addOption(new Option('--anchor-dtype <dtype>', 'how anchors are stored').choices(['f16', 'f32']).default('f16'))
    .addOption(
      new Option('--residual <mode>', 'also store each vector minus its anchor, quantized per dimension: int8 (d bytes/vector) or int4 (d/2)')
        .choices(['none', 'int8', 'int4'])
        .default('none'),
    )
    .option('--stats <file>', 'write the result JSON (as --json prints) to this file; use with -o -');
  addInputOptions(cmd);
  addDeviceOptions(cmd);
  addOutputOptions(cmd);
  cmd.action(async (input: string, o: CompressFlags, c: Command) => runCompress(input, o, c));
}

async function runCompress(input: string, o: CompressFlags, cmd: Command): Promise<void> {
  applyVerbosity(o);
  if (o.json && o.output === '-')
    throw new UsageError('--json prints to stdout, which -o - uses for the .vlc data; use --stats FILE instead');
  if (o.stats === '-' && o.output === '-') throw new UsageError('--stats - and -o - both want stdout; give --stats a file name');
  const device = effectiveDevice(cmd, o);
  assertWritable(o.output);
  assertNotTerminal(o.output, 'the binary .vlc file');
  if (o.stats) assertWritable(o.stats, '--stats');
  const t0 = performance.now();

  const ds = await readDataset(input, readOptionsFrom(o));
  const readSeconds = (performance.now() - t0) / 1000;
  const m = o.anchors ?? defaultAnchors(ds.n);
  if (m > ds.n)
    throw new UsageError(`--anchors ${m} is more than the ${ds.n} vectors in ${input}; use at most ${ds.n}`);
  if (ds.dropped > 0) log().info(`skipped ${ds.dropped} vector${ds.dropped === 1 ? '' : 's'} containing NaN or Inf (--drop-invalid)`);

  const cfg: AnnealConfig = { ...DEFAULT_CONFIG, m, seed: o.seed, maxIters: o.iters };
  const backend = await selectBackend({ device, gpu: o.gpu });
  const progress = createProgress({ enabled: process.stderr.isTTY === true && !o.quiet });
  let engine: Engine | undefined;
  let result: AnnealResult;
  try {
    // Loaded on use, so that the commands that never train start without the quantizer.
    const { anneal } = await import('../anneal/index.js');
    engine = await backend.open(ds, m);
    result = await anneal(engine, cfg, {
      signal: interruptSignal,
      onIter: (rec: IterRecord, maxIters: number) => {
        progress.onIter(rec, maxIters);
        log().debug(rec, 'iteration');
      },
    });
  } finally {
    progress.done();
    await engine?.dispose();
    await backend.close();
  }

  const tr = performance.now();
  const { residuals, residualEnergy } = o.residual === 'none' ? {} : encodeResiduals(o.residual, ds, result, o.anchorDtype);
  const residualSeconds = (performance.now() - tr) / 1000;

  const tw = performance.now();
  const bytes = await writeVlc(o.output, {
    manifest: {
      n: ds.n,
      d: ds.d,
      m,
      metric: 'l2',
      anchorDtype: o.anchorDtype,
      residual: o.residual,
      ...(residualEnergy !== undefined ? { residualEnergy } : {}),
      input: { dtype: ds.dtype, dropped: ds.dropped },
      training: {
        energy: result.energy,
        iterations: result.iterations,
        converged: result.converged,
        init: 'kmeans++',
      },
      config: { ...cfg },
      seed: o.seed,
      tool: { name: 'vlc', version: VERSION },
      device: backend.kind,
    },
    anchors: result.anchors,
    assignments: result.assignments,
    residuals,
  });
  const writeSeconds = (performance.now() - tw) / 1000;

  const stats = {
    n: ds.n,
    d: ds.d,
    m,
    energy: result.energy,
    iterations: result.iterations,
    converged: result.converged,
    device: backend.kind,
    device_label: backend.label,
    seconds: result.seconds,
    init_seconds: result.initSeconds,
    iter_ms: result.iterMsMedian,
    residual: o.residual,
    /** Mean squared error of anchor + residual (null without residuals: then it is `energy`). */
    residual_energy: residualEnergy ?? null,
    residual_seconds: residualSeconds,
    read_seconds: readSeconds,
    write_seconds: writeSeconds,
    total_seconds: (performance.now() - t0) / 1000,
    bytes,
    ratio: seedRatio(ds.n, ds.d, m),
    true_ratio: trueRatio(bytes, ds.n, ds.d),
    bytes_per_vector: bytesPerVector(bytes, ds.n),
    anchor_dtype: o.anchorDtype,
    assignment_width: assignmentWidthFor(m),
    seed: o.seed,
    input_format: ds.format,
    input_dtype: ds.dtype,
    dropped: ds.dropped,
  };
  const json = JSON.stringify(stats) + '\n';
  if (o.json) process.stdout.write(json);
  if (o.stats) await writeAtomic(o.stats, (sink) => sink.write(new TextEncoder().encode(json)));
  log().info(
    `compressed ${grouped(ds.n)} x ${ds.d} to ${m} anchors on ${backend.label}: energy ${result.energy.toPrecision(5)} after ` +
      `${result.iterations} iterations${result.converged ? ' (converged)' : ''} in ${result.seconds.toFixed(2)} s ` +
      `(${result.iterMsMedian.toFixed(2)} ms/iteration)` +
      (residualEnergy !== undefined ? `; with ${o.residual} residuals ${residualEnergy.toPrecision(5)}` : '') +
      `; ${o.output === '-' ? 'stdout' : o.output}: ${grouped(bytes)} bytes = ` +
      `${percent(stats.true_ratio)} of f32, ${stats.bytes_per_vector.toFixed(2)} bytes/vector`,
  );
}

/** Residuals against the anchors as stored (f16-rounded by default), so decoding reproduces them. */
function encodeResiduals(
  mode: 'int8' | 'int4',
  ds: Dataset,
  result: AnnealResult,
  anchorDtype: 'f16' | 'f32',
): { residuals: CodedResiduals; residualEnergy: number } {
  const input = { x: toF32(ds), n: ds.n, d: ds.d, anchors: storedAnchors(result.anchors, anchorDtype), assign: result.assignments };
  const residuals = encodeScalar(mode, input);
  return { residuals, residualEnergy: residualMse(residuals, input) };
}
