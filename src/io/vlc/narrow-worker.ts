// A worker thread of narrow-ids.ts: ids i0..i1 checked against m and stored as 16 bits
// (narrowInto), then the CRC32C of the bytes it wrote; answers { bad: first id ≥ m or −1, crc }.
import { parentPort, workerData } from 'node:worker_threads';
import { crc32c } from './crc32c.js';
import { narrowInto, type NarrowJob } from './narrow-ids.js';

const { src, srcOffset, dst, i0, i1, m } = workerData as NarrowJob;
const at = narrowInto(new Uint32Array(src, srcOffset + i0 * 4, i1 - i0), new Uint16Array(dst, i0 * 2, i1 - i0), m);
const bad = at >= 0 ? i0 + at : -1;
parentPort!.postMessage({ bad, crc: bad >= 0 ? 0 : crc32c(new Uint8Array(dst, i0 * 2, (i1 - i0) * 2)) });
