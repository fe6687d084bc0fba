// Work split by dimension among threads, as the ec decoder splits blocks (ec/decode-threads.ts): the
// bits encoder's step table (bits-steps.ts), the ec planner's step points (ec/steps.ts) and int4's
// clip search (scalar.ts) are loops over dimensions whose every turn reads its own column of a
// sample and writes its own results.
// Each thread (this one and kept workers, dims-worker.ts) claims the next dimension from a shared
// counter and writes that dimension's results into shared arrays, so the results are one thread's,
// whatever claimed what. The caller waits on the counter (Atomics.wait): the work stays a
// synchronous call for its callers.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { keepWorkers } from './kept-workers.js';

/** Work of fewer values than this runs on the caller's thread alone (a worker's start costs more). */
export const PARALLEL_MIN_VALUES = 1 << 18;
/** More threads than this gain little on a loop over a few hundred dimensions. */
const MAX_THREADS = 16;
/** How long the caller waits without a dimension finished before it does the rest itself. */
const STALL_MS = 2000;
const NEXT = 0, DONE = 1, STATUS = 2;

/** The default thread count for work over `values` values: every core (at most MAX_THREADS), or 1 for small work. */
export const dimsThreadCount = (values: number): number => (values < PARALLEL_MIN_VALUES ? 1 : Math.min(availableParallelism(), MAX_THREADS));

/** One dimension's work on this thread (its scratch made once, by the task's maker). */
export type DimWork = (k: number) => void;

/** A task as a worker receives it: `kind` names the maker of its DimWork (dims-worker.ts), the rest is its shared data. */
export interface DimsTask {
  kind: string;
}

interface DimsJob {
  task: DimsTask;
  d: number;
  /** i32: the next dimension to claim, the dimensions done, then each dimension's status (1: done). */
  ctrl: SharedArrayBuffer;
}

/**
 * `here(k)` for k = 0 .. d − 1, or the same work shared among `threads` threads (this one
 * included, unless callerClaims is false: then threads − 1 workers do every dimension, as tests
 * check): the workers make theirs from `task` (whose arrays are shared) as `here` was made.
 */
export function onDimensions(task: DimsTask, d: number, threads: number, here: DimWork, callerClaims = true): void {
  const t = Math.max(1, Math.min(threads, d));
  if (t === 1) {
    for (let k = 0; k < d; k++) here(k);
    return;
  }
  const job: DimsJob = { task, d, ctrl: new SharedArrayBuffer(4 * (STATUS + d)) };
  for (const w of dimsWorkers(t - 1)) w.postMessage(job);
  if (callerClaims) claimDimensions(job, here);
  const ctrl = new Int32Array(job.ctrl);
  for (let done = Atomics.load(ctrl, DONE); done < d; done = Atomics.load(ctrl, DONE)) {
    if (Atomics.wait(ctrl, DONE, done, STALL_MS) === 'timed-out' && Atomics.load(ctrl, DONE) === done) {
      // A worker claimed a dimension and stopped (it never should): what is missing is done here, the same way.
      for (let k = 0; k < d; k++) if (Atomics.load(ctrl, STATUS + k) !== 1) here(k);
      return;
    }
  }
}

/** Claims dimensions of `job` until none is left, doing each; its status and the count done say so. */
export function claimDimensions(job: DimsJob, work: DimWork): void {
  const ctrl = new Int32Array(job.ctrl);
  for (;;) {
    const k = Atomics.add(ctrl, NEXT, 1);
    if (k >= job.d) return;
    work(k);
    Atomics.store(ctrl, STATUS + k, 1);
    if (Atomics.add(ctrl, DONE, 1) + 1 === job.d) Atomics.notify(ctrl, DONE);
  }
}

/** `length` zeros for a task's results: in shared memory when `threads` > 1 (the workers write them). */
export function resultsF64(length: number, threads: number): Float64Array {
  return threads > 1 ? new Float64Array(new SharedArrayBuffer(length * 8)) : new Float64Array(length);
}

/** `a` itself when its memory is shared, else a copy in shared memory (worker threads read it). */
export function sharedF64(a: Float64Array): Float64Array {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = new Float64Array(new SharedArrayBuffer(a.length * 8));
  out.set(a);
  return out;
}

/**
 * Start the workers a large piece of work would use, without waiting: the codec choice does (its
 * first step tables and clip searches then find them ready, not starting while the work is done).
 */
export function startDimsWorkers(): void {
  dimsWorkers(dimsThreadCount(Infinity) - 1);
}

/** The workers, started once per process and kept (idle, they do not hold it). */
const kept: Worker[] = [];

function dimsWorkers(t: number): Worker[] {
  return keepWorkers(kept, new URL('./dims-worker.js', import.meta.url), t).slice(0, Math.max(0, t));
}
