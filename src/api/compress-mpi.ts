// compress() over several processes (MPI ranks: `mpirun -n R vlc compress ...`), each on its own
// share of the rows, training together as ONE engine: every rank opens its local engine (CPU or
// GPU) on its rows only (rank-rows.ts), and a ShardedEngine whose single local member talks to
// the other ranks through an MPI Comm (backend/sharded/mpi.ts) combines the per-anchor sums each
// iteration. Every rank runs the same deterministic annealing program in lockstep; remote rows,
// k-means++ picks (init runs k-means++ over the sharded engine: no rank needs all the rows) and the
// assignments reach the ranks that need them through the Comm. Rank 0 gathers the assignments and
// the rows the quality figures are measured on (measuredRows: every row up to 100,000, a fixed
// sample beyond), and writes the one .vlc; the other ranks write nothing.
//
// The sums are int64 fixed point, so the file is the one a single process would write from the
// same input and seed, byte for byte (test/mpi). What it cannot do yet: residual codecs (they
// encode every vector on one device): only --residual none.
import { configFor, DEFAULT_CONFIG } from '../anneal/config.js';
import { cpuKnn } from '../backend/cpu/index.js';
import { agree, everywhere, failedTogether, sameOnEveryRank } from '../backend/sharded/agree.js';
import { VERSION } from '../version.js';
import type { Comm } from '../backend/sharded/comm.js';
import { ShardedEngine } from '../backend/sharded/engine.js';
import { launchedByMpirun, localRankOf, MpiUnavailableError, worldComm } from '../backend/sharded/mpi.js';
import { probeCuda } from '../backend/cuda/index.js';
import { selectBackend } from '../backend/select.js';
import type { Backend, Engine } from '../backend/types.js';
import { UsageError } from '../errors.js';
import { isCoded } from '../codec-registry/index.js';
import { interruptSignal } from '../interrupt.js';
import { rowsF32, type Dataset } from '../vectors/dataset.js';
import { quoteName } from '../io/names.js';
import { readRankRows } from './rank-rows.js';
import { writeVlc } from '../io/vlc/file.js';
import { storedAnchors } from '../io/vlc/format.js';
import { log, setVerbosity, silentReporter } from '../log.js';
import { measuredRows, measureQuality, measureQualityOfRows } from '../quality/measure.js';
import type { OutputPlan } from './preflight.js';
import { defaultAnchors, storableAnchorDtype, tellDropped, type CompressOptions, type CompressResult } from './compress.js';
import { decoderOf, goalOf, qualityWarning } from './compress-codec.js';
import { vlcContent } from './compress-file.js';
import { compressStats } from './compress-report.js';
import { resolveSample, sampleSize } from './sample.js';
import { train, type TrainEngines } from './train.js';

/** The whole data as the ranks hold it: this rank's rows, and where every rank's rows start. */
interface RankShare {
  local: Dataset;
  n: number;
  /** First global row of each rank, and n at the end. */
  starts: number[];
  dropped: number;
  /** Input row ids --drop-invalid skipped, over every rank's rows, ascending. */
  droppedRows: number[];
}

/**
 * compress(input, o) as one rank of `comm`: resolves to the result on rank 0, to undefined on the
 * others. A failure is reported once, by rank 0 (agree.ts), or by the failing rank mid-run (Comm.abort).
 */
export async function compressDistributed(input: string[], o: DistributedOptions, comm: Comm): Promise<CompressResult | undefined> {
  const t0 = performance.now();
  const progress = o.progress ?? silentReporter;
  const seed = o.seed ?? DEFAULT_CONFIG.seed;
  // The options' values (not the callbacks): ranks started by different commands would train apart.
  const values = Object.entries(o).filter(([, v]) => v === null || Array.isArray(v) || ['string', 'number', 'boolean'].includes(typeof v));
  const agreed = await sameOnEveryRank(comm, JSON.stringify({ input, values, version: VERSION }));
  await everywhere(comm, () => {
    if (!agreed) throw new UsageError('the MPI ranks were started with different inputs, options or vlc versions; start every rank with the same command');
  });
  await everywhere(comm, () => refuseUnsupported(o));
  const out = await agree(comm, async () => (comm.rank === 0 ? o.planOutput() : undefined)); // rank 0 writes: its checks count

  const reading = progress.step(`reading ${input.map(quoteName).join(' ')} (rank ${comm.rank} of ${comm.size}: its rows)`, '');
  const read = await agree(comm, () => readRankRows(input, comm.rank, comm.size, o));
  reading.end();
  log().debug(`rank ${comm.rank}: ${read.ds.n} rows (${read.how})`);
  const share = await shareOf(comm, read.ds);
  const readSeconds = (performance.now() - t0) / 1000;
  const ds: Dataset = { ...share.local, n: share.n, dropped: share.dropped, droppedRows: share.droppedRows }; // the whole data's figures (manifest, report)

  const m = o.anchors ?? defaultAnchors(share.n);
  await everywhere(comm, () => {
    if (m > share.n) throw new UsageError(`--anchors ${m} is more than the ${share.n} vectors in ${input.join(' ')}; use at most ${share.n}`);
  });
  tellDropped(ds);
  const gpu = rankGpu(o.gpu, localRankOf() ?? comm.rank, () => {
    const probe = o.device === 'cpu' ? undefined : probeCuda();
    return probe?.ok ? probe.devices.length : 0;
  });
  const backend = await agree(comm, () => selectBackend({ device: o.device ?? 'auto', gpu }));
  const sample = resolveSample(o.sample ?? 'auto', backend.kind, share.n, ds.d, m);
  const setupSeconds = (performance.now() - t0) / 1000 - readSeconds;
  // From here on every rank runs the same program; a failure anywhere ends the job (Comm.abort).
  try {
    const cfg = configFor(o.effort ?? 'default', m, { seed, ...(o.iters !== undefined ? { maxIters: o.iters } : {}) }, backend.kind);
    const phase = progress.step(`training over ${comm.size} MPI ranks`, '');
    const result = await train(rankEngines(backend, share, m, comm), cfg, sample, {
      signal: o.signal ?? interruptSignal,
      onIter: (rec, maxIters) => o.onIter?.(rec, maxIters),
    });
    phase.end();
    const anchorDtype = await everywhere(comm, () => storableAnchorDtype(result.anchors, o.anchorDtype));
    const tq = performance.now();
    const measured = await gatherMeasuredRows(comm, share);
    if (comm.rank !== 0) return undefined;

    const trained = { x: measured.x, n: share.n, d: ds.d, anchors: storedAnchors(result.anchors, anchorDtype), assignments: result.assignments };
    const decode = decoderOf(trained);
    const quality = measured.rows === null
      ? await measureQuality(measured.x, share.n, ds.d, decode, cpuKnn)
      : await measureQualityOfRows(measured.x, measured.rows, share.n, ds.d, decode, cpuKnn);
    const qualitySeconds = (performance.now() - tq) / 1000;

    const tw = performance.now();
    const sampleRows = sampleSize(sample, share.n, m);
    const bytes = await writeVlc(out!, vlcContent({ ds, m, anchorDtype, residual: 'none', cfg, sampleRows, seed, device: backend.kind, result, quality }));
    const warning = qualityWarning(goalOf(o), undefined, quality.recall.recall_at_10_all, m, share.n, false);
    if (warning) log().warn(warning);
    const label = { kind: backend.kind, label: `${comm.size} MPI ranks (rank 0: ${backend.label})` };
    return compressStats({
      ds, m, codec: { mode: 'none' }, anchorDtype, bytes, result, quality, goal: goalOf(o), choice: undefined, backend: label, seed,
      seconds: {
        read: readSeconds, setup: setupSeconds, choose: 0, residual: 0, quality: qualitySeconds, write: (performance.now() - tw) / 1000,
        teardown: 0, total: (performance.now() - t0) / 1000, // the backend closes after the report, as the ranks part
      },
    });
  } catch (e) {
    // A failure of this rank alone (the others may be waiting in a collective): its reason on
    // stderr, then MPI_Abort. One every rank shares (failedTogether) ends them all in step.
    if (!failedTogether(e)) comm.abort(e instanceof Error ? e : new Error(String(e)));
    throw e;
  } finally {
    await backend.close();
  }
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

/** What MPI runs cannot do yet, refused before any work (the same on every rank). */
function refuseUnsupported(o: DistributedOptions): void {
  const goal = goalOf(o);
  if (goal.kind !== 'fixed' || isCoded({ mode: goal.choice.residual }))
    throw new UsageError('under MPI only --residual none is supported so far (the residual codecs encode every vector on one rank); add --residual none');
  if (o.output === '-') throw new UsageError('under MPI rank 0 writes the .vlc to a file: give -o FILE, not -o -');
}

/** Every rank's row count (exact: whole numbers), hence where each rank's rows start. */
async function shareOf(comm: Comm, local: Dataset): Promise<RankShare> {
  const mine = new Float64Array(comm.size * 2 + 2);
  mine[comm.rank] = local.n;
  mine[comm.size * 2] = local.dropped;
  mine[comm.size + comm.rank] = local.d;
  mine[comm.size * 2 + 1] = local.dtype === 'f16' ? 1 : 0;
  const all = await comm.allreduce(mine, 'sum');
  const counts = Array.from(all.subarray(0, comm.size));
  const dims = Array.from(all.subarray(comm.size, comm.size * 2));
  const f16Ranks = all[comm.size * 2 + 1];
  await everywhere(comm, () => {
    if (dims.some((d) => d !== dims[0]))
      throw new UsageError(`the ranks' rows have different dimensions (${dims.join(', ')}): every file of a sharded input must have the same dimension`);
    if (f16Ranks !== 0 && f16Ranks !== comm.size)
      throw new UsageError(`some ranks read f16 vectors and others f32: every file of a sharded input must have the same element type`);
  });
  const starts = [0];
  for (const c of counts) starts.push(starts[starts.length - 1] + c);
  return { local, n: starts[comm.size], starts, dropped: all[comm.size * 2], droppedRows: await droppedIds(comm, local) };
}

/**
 * Every rank's dropped rows as input ids: a rank's rows (kept and dropped) follow all the input rows
 * of the ranks before it, so its own ids shift by their count. One allreduce places each rank's ids
 * in its slots of the whole list (ids below 2^53 add exactly).
 */
async function droppedIds(comm: Comm, local: Dataset): Promise<number[]> {
  const spans = new Float64Array(comm.size * 2);
  spans[comm.rank] = local.n + local.dropped;
  spans[comm.size + comm.rank] = local.dropped;
  const all = await comm.allreduce(spans, 'sum');
  let offset = 0;
  let slot = 0;
  for (let r = 0; r < comm.rank; r++) {
    offset += all[r];
    slot += all[comm.size + r];
  }
  let total = 0;
  for (let r = 0; r < comm.size; r++) total += all[comm.size + r];
  if (total === 0) return [];
  const ids = new Float64Array(total);
  (local.droppedRows ?? []).forEach((id, i) => (ids[slot + i] = offset + id));
  return Array.from(await comm.allreduce(ids, 'sum'));
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

/** The rows measureQuality reads (measuredRows), gathered at rank 0 in row order; x is empty elsewhere. */
async function gatherMeasuredRows(comm: Comm, share: RankShare): Promise<{ x: Float32Array; rows: number[] | null }> {
  const { local, starts } = share;
  const r0 = starts[comm.rank];
  const d = local.d;
  const rows = measuredRows(share.n);
  const mine = rows === null ? null : rows.filter((r) => r >= r0 && r < r0 + local.n);
  const out = new Float32Array((mine === null ? local.n : mine.length) * d);
  if (mine === null) out.set(rowsF32(local, 0, local.n));
  else mine.forEach((r, k) => out.set(rowsF32(local, r - r0, r - r0 + 1), k * d));
  const parts = await comm.gather(new Uint8Array(out.buffer), 0);
  if (!parts) return { x: new Float32Array(0), rows };
  const x = new Float32Array(parts.reduce((s, p) => s + p.byteLength, 0) / 4);
  let at = 0;
  for (const p of parts) {
    x.set(new Float32Array(p.buffer, p.byteOffset, p.byteLength / 4), at);
    at += p.byteLength / 4;
  }
  return { x, rows };
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
  if (o.metric !== undefined && o.metric !== 'l2')
    throw new UsageError(`--distributed writes l2 files only: compress with --metric ${o.metric} in one process (one or several GPUs: --gpu 0,1)`);
  const comm = openWorld();
  if (comm.rank > 0) setVerbosity('quiet');
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
