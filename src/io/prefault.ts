// Shared memory whose pages are already mapped, for a large array a later step will fill at once.
// A fresh SharedArrayBuffer's pages are mapped (and zeroed by the kernel) on first touch, which
// costs about as much as a copy into them (on 4 KiB pages; the buffers here ask for 2 MiB ones, vectors/huge-pages.ts): 128 MB took 106 ms to fill fresh and 19 ms once touched
// on this repository's development machine, and 4.5 GB of bits codes took 3.2 s to download into
// fresh memory on 4 x H100 (bench/results/2026-11-28-h100x4-r3i.json). A GPU run knows early how
// large its residual codes will be; worker threads touch their pages while the GPU works, and the
// encoder takes them — at once if it likes: a touch is an atomic add of zero, which never changes
// a byte, so the encoder may write into pages the workers have not reached yet.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { hugeSharedBuffer } from '../vectors/huge-pages.js';

/** Below this, the first-touch cost is not worth a thread. */
const MIN_BYTES = 16 << 20;
/** Touching threads at most (the kernel's page zeroing scales to a few). */
const MAX_THREADS = 4;

let ready: SharedArrayBuffer | undefined;

/** Worker i of `of` touches its share of the buffer's 4 KiB pages, a 1 GiB view at a time (one typed array cannot cover more than 4 GiB). */
const TOUCH = `const { workerData: { b, i, of } } = require('node:worker_threads');
const pages = Math.ceil(b.byteLength / 4096), p0 = Math.floor((i * pages) / of), p1 = Math.floor(((i + 1) * pages) / of);
for (let p = p0; p < p1; ) {
  const at = p * 4096, len = Math.min(1 << 30, p1 * 4096 - at, b.byteLength - at) & ~3;
  if (len <= 0) break;
  const v = new Int32Array(b, at, len / 4);
  for (let k = 0; k < v.length; k += 1024) Atomics.add(v, k, 0);
  p += Math.ceil(len / 4096);
}`;

/** Start touching a shared buffer of `bytes` in the background (it replaces any buffer not taken). */
export function prefaultShared(bytes: number): void {
  ready = undefined;
  if (!(bytes >= MIN_BYTES)) return;
  const sab = hugeSharedBuffer(bytes); // 2 MiB pages: a fault each 2 MiB instead of each 4 KiB
  if (touched(sab)) ready = sab;
}

/** `sab`'s pages touched by worker threads in the background; false when no thread can be had. */
function touched(sab: SharedArrayBuffer): boolean {
  const of = Math.max(1, Math.min(MAX_THREADS, availableParallelism() - 1));
  try {
    for (let i = 0; i < of; i++) {
      const w = new Worker(TOUCH, { eval: true, workerData: { b: sab, i, of } });
      w.unref(); // an optimization: it never holds the process
      w.on('error', () => undefined);
    }
  } catch {
    return false; // no thread: the buffer would fault on first use anyway
  }
  return true;
}

/** prefaultAhead's buffers: their size, the takes still to come, how many to keep touched, those ready. */
let ahead: { bytes: number; left: number; depth: number; queue: SharedArrayBuffer[] } | undefined;

/**
 * Buffers of one size touched ahead of the takers that come one after another (a streamed
 * encode's blocks of codes, api/compress-stream.ts): `depth` at a time, `count` in all. The
 * returned function stops it, letting go of the buffers not taken.
 */
export function prefaultAhead(bytes: number, count: number, depth: number): () => void {
  const mine = bytes >= MIN_BYTES && count > 0 && depth > 0 ? { bytes, left: count, depth, queue: [] } : undefined;
  ahead = mine;
  topUp();
  return () => {
    if (ahead === mine) ahead = undefined;
  };
}

/** Tests: how many buffers are touched ahead now, and how many takes are still to come. */
export function aheadForTests(): { queued: number; left: number } | undefined {
  return ahead && { queued: ahead.queue.length, left: ahead.left };
}

function topUp(): void {
  while (ahead && ahead.queue.length < Math.min(ahead.depth, ahead.left)) {
    const sab = hugeSharedBuffer(ahead.bytes);
    if (!touched(sab)) {
      ahead = undefined;
      return;
    }
    ahead.queue.push(sab);
  }
}

/** A buffer of `bytes` touched ahead (prefaultAhead's next, or prefaultShared's when it has exactly `bytes`: given once), else a fresh one. */
export function takeShared(bytes: number): SharedArrayBuffer {
  if (ahead && ahead.bytes === bytes && ahead.queue.length > 0) {
    const sab = ahead.queue.shift()!;
    ahead.left--;
    topUp();
    return sab;
  }
  const sab = ready;
  ready = undefined;
  return sab !== undefined && sab.byteLength === bytes ? sab : hugeSharedBuffer(bytes);
}
