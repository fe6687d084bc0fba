// Large f32/f16 inputs read by several threads: a file's data region split into contiguous
// ranges, each read by a worker (read-worker.ts) straight into the shared destination with its own
// positional reads, and scanned for suspect values (validate.ts) as it lands. One thread copying
// from the page cache and scanning runs at about 1 GB/s; the reads and scans of several run side
// by side (bench/results: read speed). Same bytes in memory, same first suspect element, as the
// one-thread loop of elements.ts, which small inputs, other sources and other types keep using.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import type { VectorStore } from '../../vectors/dataset.js';
import { badInput, type ByteSource } from './source.js';

/** Below this many bytes one thread is fast enough (workers take tens of ms to start). */
const PARALLEL_MIN_BYTES = 256 << 20;
let minBytes = PARALLEL_MIN_BYTES;
/** Bytes per thread at least (a thread per 64 MB, up to MAX_THREADS). */
const BYTES_PER_THREAD = 64 << 20;
let perThread = BYTES_PER_THREAD;

/**
 * Tests and benchmarks: read in parallel from `min` bytes on, `per` bytes a thread, at most `threads`
 * threads (undefined restores the defaults; .dev/read-threads.mjs measures the cap on a large machine).
 */
export function setParallelReadForTests(min?: number, per?: number, threads?: number): void {
  minBytes = min ?? PARALLEL_MIN_BYTES;
  perThread = per ?? BYTES_PER_THREAD;
  maxThreads = threads ?? MAX_THREADS;
}
/** Most reader threads: page-cache copies stop scaling before the cores do. */
const MAX_THREADS = 8;
let maxThreads = MAX_THREADS;
/** Bytes per read and scan: a chunk still in cache when it is scanned. */
const CHUNK_BYTES = 4 << 20;

/** What one worker reads: `bytes` from file position `position` into `buffer` at `byteOffset`. */
export interface RangeJob {
  fd: number;
  position: number;
  bytes: number;
  buffer: SharedArrayBuffer;
  byteOffset: number;
  elementBytes: 2 | 4;
  chunk: number;
  /** Also find the largest |x|'s bit pattern (sign cleared) of the range: a streamed compress's checking pass. */
  top?: boolean;
}

/** Whether readParallel applies: a file descriptor source, a direct element type, enough bytes, more than one core. */
export function parallelReadable(src: ByteSource, bytes: number): boolean {
  // Only fdSource counts bytes (other sources, e.g. a zip member, may not even hand out a ref).
  return typeof src.counted === 'function' && bytes >= minBytes && os.availableParallelism() > 1 && 'fd' in src.ref;
}

/**
 * Read `count` elements of `elementBytes` each from file offset `offset` into `dst` at element
 * `at`, on several threads. Returns the index (from `at`) of the first suspect element, or -1.
 */
export async function readParallel(src: ByteSource, offset: number, count: number, elementBytes: 2 | 4, dst: VectorStore, at: number): Promise<number> {
  return (await readRanges(src, offset, count, elementBytes, dst, at, false)).firstBad;
}

/**
 * readParallel that also finds the largest |x| as a bit pattern with the sign cleared (f16 or f32
 * bits, as vectors/scale.ts maxAbsOf takes them): the threads scan what they read while it is in cache.
 */
export async function readParallelTop(src: ByteSource, offset: number, count: number, elementBytes: 2 | 4, dst: VectorStore, at: number): Promise<{ firstBad: number; top: number }> {
  return readRanges(src, offset, count, elementBytes, dst, at, true);
}

async function readRanges(
  src: ByteSource, offset: number, count: number, elementBytes: 2 | 4, dst: VectorStore, at: number, top: boolean,
): Promise<{ firstBad: number; top: number }> {
  if (!('fd' in src.ref)) throw new Error('readParallel needs a file descriptor source');
  const fd = src.ref.fd;
  const threads = Math.max(1, Math.min(maxThreads, os.availableParallelism(), Math.floor((count * elementBytes) / perThread)));
  const starts = Array.from({ length: threads + 1 }, (_, k) => Math.floor((k * count) / threads));
  const workers: Worker[] = [];
  const results = starts.slice(0, -1).map((e0, k) => {
    const e1 = starts[k + 1];
    const job: RangeJob = {
      fd, position: offset + e0 * elementBytes, bytes: (e1 - e0) * elementBytes, buffer: dst.buffer as SharedArrayBuffer,
      byteOffset: dst.byteOffset + (at + e0) * elementBytes, elementBytes, chunk: Math.max(4, Math.min(CHUNK_BYTES, perThread) & ~3), top,
    };
    const w = new Worker(new URL('./read-worker.js', import.meta.url), { workerData: job, execArgv: [] });
    workers.push(w);
    return new Promise<{ firstBad: number; top: number }>((resolve, reject) => {
      w.on('message', (m: { type: string; bytes?: number; firstBad?: number; top?: number; message?: string }) => {
        if (m.bytes) src.counted!(m.bytes);
        if (m.type === 'done') resolve({ firstBad: m.firstBad! < 0 ? -1 : e0 + m.firstBad!, top: m.top ?? 0 });
        else if (m.type === 'error') reject(badInput(src, m.message!));
      });
      w.on('error', reject);
      w.on('exit', (code) => reject(new Error(`reader thread exited with code ${code}`))); // after 'done': no effect
    });
  });
  const stop = () => workers.forEach((w) => void w.terminate());
  interruptSignal.addEventListener('abort', stop);
  try {
    const got = await Promise.all(results);
    if (interruptSignal.aborted) throw new InterruptedError();
    // Ranges in order: the first found is the first overall.
    return { firstBad: got.find((g) => g.firstBad >= 0)?.firstBad ?? -1, top: got.reduce((t, g) => Math.max(t, g.top), 0) };
  } catch (e) {
    if (interruptSignal.aborted) throw new InterruptedError();
    throw e;
  } finally {
    interruptSignal.removeEventListener('abort', stop);
    stop();
  }
}
