// The 'ec' section's blocks decoded on several threads: blocks are independent, so each thread
// (the caller's and kept workers, decode-worker.ts) claims the next undecoded block from a shared
// counter and writes its codes into that block's own shared array. A block's codes depend on its
// bytes alone, so the result is the one thread's whatever the thread count or the order blocks
// were claimed in; a damaged section is refused for its lowest-numbered bad block, decoded again on
// the caller's thread for its error, as the one-thread reader would.
//
// The section reader is synchronous (decodeVlc calls it), so the caller's thread decodes blocks
// too and then waits on the counter (Atomics.wait) rather than on messages: workers need no event
// loop of the caller's to start or to answer.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { keepWorkers } from '../kept-workers.js';
import type { EcLayout } from './blocks.js';
import { BlockDecoder } from './fast-decode.js';
import type { BlockCodes } from './residuals.js';

/** Sections with fewer symbols than this are decoded on the caller's thread alone. */
export const PARALLEL_MIN_SYMBOLS = 1 << 21;
/** More threads than this only contend for memory bandwidth. */
const MAX_THREADS = 8;
/** How long the caller waits for a claimed block before it gives up on the workers. */
const STALL_MS = 5 * 60_000;
const NEXT = 0, DONE = 1, STATUS = 2;
const OK = 0, FAILED = 1, WIDE = 2;

/** The default thread count: every core, at most MAX_THREADS. */
export const decodeThreadCount = (): number => Math.min(availableParallelism(), MAX_THREADS);

/** One decode as a worker receives it: the section's bytes and models, and where each block's codes go. */
export interface DecodeJob {
  payload: SharedArrayBuffer;
  byteOffset: number;
  length: number;
  lo: Int32Array;
  size: Uint32Array;
  scaleBits: number;
  start: Uint32Array;
  freq: Uint32Array;
  blockRows: number;
  n: number;
  blockAt: Float64Array;
  /** Block b's codes: int16 (narrow) or int32, rows × coded dimensions. */
  outs: SharedArrayBuffer[];
  narrow: boolean;
  /** The symbol loop in WebAssembly (the caller's decoder's choice). */
  wasm: boolean;
  /** i32: the next block to claim, the blocks done, then each block's status. */
  ctrl: SharedArrayBuffer;
}

/** Claims blocks until none is left, decoding each into its array; the status says how it went. */
export function claimBlocks(job: DecodeJob, dec: BlockDecoder): void {
  const ctrl = new Int32Array(job.ctrl), bytes = new Uint8Array(job.payload, job.byteOffset, job.length);
  const blocks = job.outs.length, D = job.lo.length;
  const fail = (what: string) => new Error(what);
  for (;;) {
    const b = Atomics.add(ctrl, NEXT, 1);
    if (b >= blocks) return;
    const rows = Math.min(job.blockRows, job.n - b * job.blockRows);
    const out = job.narrow ? new Int16Array(job.outs[b], 0, rows * D) : new Int32Array(job.outs[b], 0, rows * D);
    let status = OK;
    try {
      if (!dec.decode(bytes, job.blockAt[b], job.blockAt[b + 1] - job.blockAt[b], rows, out, fail)) status = WIDE;
    } catch {
      status = FAILED;
    }
    Atomics.store(ctrl, STATUS + b, status);
    if (Atomics.add(ctrl, DONE, 1) + 1 === blocks) Atomics.notify(ctrl, DONE);
  }
}

/**
 * Every block of the section decoded on `threads` threads (this one included, unless callerClaims
 * is false: then threads − 1 workers decode every block, as tests check), in block order.
 * `fail(b)` builds block b's error; dec is this thread's decoder of the section's models.
 */
export function decodeBlocksOnThreads(
  payload: Uint8Array, layout: EcLayout, n: number, dec: BlockDecoder, threads: number, fail: (b: number) => (what: string) => Error,
  callerClaims = true,
): BlockCodes[] {
  const { blockRows, blockAt, alpha, models } = layout;
  const blocks = blockAt.length - 1, D = alpha.lo.length;
  let shared = payload;
  if (!(payload.buffer instanceof SharedArrayBuffer)) {
    shared = new Uint8Array(new SharedArrayBuffer(payload.length));
    shared.set(payload);
  }
  const width = dec.narrow ? 2 : 4;
  const outs = Array.from({ length: blocks }, (_, b) => new SharedArrayBuffer(Math.min(blockRows, n - b * blockRows) * D * width));
  const job: DecodeJob = {
    payload: shared.buffer as SharedArrayBuffer, byteOffset: shared.byteOffset, length: shared.length,
    lo: alpha.lo, size: alpha.size, scaleBits: models.scaleBits, start: models.start, freq: models.freq,
    blockRows, n, blockAt, outs, narrow: dec.narrow, wasm: dec.usesWasm, ctrl: new SharedArrayBuffer(4 * (STATUS + blocks)),
  };
  for (const w of decodeWorkers(Math.min(threads, blocks) - 1)) w.postMessage(job);
  if (callerClaims) claimBlocks(job, dec);
  const ctrl = new Int32Array(job.ctrl);
  for (let done = Atomics.load(ctrl, DONE); done < blocks; done = Atomics.load(ctrl, DONE)) {
    if (Atomics.wait(ctrl, DONE, done, STALL_MS) === 'timed-out' && Atomics.load(ctrl, DONE) === done)
      throw new Error(`ec decode: worker threads stopped after ${done} of ${blocks} blocks`);
  }
  const codes: BlockCodes[] = [];
  for (let b = 0; b < blocks; b++) {
    const rows = Math.min(blockRows, n - b * blockRows), status = ctrl[STATUS + b];
    if (status === OK) codes.push(dec.narrow ? new Int16Array(outs[b]) : new Int32Array(outs[b]));
    else {
      // A refused block is decoded again here for its error; a block with a code wider than int16, into int32.
      const q = new Int32Array(rows * D);
      dec.decode(payload, blockAt[b], blockAt[b + 1] - blockAt[b], rows, q, fail(b));
      if (status === FAILED) throw fail(b)('refused on a worker thread but not on this one');
      codes.push(q);
    }
  }
  return codes;
}

/** The decode workers, started once per process and kept (idle, they do not hold it). */
const kept: Worker[] = [];

function decodeWorkers(t: number): Worker[] {
  // A worker that dies (it never should) is dropped; the blocks it did not claim are claimed by the others.
  return keepWorkers(kept, new URL('./decode-worker.js', import.meta.url), t).slice(0, Math.max(0, t));
}
