// compress(): read vectors, learn m anchors with the annealing quantizer, pick what each vector
// stores beyond its anchor id (compress-codec.ts; measured on a sample unless `residual` fixes it),
// measure the file's quality, and write it (atomically; '-' streams it to stdout). What
// `vlc compress` runs, and what `import { compress } from 'vlc'` gives a Node program.
import { configFor, DEFAULT_CONFIG, type AnnealConfig, type Effort } from '../anneal/config.js';
import type { AnnealHooks, AnnealResult, IterRecord } from '../anneal/types.js';
import { selectBackend, type DeviceChoice } from '../backend/select.js';
import { codecName, fixedPlan, prewarm, storable } from '../codec-registry/index.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { datasetFromF32, type Dataset } from '../vectors/dataset.js';
import { datasetScale, scaledDataset, scaleInPlace } from '../vectors/scale.js';
import type { ReadOptions } from '../io/read.js';
import { expandInputs, readInputs } from '../io/shards.js';
import { checkFinite } from '../io/readers/validate.js';
import { writeVlc } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { grouped } from '../io/vlc/stats.js';
import { fewIds } from '../vectors/row-ids.js';
import { log, silentReporter, type Reporter } from '../log.js';
import { quoteName } from '../io/names.js';
import { choose, planChoice, type ChoicePlan, type CodecPlan, type Trained } from '../quality/choose.js';
import { measureQuality } from '../quality/measure.js';
import { figuresFromRowSums } from '../quality/reconstruction.js';
import {
  choiceLine, decoderOf, encodeAll, encoderOn, goalOf, qualityWarning, sizer, type CodecOptions,
} from './compress-codec.js';
import { compressStats, type CompressStats } from './compress-report.js';
import { gpusThatPay } from './gpu-count.js';
import { resolveSample, sampleSize, type SampleSpec } from './sample.js';
import { enginesOn, train } from './train.js';
import { vlcContent } from './compress-file.js';
import { compressStreamed } from './compress-stream.js';
import { defaultOutput, planOutput, type OutputPlan, type OutputRules } from './preflight.js';
import { LIBRARY_NAMES } from '../io/output.js';
import { withMetric } from '../search/metric.js';
import { isMetric, METRICS, unitDataset, type Metric } from '../vectors/metric.js';

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

/**
 * Default number of anchors: the largest power of two <= 4·√n, capped at n and at 65536 (so ids
 * fit in u16). It grows slowly with n, keeping the anchors a small part of the file, and gives the
 * standard workloads (docs/algorithm.md §5) their m: 1,000 → 64 (u8 ids), 10,000 → 256,
 * 100,000 → 1,024, 1,000,000 → 2,048.
 */
export function defaultAnchors(n: number): number {
  const pow2 = 2 ** Math.floor(Math.log2(4 * Math.sqrt(n)));
  return Math.max(1, Math.min(n, 65536, pow2));
}

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
  // A fixed-layout file too large to hold goes through in blocks (compress-stream.ts), when the run is one that can.
  if (typeof input === 'string') {
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
  if (unit?.zero) {
    const one = unit.zero === 1;
    log().info(`${grouped(unit.zero)} vector${one ? ' is' : 's are'} zero: ${one ? 'its' : 'their'} cosine to any query is 0, and ${one ? 'it decodes' : 'they decode'} to zero (--metric cosine)`);
  }
  const readSeconds = (performance.now() - t0) / 1000;
  const m0 = o.anchors ?? defaultAnchors(ds.n);
  const source = typeof input === 'string' ? input : Array.isArray(input) ? input.join(' ') : 'the vectors given';
  if (m0 > ds.n) throw new UsageError(`--anchors ${m0} is more than the ${ds.n} vectors in ${source}; use at most ${ds.n}`);
  tellDropped(ds);

  // Sized before training, so that a budget is checked in a second. (f16 anchors unless asked
  // otherwise: anchors beyond f16's range, known only after training, are kept in f32 and can
  // take the file past the budget.)
  // configFor takes the device: the estimate uses CUDA's (the longer), training the backend's own.
  const configOf = (m: number, kind: 'cpu' | 'cuda'): AnnealConfig =>
    configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, kind);
  const cfg0 = configOf(m0, 'cuda');
  const size = sizer({ ds, metric, anchorDtype: o.anchorDtype ?? 'f16', cfg: cfg0, sampleRows: ds.n, seed, device: 'cuda' });
  const plan: ChoicePlan = storablePlan(
    goal.kind === 'fixed'
      ? { m: m0, options: [fixedPlan(goal.choice, { n: ds.n, d: ds.d, m: m0, fileBytes: (payload) => size.withPayload(payload, m0, goal.choice.residual) })] }
      : planChoice(goal, ds.n, ds.d, m0, o.anchors !== undefined, size.perVector),
    ds.n, ds.d,
  );
  const m = plan.m;
  const hooks = { signal: o.signal ?? interruptSignal };
  const worthUsing = o.allGpus ? undefined : (listed: number[]) => gpusWorthUsing(listed, ds, m, o.sample, configOf(m, 'cuda').maxIters);
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: o.gpu ?? 0, worthUsing });
  // Exact search for the quality figures and the codec choice: on the GPU when the run has one.
  // ip / cosine: ranked by the metric (search/metric.ts), the ground truth and the decoded vectors alike.
  const knn = withMetric(backend.exactKnn, metric);
  if (backend.kind === 'cuda') {
    // The CPU's worker threads start while the GPU trains: the residual encoders' threads, and memory they are sure to fill (codec-registry/).
    prewarm(plan.options, ds.n, ds.d);
  }
  const sample = resolveSample(o.sample ?? 'auto', backend.kind, ds.n, ds.d, m);
  const sampleRows = sampleSize(sample, ds.n, m);
  const cfg = configOf(m, backend.kind); // the effort's and the device's rules depend on m
  let closed = false;
  try {
    // Each k-means++ try of init, the iterations (training's own line), then one exact pass.
    const steps = trainingSteps(o, progress, hooks.signal);
    // Tiny or huge data trains at a power-of-two scale (vectors/scale.ts), on a scaled copy: the
    // backends' f32 distances would underflow or overflow. The anchors and energies come back
    // unscaled; everything after training works on the data as read.
    const scale = datasetScale(ds);
    const setupSeconds = (performance.now() - t0) / 1000 - readSeconds; // sizing, the backend, the scale
    if (scale !== 1) log().debug(`the vectors' largest magnitude is ${(1 / scale).toPrecision(3)}-scale: training on them multiplied by 2^${Math.log2(scale)} (exact), so that float32 distances neither underflow nor overflow`);
    const result = unscaledResult(scale, await train(enginesOn(backend, scaledDataset(ds, scale), m), cfg, sample, steps.hooks));
    steps.end(); // ended before compress logs what it chose
    const anchorDtype = storableAnchorDtype(result.anchors, o.anchorDtype);
    const x = ds;
    const trained: Trained = { x, n: ds.n, d: ds.d, anchors: storedAnchors(result.anchors, anchorDtype), assignments: result.assignments };

    const tc = performance.now();
    const choosing = progress.step('choosing the codec: exact neighbours of the sample', 'codecs measured');
    const onMeasure = (name: string, done: number, expected: number) => choosing.update(done, expected, `choosing the codec: measuring ${name}`);
    const choice = goal.kind === 'fixed' ? undefined : await choose(goal, plan, trained, encoderOn(backend, seed, hooks), knn, (c) => size.perVector(c, m), onMeasure);
    const codec: CodecPlan = choice?.codec ?? plan.options[0];
    choosing.end();
    const chooseSeconds = (performance.now() - tc) / 1000;

    const tr = performance.now();
    // One step, its elapsed time shown: the encoders report no count of their own.
    const encoding = progress.step(`encoding ${codecName(codec)} residuals`, '');
    const { residuals, residualEnergy, rowSums } = await encodeAll(codec, trained, backend, seed, hooks);
    encoding.end();
    const residualSeconds = (performance.now() - tr) / 1000;

    const tq = performance.now();
    const measuring = progress.step('measuring the quality of the file', '');
    // The reconstruction figures from the encoder's row sums when it made them (the GPU's), else measured here.
    const quality = await measureQuality(x, ds.n, ds.d, decoderOf(trained, residuals), knn, choice?.recall, rowSums && figuresFromRowSums(rowSums));
    measuring.end();
    const qualitySeconds = (performance.now() - tq) / 1000;

    const tw = performance.now();
    const writing = progress.step(`writing ${out.target === '-' ? 'stdout' : quoteName(out.target)}`, 'bytes');
    const bytes = await writeVlc(
      out,
      vlcContent({ ds, metric, norms: unit?.norms, m, anchorDtype, residual: codec.mode, residualEnergy, residuals, cfg, sampleRows, seed, device: backend.kind, result, quality }),
      (written, total) => writing.update(written, total),
    );
    writing.end();
    const writeSeconds = (performance.now() - tw) / 1000;

    // Said once the file exists, with its own bytes per vector (the choice sized it before training, as an upper bound).
    if (choice && goal.kind !== 'fixed') log().info(choiceLine(goal, choice, bytes / ds.n));
    const defaulted = o.quality === undefined && o.bytes === undefined && o.residual === undefined;
    const warning = qualityWarning(goal, choice, quality.recall.recall_at_10_all, m, ds.n, defaulted);
    if (warning) log().warn(warning);
    const tt = performance.now();
    closed = true;
    await backend.close(); // within the run's time: freeing GPU contexts is part of the wall a user waits
    const teardownSeconds = (performance.now() - tt) / 1000;
    return compressStats({
      ds, m, metric, codec, anchorDtype, bytes, result, quality, goal, choice, backend, seed,
      seconds: {
        read: readSeconds, setup: setupSeconds, choose: chooseSeconds, residual: residualSeconds, quality: qualitySeconds, write: writeSeconds,
        teardown: teardownSeconds, total: (performance.now() - t0) / 1000,
      },
    });
  } finally {
    if (!closed) await backend.close();
  }
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

/**
 * Dropped rows' ids are kept in the manifest (so that search answers with input row ids); the
 * manifest's size is bounded (format.ts reads at most 16 MiB of it), and a million ids fit well
 * inside. More invalid rows than that is no longer a few bad rows.
 */
export const MAX_DROPPED_ROWS = 1_000_000;

/** The --drop-invalid line (which input rows were skipped), or the refusal of too many. */
export function tellDropped(ds: Dataset): void {
  if (ds.dropped === 0) return;
  if (ds.dropped > MAX_DROPPED_ROWS)
    throw new UsageError(`${grouped(ds.dropped)} rows have NaN, Inf or too large values; vlc keeps the ids of at most ${grouped(MAX_DROPPED_ROWS)} dropped rows: fix the data`);
  const ids = ds.droppedRows?.length ? `: input row${ds.dropped === 1 ? '' : 's'} ${fewIds(ds.droppedRows)}` : '';
  log().info(`skipped ${grouped(ds.dropped)} vector${ds.dropped === 1 ? '' : 's'} containing NaN or Inf (--drop-invalid)${ids}; search answers with input row ids`);
}

/** Largest finite float16 (anchors beyond it would be stored as Inf). */
const F16_MAX = 65504;
/** float16's smallest normal value: below it f16 keeps fewer than 11 bits, and under 2^-24 nothing. */
const F16_MIN_NORMAL = 2 ** -14;

/**
 * f16 anchors (the default) hold the anchors to 11 bits of their largest magnitude M only when M
 * lies in f16's normal range, [2^-14, 65504]: beyond it they would be Inf (saturated, now), below
 * it rounded towards zero, all of them at 1e-8 and below. Outside it the anchors are stored as
 * f32, with a log line — or, when f16 was asked for explicitly, the run is refused.
 */
export function storableAnchorDtype(anchors: Float32Array, asked: 'f16' | 'f32' | undefined): 'f16' | 'f32' {
  if (asked === 'f32') return 'f32';
  let max = 0;
  for (let i = 0; i < anchors.length; i++) max = Math.max(max, Math.abs(anchors[i]));
  if (max === 0 || (max >= F16_MIN_NORMAL && max <= F16_MAX)) return 'f16';
  const why = max > F16_MAX
    ? `the anchors reach ${max.toPrecision(4)}, beyond float16's range (${F16_MAX})`
    : `the anchors are at most ${max.toPrecision(4)} in magnitude, below float16's normal range (${F16_MIN_NORMAL.toPrecision(3)}): f16 would round them towards zero`;
  if (asked === 'f16') throw new UsageError(`${why}; use --anchor-dtype f32`);
  log().info(`${why}: storing them as f32`);
  return 'f32';
}

/**
 * The plan without the codecs that cannot hold the codes of n vectors (Codec.storable: the built-in
 * ones hold them in pieces, any n), said before training rather than found after it; a usage
 * error when none is left.
 */
function storablePlan(plan: ChoicePlan, n: number, d: number): ChoicePlan {
  const options = plan.options.filter((c) => storable(c, n, d, plan.m));
  if (options.length === plan.options.length) return plan;
  const left = plan.options.filter((c) => !options.includes(c)).map(codecName).join(', ');
  const why = `the codec cannot hold the codes of ${n} × ${d} vectors`;
  if (options.length === 0) throw new UsageError(`${left} residuals: ${why}; choose another --residual`);
  log().info(`left out ${left} residuals: ${why}; measuring ${options.map(codecName).join(', ')}`);
  return { ...plan, options };
}
