// A worker thread of narrow-ids.ts: ids i0..i1 checked against m and stored as 16 bits, then the
// CRC32C of the bytes it wrote; answers { bad: first id ≥ m or −1, crc }.
import { parentPort, workerData } from 'node:worker_threads';
import { crc32c } from './crc32c.js';
import type { NarrowJob } from './narrow-ids.js';

const { src, srcOffset, dst, i0, i1, m } = workerData as NarrowJob;
const a = new Uint32Array(src, srcOffset + i0 * 4, i1 - i0);
const out = new Uint16Array(dst, i0 * 2, i1 - i0);
let bad = -1;
for (let i = 0; i < a.length; i++) {
  const v = a[i];
  if (v >= m) {
    bad = i0 + i;
    break;
  }
  out[i] = v;
}
parentPort!.postMessage({ bad, crc: bad >= 0 ? 0 : crc32c(new Uint8Array(dst, i0 * 2, (i1 - i0) * 2)) });
