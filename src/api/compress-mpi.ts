// compress() over several processes (MPI ranks: `mpirun -n R vlc compress ...`), each on its own
// share of the rows, training together as ONE engine: every rank opens its local engine (CPU or
// GPU) on its rows only (rank-rows.ts), and a ShardedEngine whose single local member talks to
// the other ranks through an MPI Comm (backend/sharded/mpi.ts) combines the per-anchor sums each
// iteration. Every rank runs the same deterministic annealing program in lockstep; remote rows,
// k-means++ picks and the assignments reach the ranks that need them through the Comm.
//
// Around training it is compress() itself (compress-steps.ts): every rank plans the run from the
// whole data's figures; once the anchors are trained, rank 0 gathers the rows it measures, chooses
// the codec, and every rank encodes its own rows with it (rank-finish.ts, rank-encode.ts) while
// rank 0 gathers their codes, measures and writes exactly as one process would. The sums are
// exact (int64 fixed point in training, one rank's figures per block in encoding), so the file is
// the one a single process writes from the same input and seed, byte for byte, whatever the codec
// (test/mpi). No rank holds every row, but for pq and ec residuals (docs/architecture.md).
import { DEFAULT_CONFIG } from '../anneal/config.js';
import { agree, everywhere, failedTogether, sameOnEveryRank } from '../backend/sharded/agree.js';
import { VERSION } from '../version.js';
import type { Comm } from '../backend/sharded/comm.js';
import { ShardedEngine } from '../backend/sharded/engine.js';
import { widenCores } from '../backend/sharded/cores.js';
import { launchedByMpirun, localRankOf, MpiUnavailableError, worldComm } from '../backend/sharded/mpi.js';
import { probeCuda } from '../backend/cuda/index.js';
import { selectBackend } from '../backend/select.js';
import type { Backend, Engine } from '../backend/types.js';
import { UsageError } from '../errors.js';
import { interruptSignal } from '../interrupt.js';
import { datasetFromF32, rowsF32 } from '../vectors/dataset.js';
import { unitDataset, type Metric } from '../vectors/metric.js';
import { scaledDataset, scaleFor, scaleMagnitude } from '../vectors/scale.js';
import { quoteName } from '../io/names.js';
import { readRankRows } from './rank-rows.js';
import { gatherAtRankZero, shareOf, wholeFigures, type RankShare } from './rank-share.js';
import { finishRanks } from './rank-finish.js';
import { log, setVerbosity, silentReporter } from '../log.js';
import type { OutputPlan } from './preflight.js';
import { metricOf, tellZeroVectors, trainingSteps, unscaledResult, type CompressOptions, type CompressResult } from './compress.js';
import { goalOf } from './compress-codec.js';
import { finishCompress, planCompress, storableAnchorDtype } from './compress-steps.js';
import { resolveSample, sampleSize } from './sample.js';
import { train, type TrainEngines } from './train.js';

/**
 * compress(input, o) as one rank of `comm`: resolves to the result on rank 0, to undefined on the
 * others. A failure is reported once, by rank 0 (agree.ts), or by the failing rank mid-training (Comm.abort).
 */
export async function compressDistributed(input: string[], o: DistributedOptions, comm: Comm): Promise<CompressResult | undefined> {
  const t0 = performance.now();
  const progress = o.progress ?? silentReporter;
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  // The options' values (not the callbacks): ranks started by different commands would train apart.
  const values = Object.entries(o).filter(([, v]) => v === null || Array.isArray(v) || ['string', 'number', 'boolean'].includes(typeof v));
  const agreed = await sameOnEveryRank(comm, JSON.stringify({ input, values, version: VERSION }));
  const goal = await everywhere(comm, () => {
    if (!agreed) throw new UsageError('the MPI ranks were started with different inputs, options or vlc versions; start every rank with the same command');
    if (o.output === '-') throw new UsageError('under MPI rank 0 writes the .vlc to a file: give -o FILE, not -o -');
    return goalOf(o);
  });
  const out = await agree(comm, async () => (comm.rank === 0 ? o.planOutput() : undefined)); // rank 0 writes: its checks count

  // Reading: each rank its rows; the plan from the whole data's figures, checked before any work.
  const reading = progress.step(`reading ${input.map(quoteName).join(' ')} (rank ${comm.rank} of ${comm.size}: its rows)`, '');
  const metric = metricOf(o.metric);
  const { share, norms } = await readShare(comm, input, o, metric);
  if (norms) {
    // Cosine: every rank's rows at unit length (row by row, as one process makes them); rank 0 says how many are zero.
    const zero = (await comm.allreduce(Float64Array.of(norms.zero), 'sum'))[0];
    if (comm.rank === 0) tellZeroVectors(zero);
  }
  const tp = performance.now();
  const planned = await everywhere(comm, () => planCompress(wholeFigures(share), o, goal, seed, metric, input.join(' ')));
  const planSeconds = (performance.now() - tp) / 1000; // with the setup, as in one process
  // Cosine: the norms of every row (the file stores them all), gathered at rank 0 as rows of one value.
  const allNorms = norms && (await gatherAtRankZero(comm, { ...share, local: datasetFromF32(norms.local, norms.local.length, 1) })).gathered;
  reading.end();
  const readSeconds = (performance.now() - t0) / 1000 - planSeconds;

  const m = planned.plan.m;
  const gpu = rankGpu(o.gpu, localRankOf() ?? comm.rank, () => {
    const probe = o.device === 'cpu' ? undefined : probeCuda();
    return probe?.ok ? probe.devices.length : 0;
  });
  const backend = await agree(comm, () => selectBackend({ device: o.device ?? 'auto', gpu }));
  const sample = resolveSample(o.sample ?? 'auto', backend.kind, share.n, share.local.d, m);
  const cfg = planned.configOf(m, backend.kind);
  // The whole data's scale (vectors/scale.ts): that of its largest |x|, the largest of the ranks'
  // (f16 rows that reach the band end their scan there, as one process's do).
  const scale = scaleFor((await comm.allreduce(Float64Array.of(scaleMagnitude(share.local)), 'max'))[0]);
  const setupSeconds = (performance.now() - t0) / 1000 - readSeconds;
  const hooks = { signal: o.signal ?? interruptSignal };
  let handed = false;
  // From here on every rank runs the same program; a failure anywhere ends the job (Comm.abort).
  try {
    const steps = trainingSteps(o, progress, hooks.signal);
    const result = unscaledResult(scale, await train(rankEngines(backend, { ...share, local: scaledDataset(share.local, scale) }, m, comm), cfg, sample, steps.hooks));
    steps.end();
    // Decided on every rank alike (a refusal is rank 0's one line): the anchors as stored are every rank's to encode with.
    const anchorDtype = await everywhere(comm, () => storableAnchorDtype(result.anchors, o.anchorDtype));
    // Rank 0 finishes as one process would, the rows it measures gathered and the residuals coded on
    // every rank (finishRanks); the others take part, then wait for its verdict, so every rank exits
    // with its code and only rank 0 speaks (agree.ts).
    handed = true; // closed by finishRanks (rank 0's by finishCompress)
    return await finishRanks(comm, share, result, anchorDtype, { backend, seed, hooks }, (rankHooks) =>
      finishCompress({
        o, metric, norms: allNorms && (rowsF32(allNorms, 0, allNorms.n) as Float32Array), goal, planned, cfg, sampleRows: sampleSize(sample, share.n, m), seed, result, backend, hooks, progress, out: out!, anchorDtype,
        ds: wholeFigures(share), ...rankHooks,
        where: { kind: backend.kind, label: `${comm.size} MPI ranks (rank 0: ${backend.label})` },
        clock: { t0, read: readSeconds, setup: setupSeconds },
      }));
  } catch (e) {
    // A failure of this rank alone (the others may be waiting in a collective): its reason on
    // stderr, then MPI_Abort. One every rank shares (failedTogether) ends them all in step.
    if (!failedTogether(e)) comm.abort(e instanceof Error ? e : new Error(String(e)));
    throw e;
  } finally {
    if (!handed) await backend.close();
  }
}

/**
 * This rank's rows (rank-rows.ts) and the whole data's figures; cosine: the rows at unit length,
 * with their norms and how many are zero (the rows as read let go).
 */
async function readShare(comm: Comm, input: string[], o: DistributedOptions, metric: Metric): Promise<{ share: RankShare; norms?: { local: Float32Array; zero: number } }> {
  const read = await agree(comm, () => readRankRows(input, comm.rank, comm.size, o));
  log().debug(`rank ${comm.rank}: ${read.ds.n} rows (${read.how})`);
  if (metric !== 'cosine') return { share: await shareOf(comm, read.ds) };
  const unit = unitDataset(read.ds);
  return { share: await shareOf(comm, unit.ds), norms: { local: unit.norms, zero: unit.zero } };
}

/** compress()'s options; the output as given, and how rank 0 checks it (preflight.ts) before any work. */
export interface DistributedOptions extends Omit<CompressOptions, 'output'> {
  /** -o as given (undefined: planOutput's default). */
  output: string | undefined;
  planOutput: () => OutputPlan;
}

/**
 * The GPU of a rank that is `local`-th on its machine: the local-th of a --gpu list (round robin),
 * the one --gpu named, or without --gpu the local-th GPU of the machine (round robin over `count()`),
 * so `mpirun -n 2` on a two-GPU machine puts one rank on each.
 */
export function rankGpu(gpu: number | number[] | undefined, local: number, count: () => number): number {
  if (Array.isArray(gpu)) return gpu[local % gpu.length];
  if (gpu !== undefined) return gpu;
  const n = count();
  return n > 0 ? local % n : 0;
}

/**
 * Engines over the ranks' rows: one local engine on this rank's rows inside a ShardedEngine over
 * `comm`, opened once; a sample is that engine's subset (each rank keeps its own sampled rows).
 * train() disposes the engines it opens: the sample's first, the whole one's last.
 */
function rankEngines(backend: Backend, share: RankShare, m: number, comm: Comm): TrainEngines {
  let whole: Promise<Engine> | undefined;
  const open = () =>
    (whole ??= backend.open(share.local, m).then(async (e) => {
      try {
        return await ShardedEngine.create([e], [comm]);
      } catch (err) {
        await e.dispose();
        throw err;
      }
    }));
  return { n: share.n, whole: open, rows: async (list) => (await open()).subset(list) };
}

/** Whether this compress runs as an MPI rank: asked for, or started by mpirun. */
export function distributedRun(flag: boolean | undefined): boolean {
  return flag === true || launchedByMpirun();
}

/**
 * compressDistributed() as one rank of MPI_COMM_WORLD, MPI started and ended here; only rank 0
 * speaks (the others log nothing but errors). Resolves to the result on rank 0 (the caller reports
 * it), to undefined on the other ranks.
 */
export async function runDistributed(input: string[], o: DistributedOptions): Promise<CompressResult | undefined> {
  metricOf(o.metric); // a bad value fails before MPI starts
  const comm = openWorld();
  if (comm.rank > 0) setVerbosity('quiet');
  widenCores(comm.rank);
  try {
    return await compressDistributed(input, comm.rank > 0 ? { ...o, progress: silentReporter, onIter: undefined } : o, comm);
  } finally {
    comm.finalize(); // after a failure every rank has left its collectives in step (agree.ts)
  }
}

/** MPI_COMM_WORLD; without Open MPI a one-line usage error (exit 2) naming what to install. */
function openWorld() {
  try {
    return worldComm();
  } catch (e) {
    if (e instanceof MpiUnavailableError) throw new UsageError(`--distributed runs under Open MPI: ${e.message}`);
    throw e;
  }
}
