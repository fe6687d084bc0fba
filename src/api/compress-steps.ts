// The steps of compress() around training, one copy for both ways it runs: in one process
// (compress.ts) and as an MPI job (compress-mpi.ts). Before training, on every rank alike:
// planCompress() sizes the file and decides the anchors and the codecs to measure (or the one
// fixed). After training, in the process (or at MPI rank 0, the rows it measures gathered from
// the ranks and the residuals encoded on every rank: rank-finish.ts): finishCompress() chooses
// the codec, encodes the residuals, measures the file's quality, writes it and reports. The same steps on the same rows, anchors and seed give the
// same bytes, whichever way the anchors were trained.
import { configFor, type AnnealConfig } from '../anneal/config.js';
import type { AnnealHooks } from '../anneal/types.js';
import type { Backend } from '../backend/types.js';
import { codecName, fixedPlan, isCoded, storable } from '../codec-registry/index.js';
import { UsageError } from '../errors.js';
import { quoteName } from '../io/names.js';
import { writeVlc } from '../io/vlc/file.js';
import { storedAnchorsAndHalves } from '../io/vlc/format.js';
import { grouped } from '../io/vlc/stats.js';
import { log, type Reporter } from '../log.js';
import { choose, planChoice, type ChoicePlan, type CodecPlan, type Trained } from '../quality/choose.js';
import { measureQuality, measureQualityOfRows, type HeldRows } from '../quality/measure.js';
import { figuresFromRowSums } from '../quality/reconstruction.js';
import { withMetric } from '../search/metric.js';
import type { Dataset } from '../vectors/dataset.js';
import type { EncodedResiduals } from '../codecs/index.js';
import type { Metric } from '../vectors/metric.js';
import { fewIds } from '../vectors/row-ids.js';
import type { CompressOptions, CompressResult } from './compress.js';
import { choiceLine, decoderOf, encodeAll, encoderOn, qualityWarning, sizer, type CodecGoal } from './compress-codec.js';
import { vlcContent } from './compress-file.js';
import { compressStats } from './compress-report.js';
import type { OutputPlan } from './preflight.js';
import type { TrainResult } from './train.js';
import { startDimsWorkers } from '../codecs/dims-on-threads.js';

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

/** What is decided before training: the anchors (plan.m), the codecs, and how files are sized. */
export interface CompressPlan {
  plan: ChoicePlan;
  size: ReturnType<typeof sizer>;
  /** The annealing configuration for m anchors on a device (the effort's and the device's rules depend on both). */
  configOf(m: number, kind: 'cpu' | 'cuda'): AnnealConfig;
}

/**
 * The plan of a compress of `ds` (its n, d, dtype and dropped rows: the whole data's, though an
 * MPI rank holds only its rows), checked and said before training so that a budget or a bad
 * --anchors fails in a second. `source` names the input in messages.
 */
export function planCompress(ds: Dataset, o: CompressOptions, goal: CodecGoal, seed: number, metric: Metric, source: string): CompressPlan {
  const m0 = o.anchors ?? defaultAnchors(ds.n);
  if (m0 > ds.n) throw new UsageError(`--anchors ${m0} is more than the ${ds.n} vectors in ${source}; use at most ${ds.n}`);
  tellDropped(ds);
  // Sized before training (f16 anchors unless asked otherwise: anchors beyond f16's range, known
  // only after training, are kept in f32 and can take the file past the budget). configFor takes
  // the device: the estimate uses CUDA's (the longer), training the backend's own.
  const configOf = (m: number, kind: 'cpu' | 'cuda'): AnnealConfig =>
    configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, kind);
  const size = sizer({ ds, metric, anchorDtype: o.anchorDtype ?? 'f16', cfg: configOf(m0, 'cuda'), sampleRows: ds.n, seed, device: 'cuda' });
  const plan = storablePlan(
    goal.kind === 'fixed'
      ? { m: m0, options: [fixedPlan(goal.choice, { n: ds.n, d: ds.d, m: m0, fileBytes: (payload) => size.withPayload(payload, m0, goal.choice.residual) })] }
      : planChoice(goal, ds.n, ds.d, m0, o.anchors !== undefined, size.perVector),
    ds.n, ds.d,
  );
  return { plan, size, configOf };
}

/** What finishCompress() needs: the whole data, what was planned and trained, and where it runs. */
export interface Finish {
  o: CompressOptions;
  /** Every row, as training saw them (cosine: at unit length), with the whole data's dropped rows; with `measured`, its figures alone. */
  ds: Dataset;
  /**
   * Under MPI (compress-mpi.ts): rank 0's rows, gathered from every rank when choosing begins —
   * the rows the chooser and the quality figures read (quality/measure.ts measuredRows(n), `rows`
   * ascending, held in that order), or every row (`rows` null) where they read every row. `ds` then
   * gives only the whole data's figures.
   */
  gather?: () => Promise<{ x: Dataset; rows: number[] | null }>;
  /** How the residuals are encoded (MPI: each rank its own rows, rank-encode.ts); default: here, on every row of `ds` (encodeAll). */
  encode?: (codec: CodecPlan, t: Trained) => Promise<Partial<EncodedResiduals>>;
  /** The anchors' storage, when decided before (MPI: on every rank); default storableAnchorDtype's. */
  anchorDtype?: 'f16' | 'f32';
  metric: Metric;
  /** Cosine: the norms of the vectors as read. */
  norms?: Float32Array;
  goal: CodecGoal;
  planned: CompressPlan;
  cfg: AnnealConfig;
  sampleRows: number;
  seed: number;
  result: TrainResult;
  /** The codecs' device (encoders, exact k-NN); finishCompress closes it, failing or not. */
  backend: Backend;
  /** What the report says of the device (default: the backend's own kind and label). */
  where?: Pick<Backend, 'kind' | 'label'>;
  hooks: AnnealHooks;
  progress: Reporter;
  out: OutputPlan;
  /** When the run started (performance.now()), and the seconds its reading and setup took. */
  clock: { t0: number; read: number; setup: number };
}

/** Choose the codec, encode, measure, write and report: compress's steps after training (see the top of the file). */
export async function finishCompress(f: Finish): Promise<CompressResult> {
  const { ds, goal, seed, result, backend, hooks, progress, out } = f;
  const { plan, size } = f.planned;
  const m = plan.m;
  let closed = false;
  try {
    // Exact search for the quality figures and the codec choice: on the GPU when the run has one.
    // ip / cosine: ranked by the metric (search/metric.ts), the ground truth and the decoded vectors alike.
    const knn = withMetric(backend.exactKnn, f.metric);
    const anchorDtype = f.anchorDtype ?? storableAnchorDtype(result.anchors, f.o.anchorDtype);

    const tc = performance.now();
    const choosing = progress.step('choosing the codec: exact neighbours of the sample', 'codecs measured');
    if (goal.kind !== 'fixed') startDimsWorkers(); // the codecs' per-dimension searches use them soon
    // Under MPI the rows to measure come from the ranks now (counted with choosing).
    const got = f.gather ? await f.gather() : undefined;
    const held: HeldRows | undefined = got?.rows ? { x: got.x, rows: got.rows } : undefined;
    const stored = storedAnchorsAndHalves(result.anchors, anchorDtype); // the halves go to the file as they are
    const trained: Trained = { x: got && !got.rows ? got.x : ds, n: ds.n, d: ds.d, anchors: stored.values, assignments: result.assignments };
    const onMeasure = (name: string, done: number, expected: number) => choosing.update(done, expected, `choosing the codec: measuring ${name}`);
    const choice = goal.kind === 'fixed' ? undefined : await choose(goal, plan, trained, encoderOn(backend, seed, hooks), knn, (c) => size.perVector(c, m), onMeasure, held);
    const codec: CodecPlan = choice?.codec ?? plan.options[0];
    choosing.end();
    const chooseSeconds = (performance.now() - tc) / 1000;

    const tr = performance.now();
    // One step, its elapsed time shown: the encoders report no count of their own.
    const encoding = progress.step(`encoding ${codecName(codec)} residuals`, '');
    const { residuals, residualEnergy, rowSums } = await (f.encode ?? ((c, t) => encodeAll(c, t, backend, seed, hooks)))(codec, trained);
    encoding.end();
    const residualSeconds = (performance.now() - tr) / 1000;
    backend.uploadsOver(); // a GPU unlocks the host's pages while quality is measured and the file written, not after

    const tq = performance.now();
    const measuring = progress.step('measuring the quality of the file', '');
    // The reconstruction figures from the encoder's row sums when it made them (the GPU's), else measured here.
    const decode = decoderOf(trained, residuals);
    const quality = held
      ? await measureQualityOfRows(held.x, held.rows, ds.n, ds.d, decode, knn, choice?.recall)
      : await measureQuality(trained.x, ds.n, ds.d, decode, knn, choice?.recall, rowSums && figuresFromRowSums(rowSums));
    measuring.end();
    const qualitySeconds = (performance.now() - tq) / 1000;

    const tw = performance.now();
    const writing = progress.step(`writing ${out.target === '-' ? 'stdout' : quoteName(out.target)}`, 'bytes');
    const bytes = await writeVlc(
      out,
      vlcContent({ ds, metric: f.metric, norms: f.norms, m, anchorDtype, residual: codec.mode, residualEnergy, residuals, cfg: f.cfg, sampleRows: f.sampleRows, seed, device: backend.kind, result, anchorHalves: stored.halves, quality }),
      (written, total) => writing.update(written, total),
    );
    writing.end();
    const writeSeconds = (performance.now() - tw) / 1000;

    // Said once the file exists, with its own bytes per vector (the choice sized it before training, as an upper bound).
    if (choice && goal.kind !== 'fixed') log().info(choiceLine(goal, choice, bytes / ds.n));
    const defaulted = f.o.quality === undefined && f.o.bytes === undefined && f.o.residual === undefined;
    const warning = qualityWarning(goal, choice, quality.recall.recall_at_10_all, m, ds.n, defaulted);
    if (warning) log().warn(warning);
    const tt = performance.now();
    closed = true;
    await backend.close(); // within the run's time: freeing GPU contexts is part of the wall a user waits
    const teardownSeconds = (performance.now() - tt) / 1000;
    return compressStats({
      ds, m, metric: f.metric, codec, anchorDtype, bytes, result, quality, goal, choice, backend: f.where ?? backend, seed,
      seconds: {
        read: f.clock.read, setup: f.clock.setup, choose: chooseSeconds, residual: residualSeconds, quality: qualitySeconds, write: writeSeconds,
        teardown: teardownSeconds, total: (performance.now() - f.clock.t0) / 1000,
      },
    });
  } finally {
    if (!closed) await backend.close();
  }
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
