// compress(): read vectors, learn m anchors with the annealing quantizer, pick what each vector
// stores beyond its anchor id (compress-codec.ts; measured on a sample unless `residual` fixes it),
// measure the file's quality, and write it (atomically; '-' streams it to stdout). What
// `vlc compress` runs, and what `import { compress } from 'vlc'` gives a Node program. The steps
// before and after training are compress-steps.ts, which an MPI job (compress-mpi.ts) runs too.
import { DEFAULT_CONFIG, type Effort } from '../anneal/config.js';
import type { AnnealHooks, IterRecord } from '../anneal/types.js';
import { selectBackend, type DeviceChoice } from '../backend/select.js';
import { isCoded, prewarm } from '../codec-registry/index.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { datasetFromF32, type Dataset } from '../vectors/dataset.js';
import { datasetScale, scaledDataset, scaleInPlace } from '../vectors/scale.js';
import type { ReadOptions } from '../io/read.js';
import { expandInputs, readInputs } from '../io/shards.js';
import { checkFinite } from '../io/readers/validate.js';
import { grouped } from '../io/vlc/stats.js';
import { log, silentReporter, type Reporter } from '../log.js';
import { quoteName } from '../io/names.js';
import { goalOf, type CodecOptions } from './compress-codec.js';
import type { CompressStats } from './compress-report.js';
import { finishCompress, planCompress } from './compress-steps.js';
import { gpusThatPay } from './gpu-count.js';
import { resolveSample, sampleSize, type SampleSpec } from './sample.js';
import { enginesOn, train } from './train.js';
import { compressStreamed } from './compress-stream.js';
import { defaultOutput, planOutput, type OutputPlan, type OutputRules } from './preflight.js';
import { LIBRARY_NAMES } from '../io/output.js';
import { isMetric, METRICS, unitDataset, type Metric } from '../vectors/metric.js';

export { defaultAnchors, storableAnchorDtype } from './compress-steps.js';

/**
 * What to store beside each anchor id (CodecOptions): at most one of `residual` (fixed; pq with
 * `pq` M or `bytes` B, `pqBits`, `pqDims`), `quality` (the smallest file whose decoded vectors keep this
 * recall@10 of exact search; 0.9 when nothing is given) and `bytes` (the best recall@10 within B
 * bytes per vector, every section counted).
 */
export interface CompressOptions extends ReadOptions, CodecOptions {
  /**
   * The .vlc file to write, '-' for stdout, or a plan from planOutput(); default: the input's name
   * with .vlc for its extension, beside it (stdin and in-memory vectors need one).
   */
  output?: string | OutputPlan;
  /** Replace an existing output file (never an input). */
  force?: boolean;
  /** Number of anchors m, 1..n (default: defaultAnchors(n)). */
  anchors?: number;
  /** Maximum annealing iterations (default DEFAULT_CONFIG.maxIters). */
  iters?: number;
  /** How hard to work (docs/algorithm.md "Effort"): 'fast', 'default' (the default) or 'best'. */
  effort?: Effort;
  /** Seed of every random choice (default DEFAULT_CONFIG.seed). */
  seed?: number;
  /**
   * What search ranks by, recorded in the file (default 'l2'): the recall of quality / bytes and
   * the figures are measured by it. 'cosine' trains and codes the vectors scaled to unit length
   * and stores each one's norm (f32), so decompress gives them back at their own length.
   */
  metric?: Metric;
  /** How anchors are stored (default f16, or f32 when a value exceeds f16's range; an explicit f16 then fails). */
  anchorDtype?: 'f16' | 'f32';
  /** 'auto' (default): CUDA when usable, else the CPU; 'cuda' never falls back. */
  device?: DeviceChoice;
  /**
   * Rows the annealing loop trains on before one exact pass assigns every row (api/sample.ts):
   * 'auto' (default: SAMPLE_PER_ANCHOR per anchor), 'all', { rows } or { fraction }.
   */
  sample?: SampleSpec;
  /**
   * GPU index (default 0), or several: the rows split over them, one engine (CUDA context) each, the
   * same bytes as one GPU. Of several, only as many as are predicted to pay are used (api/gpu-count.ts), unless allGpus.
   */
  gpu?: number | number[];
  /**
   * Read a fixed-layout input (.npy, .fvecs, or several: io/shards.ts) a block of rows at a time
   * whatever its size, where the run allows it (api/compress-stream.ts: a fixed int8, int4 or none
   * residual, the l2 metric); by default only inputs of 2 GiB (the CPU) or a quarter of the host's
   * memory (a GPU) are. The same bytes either way.
   */
  stream?: boolean;
  /** Use every GPU of `gpu`, even where fewer are predicted to finish sooner. */
  allGpus?: boolean;
  /** Called after every annealing pass, init's polishing passes included (the CLI draws its training line from it). */
  onIter?: (rec: IterRecord, maxIters: number) => void;
  /** Hears the other steps: reading, each init try, the final pass, choosing the codec, residual encoding, measuring the quality, writing. */
  progress?: Reporter;
  /** Stops training early; the default is the process's Ctrl-C / SIGTERM signal. */
  signal?: AbortSignal;
}

/** In-memory vectors: n rows of d values, row-major. */
export interface Vectors {
  data: Float32Array;
  n: number;
  d: number;
}

/** The result of compress(): what `vlc compress --json` prints after `schema` and `command` (docs/json.md). */
export type CompressResult = CompressStats;

export async function datasetOf(input: string | string[] | Vectors, o: ReadOptions): Promise<Dataset> {
  if (typeof input === 'string' || Array.isArray(input)) return readInputs(input, o);
  const { data, n, d } = input;
  if (!(Number.isInteger(n) && Number.isInteger(d) && n > 0 && d > 0) || data.length !== n * d)
    throw new UsageError(`vectors: n and d must be positive whole numbers with data.length = n × d (got n=${n}, d=${d}, ${data.length} values)`);
  // The backends share the vectors with worker threads: they must live in shared memory.
  const ds = data.buffer instanceof SharedArrayBuffer
    ? { n, d, dtype: 'f32' as const, buffer: data.buffer, byteOffset: data.byteOffset, format: 'memory f32' }
    : datasetFromF32(data, n, d);
  // The same checks as for files: NaN, Inf and values too large for f32 distances.
  return checkFinite(ds, 'the vectors given', o.dropInvalid ?? false);
}

/** The rules for compress's outputs (-o, --stats): never over an input, which gives its permission bits. */
export function compressOutputRules(input: string | string[] | Vectors, force?: boolean): OutputRules {
  const inputs = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
  // Every file, duplicates or not: only their identities matter here (readInputs refuses duplicates).
  return { binary: 'the binary .vlc file', force, inputs: inputs.length === 0 || inputs.includes('-') ? inputs : expandInputs(inputs, true) };
}

/** Iterations a run is expected to take when its cap is larger (measured: 10 at 50M x 128 with 65,536 anchors, 53 at 10M with 16,384). */
const EXPECTED_ITERATIONS = 50;

/**
 * The first GPUs of a --gpu list that pay for themselves on this work (api/gpu-count.ts): all of them
 * where the prediction says so, else fewer, with one line saying how many and why.
 */
function gpusWorthUsing(gpu: number[], ds: Dataset, m: number, sample: SampleSpec | undefined, maxIters: number): number[] {
  const sampleRows = sampleSize(resolveSample(sample ?? 'auto', 'cuda', ds.n, ds.d, m), ds.n, m);
  const { count, predicted } = gpusThatPay(gpu.length, {
    n: ds.n, d: ds.d, m, sampleRows, iterations: Math.min(maxIters, EXPECTED_ITERATIONS),
  });
  if (count === gpu.length) return gpu;
  const used = gpu.slice(0, count);
  log().info(
    `using ${count === 1 ? `GPU ${used[0]}` : `GPUs ${used.join(',')}`} of --gpu ${gpu.join(',')}: at ${ds.n.toLocaleString('en-US')} x ${ds.d} with ${m.toLocaleString('en-US')} anchors more GPUs cost more than they save ` +
      `(predicted ${predicted[count - 1].toFixed(1)} s of training on ${count}, ${predicted[gpu.length - 1].toFixed(1)} s on ${gpu.length}; the same file either way); --all-gpus uses them all`,
  );
  return used;
}

/**
 * Compress `input` into `o.output`: a file path, '-' for stdin, a directory or a glob, several
 * paths (their rows concatenated in name order: io/shards.ts), or vectors in memory.
 */
export async function compress(input: string | string[] | Vectors, o: CompressOptions): Promise<CompressResult> {
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  const goal = goalOf(o);
  const out = typeof o.output === 'object' ? o.output : planOutput(o.output ?? defaultOutput(typeof input === 'string' ? input : '-', '.vlc'), { ...compressOutputRules(input, o.force), defaulted: o.output === undefined, names: LIBRARY_NAMES });
  const t0 = performance.now();

  const progress = o.progress ?? silentReporter;
  // A fixed-layout input too large to hold goes through in blocks (compress-stream.ts), when the run is one that can.
  if (typeof input === 'string' || Array.isArray(input)) {
    const streamed = await compressStreamed(input, o, out, t0);
    if (streamed) return streamed;
  }
  const what = typeof input === 'string' ? (input === '-' ? 'stdin' : quoteName(input)) : Array.isArray(input) ? input.map(quoteName).join(' ') : 'the vectors';
  const reading = progress.step(`reading ${what}`, 'bytes'); // of each file in turn when there are several
  const metric = metricOf(o.metric);
  let read: Dataset | undefined = await datasetOf(input, { ...o, onBytes: (r, total) => reading.update(r, total) });
  reading.end();
  // Cosine: the vectors at unit length from here on (training, codes, figures); their norms go in
  // the file. The vectors as read are let go (a copy at a time is all the run holds).
  const unit = metric === 'cosine' ? unitDataset(read) : undefined;
  const ds: Dataset = unit?.ds ?? read;
  read = undefined;
  if (unit) tellZeroVectors(unit.zero);
  const readSeconds = (performance.now() - t0) / 1000;
  const source = typeof input === 'string' ? input : Array.isArray(input) ? input.join(' ') : 'the vectors given';
  const planned = planCompress(ds, o, goal, seed, metric, source);
  const { plan, configOf } = planned;
  const m = plan.m;
  const hooks = { signal: o.signal ?? interruptSignal };
  const worthUsing = o.allGpus ? undefined : (listed: number[]) => gpusWorthUsing(listed, ds, m, o.sample, configOf(m, 'cuda').maxIters);
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: o.gpu ?? 0, worthUsing });
  if (backend.kind === 'cuda') {
    // The CPU's worker threads start while the GPU trains: the residual encoders' threads, and memory they are sure to fill (codec-registry/).
    prewarm(plan.options, ds.n, ds.d);
  }
  const sample = resolveSample(o.sample ?? 'auto', backend.kind, ds.n, ds.d, m);
  const cfg = configOf(m, backend.kind); // the effort's and the device's rules depend on m
  let handed = false;
  try {
    // Each k-means++ try of init, the iterations (training's own line), then one exact pass.
    const steps = trainingSteps(o, progress, hooks.signal);
    // Tiny or huge data trains at a power-of-two scale (vectors/scale.ts), on a scaled copy: the
    // backends' f32 distances would underflow or overflow. The anchors and energies come back
    // unscaled; everything after training works on the data as read.
    const scale = datasetScale(ds);
    const setupSeconds = (performance.now() - t0) / 1000 - readSeconds; // sizing, the backend, the scale
    if (scale !== 1) log().debug(`the vectors' largest magnitude is ${(1 / scale).toPrecision(3)}-scale: training on them multiplied by 2^${Math.log2(scale)} (exact), so that float32 distances neither underflow nor overflow`);
    const trainDs = scaledDataset(ds, scale);
    // A scaled copy, or rows no codec of the plan encodes residuals of, go to the device once.
    if (trainDs !== ds || !plan.options.some(isCoded)) backend.rowsUploadedOnce(trainDs);
    const result = unscaledResult(scale, await train(enginesOn(backend, trainDs, m), cfg, sample, steps.hooks));
    steps.end(); // ended before compress logs what it chose
    handed = true;
    return await finishCompress({
      o, ds, metric, norms: unit?.norms, goal, planned, cfg, sampleRows: sampleSize(sample, ds.n, m), seed, result, backend, hooks, progress, out,
      clock: { t0, read: readSeconds, setup: setupSeconds },
    });
  } finally {
    if (!handed) await backend.close();
  }
}

/** Cosine: says how many vectors are zero (their cosine to anything is 0), when any are. */
export function tellZeroVectors(zero: number): void {
  if (!zero) return;
  const one = zero === 1;
  log().info(`${grouped(zero)} vector${one ? ' is' : 's are'} zero: ${one ? 'its' : 'their'} cosine to any query is 0, and ${one ? 'it decodes' : 'they decode'} to zero (--metric cosine)`);
}

/** The metric option checked (library callers pass any value): l2 when not given. */
export function metricOf(v: unknown): Metric {
  if (v === undefined) return 'l2';
  if (isMetric(v)) return v;
  throw new UsageError(`--metric must be one of ${METRICS.join(', ')} (got ${JSON.stringify(v)})`);
}

/**
 * Training's hooks that draw compress's steps: each k-means++ try of init, the iterations
 * (training's own line, through `o.onIter`), then the final pass. The tries after the first come
 * after its polishing iterations, so the steps alternate; `end()` closes the one open.
 */
export function trainingSteps(o: Pick<CompressOptions, 'onIter'>, progress: Reporter, signal: AbortSignal): { hooks: AnnealHooks; end(): void } {
  let phase = progress.step('choosing initial anchors (k-means++)', '');
  return {
    hooks: {
      signal,
      onIter: (rec: IterRecord, maxIters: number) => {
        phase.end();
        o.onIter?.(rec, maxIters);
        log().debug(rec, 'iteration');
      },
      onInitTry: (t, tries) => {
        phase.end();
        phase = progress.step(`choosing initial anchors (k-means++${tries > 1 ? `, try ${t + 1} of ${tries}` : ''})`, '');
      },
      onFinalPass: () => (phase = progress.step('final assignment pass', '')),
    },
    end: () => phase.end(),
  };
}

/** A training result at scale `s` (vectors/scale.ts) brought back to the data's own: anchors / s, energies / s². */
export function unscaledResult<T extends { anchors: Float32Array; energy: number; trainEnergy: number; history: IterRecord[] }>(s: number, r: T): T {
  if (s === 1) return r;
  const e = 1 / (s * s);
  return {
    ...r,
    anchors: scaleInPlace(r.anchors, 1 / s),
    energy: r.energy * e,
    trainEnergy: r.trainEnergy * e,
    history: r.history.map((h) => ({ ...h, energy: h.energy * e, temperature: h.temperature * e })),
  };
}

