// A worker thread of io/vlc/checksums.ts: the CRC32C of each slice it is given of a payload in
// shared memory, or in a file it reads itself, one answer per slice (so the reader's progress moves).
import * as fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { CrcJob } from './checksums.js';
import { crc32c } from './crc32c.js';

parentPort?.once('message', (job: CrcJob) => {
  const fd = job.path === undefined ? undefined : fs.openSync(job.path, 'r');
  const piece = fd === undefined ? undefined : Buffer.allocUnsafe(job.slice);
  try {
    for (let i = job.s0; i < job.s1; i++) {
      const from = job.start + i * job.slice;
      const len = Math.min(job.slice, job.size - i * job.slice);
      parentPort?.postMessage({ i, crc: crc32c(fd === undefined ? new Uint8Array(job.buffer!, job.byteOffset! + from, len) : readFully(fd, piece!, len, from)) });
    }
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
});

/** `len` bytes of the file at `at` (a short read: the file changed under us, reported as such). */
function readFully(fd: number, into: Buffer, len: number, at: number): Uint8Array {
  for (let got = 0; got < len; ) {
    const n = fs.readSync(fd, into, got, len - got, at + got);
    if (n === 0) throw new Error(`the file ended at byte ${at + got} while it was checked (was it changed?)`);
    got += n;
  }
  return into.subarray(0, len);
}
