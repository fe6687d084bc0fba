// The 'bits' encoder's step table (bits-train.ts): for every dimension and bit count, the step with
// the least squared error on the residual sample. Dimensions are independent, so with a large sample
// they are shared among threads as the ec decoder shares blocks (ec/decode-threads.ts): each thread
// (this one and kept workers, bits-steps-worker.ts) claims the next dimension from a shared counter
// and writes its row of the table; the table is the one thread's, whatever claimed what. The caller
// waits on the counter (Atomics.wait), so the table stays a synchronous call for its callers.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { MAX_BITS, levelOffset } from './bits.js';
import { keepWorkers } from './kept-workers.js';

/** Candidate ranges, in RMS residuals of the dimension (the largest |r| is tried too). */
const RANGES = [1, 1.5, 2, 2.6, 3, 3.5, 4, 5, 6, 8];
/** Samples with fewer values than this are tabled on the caller's thread alone (a worker's start costs more). */
export const PARALLEL_MIN_VALUES = 1 << 18;
/** More threads than this gain little on a table of a few hundred dimensions. */
const MAX_THREADS = 16;
/** How long the caller waits without a dimension finished before it tables the rest itself. */
const STALL_MS = 2000;
const NEXT = 0, DONE = 1, STATUS = 2;

export interface StepTable {
  /** err[k·9 + b]: the sample's squared error of dimension k at b bits (b = 0: no code, r̂ = 0). */
  err: Float64Array;
  /** step[k·9 + b]: the step that gives it. */
  step: Float64Array;
}

/** One table as a worker receives it: the sample, the table's arrays and the counters, all shared. */
export interface StepsJob {
  sample: SharedArrayBuffer;
  d: number;
  err: SharedArrayBuffer;
  step: SharedArrayBuffer;
  /** i32: the next dimension to claim, the dimensions done, then each dimension's status (1: done). */
  ctrl: SharedArrayBuffer;
}

/** The step table of `sample` (rows × d, row-major), on `threads` threads (this one included). */
export function stepTable(sample: Float64Array, d: number, threads = sample.length < PARALLEL_MIN_VALUES ? 1 : Math.min(availableParallelism(), MAX_THREADS)): StepTable {
  const W = MAX_BITS + 1;
  const t = Math.max(1, Math.min(threads, d));
  if (t === 1) {
    const table = { err: new Float64Array(d * W), step: new Float64Array(d * W) };
    const col = new Float64Array(sample.length / Math.max(1, d));
    for (let k = 0; k < d; k++) tableDimension(sample, d, k, col, table);
    return table;
  }
  let shared = sample;
  if (!(sample.buffer instanceof SharedArrayBuffer)) {
    shared = new Float64Array(new SharedArrayBuffer(sample.length * 8));
    shared.set(sample);
  }
  const job: StepsJob = {
    sample: shared.buffer as SharedArrayBuffer, d, err: new SharedArrayBuffer(d * W * 8), step: new SharedArrayBuffer(d * W * 8),
    ctrl: new SharedArrayBuffer(4 * (STATUS + d)),
  };
  for (const w of stepsWorkers(t - 1)) w.postMessage(job);
  claimDimensions(job);
  const ctrl = new Int32Array(job.ctrl);
  for (let done = Atomics.load(ctrl, DONE); done < d; done = Atomics.load(ctrl, DONE)) {
    if (Atomics.wait(ctrl, DONE, done, STALL_MS) === 'timed-out' && Atomics.load(ctrl, DONE) === done) {
      // A worker claimed a dimension and stopped (it never should): table what is missing here, the same rows.
      const table = tableOf(job), col = new Float64Array(shared.length / d);
      for (let k = 0; k < d; k++) if (Atomics.load(ctrl, STATUS + k) !== 1) tableDimension(shared, d, k, col, table);
      break;
    }
  }
  return { err: new Float64Array(tableOf(job).err), step: new Float64Array(tableOf(job).step) };
}

const tableOf = (job: StepsJob): StepTable => ({ err: new Float64Array(job.err), step: new Float64Array(job.step) });

/** Claims dimensions until none is left, tabling each; its status and the count done say so. */
export function claimDimensions(job: StepsJob): void {
  const ctrl = new Int32Array(job.ctrl), sample = new Float64Array(job.sample), table = tableOf(job);
  const col = new Float64Array(sample.length / job.d);
  for (;;) {
    const k = Atomics.add(ctrl, NEXT, 1);
    if (k >= job.d) return;
    tableDimension(sample, job.d, k, col, table);
    Atomics.store(ctrl, STATUS + k, 1);
    if (Atomics.add(ctrl, DONE, 1) + 1 === job.d) Atomics.notify(ctrl, DONE);
  }
}

/** Dimension k's row of the table: for each bit count, every candidate range's error, the least kept (ties: the first). */
function tableDimension(sample: Float64Array, d: number, k: number, col: Float64Array, { err, step }: StepTable): void {
  const rows = col.length;
  let sq = 0, mx = 0;
  for (let j = 0; j < rows; j++) {
    const r = (col[j] = sample[j * d + k]);
    sq += r * r;
    if (Math.abs(r) > mx) mx = Math.abs(r);
  }
  err[k * (MAX_BITS + 1)] = sq;
  const rms = Math.sqrt(sq / Math.max(1, rows));
  for (let b = 1; b <= MAX_BITS; b++) {
    let best = Infinity, bestStep = 0;
    const L = (1 << b) - 1, off = levelOffset(b);
    let last = -1; // a range equal to the one before (several clip at the largest |r|) cannot win: ties keep the first
    if (mx > 0)
      for (const range of [...RANGES.map((c) => Math.min(mx, c * rms)), mx]) {
        const s = Math.fround((2 * range) / L);
        if (!(s > 0) || s === last) continue;
        last = s;
        let e = 0;
        for (let j = 0; j < rows; j++) {
          // The code as bits-rows.ts computes it: this loop is most of the encoder's time.
          const v = col[j];
          let q = Math.round(v / s) + off;
          q = q < 0 ? 0 : q > L ? L : q;
          const t = v - s * (q - off);
          e += t * t;
        }
        if (e < best) {
          best = e;
          bestStep = s;
        }
      }
    err[k * (MAX_BITS + 1) + b] = mx > 0 ? best : 0;
    step[k * (MAX_BITS + 1) + b] = bestStep;
  }
}

/** The step table's workers, started once per process and kept (idle, they do not hold it). */
const kept: Worker[] = [];

function stepsWorkers(t: number): Worker[] {
  return keepWorkers(kept, new URL('./bits-steps-worker.js', import.meta.url), t).slice(0, Math.max(0, t));
}
