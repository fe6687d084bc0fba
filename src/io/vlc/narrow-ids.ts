// A large file's anchor ids narrowed to 16 bits and checksummed on worker threads (writeVlc):
// 100M ids are 400 MB read and 200 MB written, which on the main thread took most of a 100M run's
// write phase. Each thread takes a contiguous range: it checks and narrows it, then checksums its
// own bytes; the range checksums are joined in order (crc32cCombine). The bytes are the ones
// encodeVlcParts' own loop makes.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { crc32cCombine } from './crc32c.js';
import { hugeSharedBuffer } from '../../vectors/huge-pages.js';

/** Below this many ids the main thread's loop is quicker than starting threads. */
export const NARROW_ON_THREADS_MIN = 1 << 24;
const MAX_THREADS = 8;

/** out[i] = a[i], each checked to be an id below m: the first index that is not (out then partly written), or −1. */
export function narrowInto(a: ArrayLike<number>, out: Uint8Array | Uint16Array | Uint32Array, m: number): number {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (!(v >= 0 && v < m)) return i;
    out[i] = v;
  }
  return -1;
}

/** The error for id i, v, not below m. */
export const outsideError = (i: number, v: number, m: number) => new Error(`encodeVlc: assignment ${i} is ${v}, outside 0..${m - 1}`);

/** What narrow-worker.js is handed. */
export interface NarrowJob {
  src: SharedArrayBuffer;
  srcOffset: number;
  dst: SharedArrayBuffer;
  i0: number;
  i1: number;
  m: number;
}

/**
 * `a` (ids below m ≤ 65,536, in shared memory) as 16-bit ids and their CRC32C; undefined where it
 * does not apply (small, not shared, or no thread could start): the caller narrows them itself.
 * Throws on an id of m or more, naming the first.
 */
export async function narrowIdsOnThreads(a: Uint32Array, m: number): Promise<{ ids: Uint16Array; crc: number } | undefined> {
  const n = a.length;
  if (n < NARROW_ON_THREADS_MIN || !(a.buffer instanceof SharedArrayBuffer) || m > 65536) return undefined;
  const threads = Math.max(1, Math.min(MAX_THREADS, availableParallelism() - 1));
  const dst = hugeSharedBuffer(n * 2);
  const cuts = Array.from({ length: threads + 1 }, (_, k) => Math.floor((k * n) / threads));
  let results: Array<{ bad: number; crc: number }>;
  try {
    results = await Promise.all(cuts.slice(0, -1).map((i0, k) => run({ src: a.buffer as SharedArrayBuffer, srcOffset: a.byteOffset, dst, i0, i1: cuts[k + 1], m })));
  } catch {
    return undefined; // a thread could not run: the main thread's loop
  }
  let crc = 0;
  for (let k = 0; k < threads; k++) {
    const bad = results[k].bad;
    if (bad >= 0) throw outsideError(bad, a[bad], m);
    crc = crc32cCombine(crc, results[k].crc, (cuts[k + 1] - cuts[k]) * 2);
  }
  return { ids: new Uint16Array(dst), crc };
}

function run(job: NarrowJob): Promise<{ bad: number; crc: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./narrow-worker.js', import.meta.url), { workerData: job, execArgv: [] });
    w.once('message', (r: { bad: number; crc: number }) => resolve(r));
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`narrowing thread exited (code ${code}) without an answer`))); // after the message: no effect
  });
}
