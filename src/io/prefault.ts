// Shared memory whose pages are already mapped, for a large array a later step will fill at once.
// A fresh SharedArrayBuffer's pages are mapped (and zeroed by the kernel) on first touch, which
// costs about as much as a copy into them: 128 MB took 106 ms to fill fresh and 19 ms once touched
// on this repository's development machine. A GPU run knows early how large its residual codes will
// be; a worker thread touches their pages while the GPU trains, and the encoder takes them.
import { Worker } from 'node:worker_threads';

/** Below this, the first-touch cost is not worth a thread. */
const MIN_BYTES = 16 << 20;

let ready: SharedArrayBuffer | undefined;

/** Start touching a shared buffer of `bytes` in the background (it replaces any buffer not taken). */
export function prefaultShared(bytes: number): void {
  ready = undefined;
  if (!(bytes >= MIN_BYTES)) return;
  const sab = new SharedArrayBuffer(bytes);
  try {
    const w = new Worker(
      // A view at a time: one typed array cannot cover a buffer over 4 GiB.
      "const { workerData: b } = require('node:worker_threads'); for (let at = 0; at < b.byteLength; at += 1 << 30) { const u = new Uint8Array(b, at, Math.min(1 << 30, b.byteLength - at)); for (let i = 0; i < u.length; i += 4096) u[i] = 0; }",
      { eval: true, workerData: sab },
    );
    w.unref(); // an optimization: it never holds the process
    w.on('error', () => undefined);
  } catch {
    return; // no thread: the buffer would fault on first use anyway
  }
  ready = sab;
}

/** The prefaulted buffer when it has exactly `bytes` (given once), else a fresh one. */
export function takeShared(bytes: number): SharedArrayBuffer {
  const sab = ready;
  ready = undefined;
  return sab !== undefined && sab.byteLength === bytes ? sab : new SharedArrayBuffer(bytes);
}
