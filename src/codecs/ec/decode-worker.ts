// A worker thread of the 'ec' section reader (decode-threads.ts): builds the section's decoder
// tables and claims blocks until none is left. It answers through the job's shared counters only.
import { parentPort } from 'node:worker_threads';
import { claimBlocks, type DecodeJob } from './decode-threads.js';
import { BlockDecoder } from './fast-decode.js';
import { RansModels } from './rans.js';

parentPort?.on('message', (job: DecodeJob) => {
  // The models were checked by the reader; a failure here leaves the blocks to the other threads.
  let dec: BlockDecoder;
  try {
    dec = new BlockDecoder({ lo: job.lo, size: job.size }, new RansModels(job.scaleBits, job.start, job.freq), job.wasm);
  } catch {
    return;
  }
  claimBlocks(job, dec);
});
