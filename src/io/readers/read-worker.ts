// One worker of parallel-read.ts: reads its byte range of the file straight into the shared
// destination and scans each chunk for suspect values while it is still in cache (validate.ts),
// reporting bytes as it goes and, at the end, the first suspect element of its range.
import * as fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { firstSuspect } from './validate.js';
import type { RangeJob } from './parallel-read.js';

const job = workerData as RangeJob;
const port = parentPort!;
/** Bytes between progress messages. */
const REPORT_BYTES = 64 << 20;

try {
  let firstBad = -1;
  let top = 0;
  let reported = 0;
  for (let done = 0; done < job.bytes; ) {
    const len = Math.min(job.chunk, job.bytes - done);
    const dst = new Uint8Array(job.buffer, job.byteOffset + done, len);
    for (let got = 0; got < len; ) {
      const r = fs.readSync(job.fd, dst, got, len - got, job.position + done + got);
      if (r === 0) throw new Error(`truncated: needed ${job.position + done + len} bytes, the input ended at ${job.position + done + got}`);
      got += r;
    }
    if (firstBad < 0) {
      const view = job.elementBytes === 4 ? new Float32Array(job.buffer, job.byteOffset + done, len / 4) : new Uint16Array(job.buffer, job.byteOffset + done, len / 2);
      const bad = firstSuspect(view, 0, view.length);
      if (bad >= 0) firstBad = done / job.elementBytes + bad;
    }
    if (job.top) top = Math.max(top, topBits(job.buffer, job.byteOffset + done, len, job.elementBytes));
    done += len;
    if (done - reported >= REPORT_BYTES) {
      port.postMessage({ type: 'bytes', bytes: done - reported });
      reported = done;
    }
  }
  port.postMessage({ type: 'done', bytes: job.bytes - reported, firstBad, top });
} catch (e) {
  port.postMessage({ type: 'error', message: (e as Error).message });
}

/** The largest bit pattern with the sign cleared among `len` bytes of f16 or f32 values (vectors/scale.ts maxAbsOf's integer max). */
function topBits(buffer: SharedArrayBuffer, byteOffset: number, len: number, elementBytes: 2 | 4): number {
  let top = 0;
  if (elementBytes === 2) {
    const v = new Uint16Array(buffer, byteOffset, len / 2);
    for (let i = 0; i < v.length; i++) if ((v[i] & 0x7fff) > top) top = v[i] & 0x7fff;
  } else {
    const v = new Int32Array(buffer, byteOffset, len / 4);
    for (let i = 0; i < v.length; i++) if ((v[i] & 0x7fffffff) > top) top = v[i] & 0x7fffffff;
  }
  return top;
}
