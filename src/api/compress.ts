// compress(): read vectors, learn m anchors with the annealing quantizer, write every vector as its
// anchor id into a .vlc file (atomically; '-' streams it to stdout). What `vlc compress` runs, and
// what `import { compress } from 'vlc'` gives a Node program.
import { configFor, DEFAULT_CONFIG, type AnnealConfig, type Effort } from '../anneal/config.js';
import type { AnnealResult, IterRecord } from '../anneal/types.js';
import { selectBackend, type DeviceChoice } from '../backend/select.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { datasetFromF32, wholeF32, type Dataset } from '../io/dataset.js';
import type { VlcContent } from '../io/vlc/format.js';
import type { ReadOptions } from '../io/read.js';
import { expandInputs, readInputs } from '../io/shards.js';
import { checkFinite } from '../io/readers/validate.js';
import { writeVlc } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { assignmentWidthFor } from '../io/vlc/manifest.js';
import { checkResidualChoice, encodeResiduals, fileBytesWithResidual, planResiduals, type ResidualChoice } from './residuals.js';
import { bytesPerVector, seedRatio, trueRatio } from '../io/vlc/stats.js';
import { log, silentReporter, type Reporter } from '../log.js';
import { quoteName } from '../io/names.js';
import { VERSION } from '../version.js';
import { sampleSize, type SampleSpec } from './sample.js';
import { train, type TrainResult } from './train.js';
import { defaultOutput, planOutput, type OutputPlan, type OutputRules } from './preflight.js';

export interface CompressOptions extends ReadOptions, Partial<ResidualChoice> {
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
  /** How anchors are stored (default f16, or f32 when a value exceeds f16's range; an explicit f16 then fails). */
  anchorDtype?: 'f16' | 'f32';
  /** 'auto' (default): CUDA when usable, else the CPU; 'cuda' never falls back. */
  device?: DeviceChoice;
  /**
   * Rows the annealing loop trains on before one exact pass assigns every row (api/sample.ts):
   * 'auto' (default: SAMPLE_PER_ANCHOR per anchor), 'all', { rows } or { fraction }.
   */
  sample?: SampleSpec;
  /** GPU index (default 0), or several: the rows split over them, one engine (CUDA context) each, the same bytes as one GPU. */
  gpu?: number | number[];
  /** Called after every annealing iteration (the CLI draws its progress line from it). */
  onIter?: (rec: IterRecord, maxIters: number) => void;
  /** Hears the other steps: reading, init, the final pass, residual encoding, writing. */
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

/** The result of compress(), the JSON `vlc compress --json` prints (README "vlc compress"). */
export type CompressResult = Awaited<ReturnType<typeof compress>>;

/**
 * Default number of anchors: the largest power of two <= 4·√n, capped at n and at 65536 (so ids
 * fit in u16). It grows slowly with n, keeping the anchors a small part of the file, and gives the
 * SPEC's workloads their m: 1,000 → 64 (u8 ids), 10,000 → 256, 100,000 → 1,024, 1,000,000 → 2,048.
 */
export function defaultAnchors(n: number): number {
  const pow2 = 2 ** Math.floor(Math.log2(4 * Math.sqrt(n)));
  return Math.max(1, Math.min(n, 65536, pow2));
}

async function datasetOf(input: string | string[] | Vectors, o: ReadOptions): Promise<Dataset> {
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
  return { binary: 'the binary .vlc file', force, inputs: inputs.length === 0 || inputs.includes('-') ? inputs : expandInputs(inputs) };
}

/**
 * Compress `input` into `o.output`: a file path, '-' for stdin, a directory or a glob, several
 * paths (their rows concatenated in name order: io/shards.ts), or vectors in memory.
 */
export async function compress(input: string | string[] | Vectors, o: CompressOptions) {
  const residual = o.residual ?? 'none';
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  const choice: ResidualChoice = { residual, pq: o.pq, pqBits: o.pqBits, bytes: o.bytes };
  checkResidualChoice(choice);
  const out = typeof o.output === 'object' ? o.output : planOutput(o.output ?? defaultOutput(typeof input === 'string' ? input : '-', '.vlc'), compressOutputRules(input, o.force));
  const t0 = performance.now();

  const progress = o.progress ?? silentReporter;
  const what = typeof input === 'string' ? (input === '-' ? 'stdin' : quoteName(input)) : Array.isArray(input) ? input.map(quoteName).join(' ') : 'the vectors';
  const reading = progress.step(`reading ${what}`, 'bytes'); // of each file in turn when there are several
  const ds = await datasetOf(input, { ...o, onBytes: (read, total) => reading.update(read, total) });
  reading.end();
  const readSeconds = (performance.now() - t0) / 1000;
  const m = o.anchors ?? defaultAnchors(ds.n);
  const source = typeof input === 'string' ? input : Array.isArray(input) ? input.join(' ') : 'the vectors given';
  if (m > ds.n) throw new UsageError(`--anchors ${m} is more than the ${ds.n} vectors in ${source}; use at most ${ds.n}`);
  if (ds.dropped > 0) log().info(`skipped ${ds.dropped} vector${ds.dropped === 1 ? '' : 's'} containing NaN or Inf (--drop-invalid)`);

  const cfgOn = (kind: 'cpu' | 'cuda'): AnnealConfig =>
    configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, kind);
  const sample = o.sample ?? 'auto';
  const sampleRows = sampleSize(sample, ds.n, m);
  // Every manifest field but the results, so that a byte budget is checked before training.
  const manifestFor = (
    r: Pick<AnnealResult, 'energy' | 'iterations' | 'converged'>,
    kind: 'cpu' | 'cuda',
    anchorDtype: 'f16' | 'f32',
  ): VlcContent['manifest'] => ({
    n: ds.n,
    d: ds.d,
    m,
    metric: 'l2',
    anchorDtype,
    residual,
    input: { dtype: ds.dtype, dropped: ds.dropped },
    training: { energy: r.energy, iterations: r.iterations, converged: r.converged, init: 'kmeans++' },
    // The loop's configuration, and the rows it trained on (every row, or the --sample).
    config: { ...cfgOn(kind), sampleRows },
    seed,
    tool: { name: 'vlc', version: VERSION },
    device: kind,
  });
  const plan = planResiduals(choice, ds.n, ds.d, m, (payloadBytes) =>
    fileBytesWithResidual(
      {
        // The longest figures a run can report keep this an upper bound.
        // (f16 anchors unless asked otherwise: anchors beyond f16's range, known only after
        // training, are kept in f32 and can take the file past the budget.)
        manifest: manifestFor({ energy: -1.2345678901234567e-100, iterations: cfgOn('cuda').maxIters, converged: false }, 'cuda', o.anchorDtype ?? 'f16'),
        anchors: new Float32Array(m * ds.d),
        assignments: new Uint32Array(ds.n),
      },
      'pq',
      payloadBytes,
    ),
  );
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: o.gpu ?? 0 });
  const signal = o.signal ?? interruptSignal;
  let result: TrainResult;
  let coded: Awaited<ReturnType<typeof encodeResiduals>> | undefined;
  let residualSeconds = 0;
  let anchorDtype: 'f16' | 'f32' = 'f16';
  try {
    // Each k-means++ try of init, the iterations (training's own line), then one exact pass. The
    // tries after the first come after its polishing iterations, so the steps alternate.
    let phase = progress.step('choosing initial anchors (k-means++)', '');
    result = await train(backend, ds, cfgOn(backend.kind), sample, {
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
    });
    phase.end();
    anchorDtype = storableAnchorDtype(result.anchors, o.anchorDtype);
    if (plan.mode !== 'none') {
      // Residuals against the anchors as stored (f16-rounded by default), so decoding reproduces them;
      // pq trains its codebooks on the same device as the anchors.
      const tr = performance.now();
      const anchors = storedAnchors(result.anchors, anchorDtype);
      // One step, its elapsed time shown: the encoders report no count of their own.
      const encoding = progress.step(`encoding ${plan.mode} residuals`, '');
      coded = await encodeResiduals(plan, { x: wholeF32(ds, `--residual ${plan.mode}`), n: ds.n, d: ds.d, anchors, assign: result.assignments }, backend, seed, { signal });
      encoding.end();
      residualSeconds = (performance.now() - tr) / 1000;
    }
  } finally {
    await backend.close();
  }
  const residualEnergy = coded?.residualEnergy;

  const tw = performance.now();
  const writing = progress.step(`writing ${out.target === '-' ? 'stdout' : quoteName(out.target)}`, 'bytes');
  const bytes = await writeVlc(
    out,
    {
      manifest: { ...manifestFor(result, backend.kind, anchorDtype), ...(residualEnergy !== undefined ? { residualEnergy } : {}) },
      anchors: result.anchors,
      assignments: result.assignments,
      residuals: coded?.residuals,
    },
    (written, total) => writing.update(written, total),
  );
  writing.end();
  const writeSeconds = (performance.now() - tw) / 1000;

  return {
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
    /** Rows the loop trained on (n when it trained on every row), their energy, and the final pass's seconds. */
    sample_rows: result.sampleRows,
    train_energy: result.trainEnergy,
    final_pass_seconds: result.finalSeconds,
    residual,
    ...(plan.mode === 'pq' ? { pq_subspaces: plan.subspaces, pq_bits: plan.bits } : {}),
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
    anchor_dtype: anchorDtype,
    assignment_width: assignmentWidthFor(m),
    seed,
    input_format: ds.format,
    input_dtype: ds.dtype,
    dropped: ds.dropped,
  };
}

/** Largest finite float16 (anchors beyond it would be stored as Inf). */
const F16_MAX = 65504;

/**
 * f16 anchors (the default) cannot hold values beyond ±65504: then the anchors are stored as f32,
 * with a log line — or, when f16 was asked for explicitly, the run is refused.
 */
function storableAnchorDtype(anchors: Float32Array, asked: 'f16' | 'f32' | undefined): 'f16' | 'f32' {
  if (asked === 'f32') return 'f32';
  let max = 0;
  for (let i = 0; i < anchors.length; i++) max = Math.max(max, Math.abs(anchors[i]));
  if (max <= F16_MAX) return 'f16';
  const why = `the anchors reach ${max.toPrecision(4)}, beyond float16's range (${F16_MAX})`;
  if (asked === 'f16') throw new UsageError(`${why}; use --anchor-dtype f32`);
  log().info(`${why}: storing them as f32`);
  return 'f32';
}
