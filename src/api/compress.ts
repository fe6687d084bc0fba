// compress(): read vectors, learn m anchors with the annealing quantizer, write every vector as its
// anchor id into a .vlc file (atomically; '-' streams it to stdout). What `vlc compress` runs, and
// what `import { compress } from 'vlc'` gives a Node program.
import { DEFAULT_CONFIG, type AnnealConfig } from '../anneal/config.js';
import type { AnnealResult, IterRecord } from '../anneal/types.js';
import { selectBackend, type DeviceChoice } from '../backend/select.js';
import type { Engine } from '../backend/types.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { allocVectors, toF32, type Dataset } from '../io/dataset.js';
import { readDataset, type ReadOptions } from '../io/read.js';
import { checkFinite } from '../io/readers/validate.js';
import { writeVlc } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { assignmentWidthFor } from '../io/vlc/manifest.js';
import { residualMse, type CodedResiduals, type ResidualMode } from '../codecs/index.js';
import { encodeScalar } from '../codecs/scalar.js';
import { bytesPerVector, seedRatio, trueRatio } from '../io/vlc/stats.js';
import { log } from '../log.js';
import { VERSION } from '../version.js';
import { assertNotTerminal, assertWritable } from './preflight.js';

export interface CompressOptions extends ReadOptions {
  /** The .vlc file to write, or '-' for stdout. */
  output: string;
  /** Number of anchors m, 1..n (default: defaultAnchors(n)). */
  anchors?: number;
  /** Maximum annealing iterations (default DEFAULT_CONFIG.maxIters). */
  iters?: number;
  /** Seed of every random choice (default DEFAULT_CONFIG.seed). */
  seed?: number;
  /** How anchors are stored (default f16, or f32 when a value exceeds f16's range; an explicit f16 then fails). */
  anchorDtype?: 'f16' | 'f32';
  residual?: ResidualMode;
  /** 'auto' (default): CUDA when usable, else the CPU; 'cuda' never falls back. */
  device?: DeviceChoice;
  /** GPU index (default 0). */
  gpu?: number;
  /** Called after every annealing iteration (the CLI draws its progress line from it). */
  onIter?: (rec: IterRecord, maxIters: number) => void;
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

async function datasetOf(input: string | Vectors, o: ReadOptions): Promise<Dataset> {
  if (typeof input === 'string') return readDataset(input, o);
  const { data, n, d } = input;
  if (!(Number.isInteger(n) && Number.isInteger(d) && n > 0 && d > 0) || data.length !== n * d)
    throw new UsageError(`vectors: n and d must be positive whole numbers with data.length = n × d (got n=${n}, d=${d}, ${data.length} values)`);
  // The backends share the vectors with worker threads: they must live in shared memory.
  const shared = data.buffer instanceof SharedArrayBuffer ? data : (allocVectors(n, d, 'f32') as Float32Array);
  if (shared !== data) shared.set(data);
  // The same checks as for files: NaN, Inf and values too large for f32 distances.
  return checkFinite({ n, d, dtype: 'f32', data: shared, format: 'memory f32' }, 'the vectors given', o.dropInvalid ?? false);
}

/** Compress `input` (a file path, '-' for stdin, or vectors in memory) into `o.output`. */
export async function compress(input: string | Vectors, o: CompressOptions) {
  const residual = o.residual ?? 'none';
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  assertWritable(o.output);
  assertNotTerminal(o.output, 'the binary .vlc file');
  const t0 = performance.now();

  const ds = await datasetOf(input, o);
  const readSeconds = (performance.now() - t0) / 1000;
  const m = o.anchors ?? defaultAnchors(ds.n);
  const source = typeof input === 'string' ? input : 'the vectors given';
  if (m > ds.n) throw new UsageError(`--anchors ${m} is more than the ${ds.n} vectors in ${source}; use at most ${ds.n}`);
  if (ds.dropped > 0) log().info(`skipped ${ds.dropped} vector${ds.dropped === 1 ? '' : 's'} containing NaN or Inf (--drop-invalid)`);

  const cfg: AnnealConfig = { ...DEFAULT_CONFIG, m, seed, maxIters: o.iters ?? DEFAULT_CONFIG.maxIters };
  const backend = await selectBackend({ device: o.device ?? 'auto', gpu: o.gpu ?? 0 });
  let engine: Engine | undefined;
  let result: AnnealResult;
  try {
    // Loaded on use, so that the commands that never train start without the quantizer.
    const { anneal } = await import('../anneal/index.js');
    engine = await backend.open(ds, m);
    result = await anneal(engine, cfg, {
      signal: o.signal ?? interruptSignal,
      onIter: (rec: IterRecord, maxIters: number) => {
        o.onIter?.(rec, maxIters);
        log().debug(rec, 'iteration');
      },
    });
  } finally {
    await engine?.dispose();
    await backend.close();
  }

  const anchorDtype = storableAnchorDtype(result.anchors, o.anchorDtype);
  const tr = performance.now();
  const { residuals, residualEnergy } = residual === 'none' ? {} : encodeResiduals(residual, ds, result, anchorDtype);
  const residualSeconds = (performance.now() - tr) / 1000;

  const tw = performance.now();
  const bytes = await writeVlc(o.output, {
    manifest: {
      n: ds.n,
      d: ds.d,
      m,
      metric: 'l2',
      anchorDtype,
      residual,
      ...(residualEnergy !== undefined ? { residualEnergy } : {}),
      input: { dtype: ds.dtype, dropped: ds.dropped },
      training: {
        energy: result.energy,
        iterations: result.iterations,
        converged: result.converged,
        init: 'kmeans++',
      },
      config: { ...cfg },
      seed,
      tool: { name: 'vlc', version: VERSION },
      device: backend.kind,
    },
    anchors: result.anchors,
    assignments: result.assignments,
    residuals,
  });
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
    residual,
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
