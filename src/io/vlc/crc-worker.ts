// A worker thread of io/vlc/checksums.ts: the CRC32C of each slice it is given of a payload in
// shared memory, one answer per slice (so the reader's progress moves).
import { parentPort } from 'node:worker_threads';
import type { CrcJob } from './checksums.js';
import { crc32c } from './crc32c.js';

parentPort?.once('message', (job: CrcJob) => {
  for (let i = job.s0; i < job.s1; i++) {
    const from = job.start + i * job.slice;
    const len = Math.min(job.slice, job.size - i * job.slice);
    parentPort?.postMessage({ i, crc: crc32c(new Uint8Array(job.buffer, job.byteOffset + from, len)) });
  }
});
