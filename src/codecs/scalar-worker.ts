// A worker thread of the scalar residual encoder (scalar.ts encodeScalarParallel): runs the blocks
// it is given of one phase (ranges, or codes) over shared memory, and answers with its blocks' errors.
import { parentPort } from 'node:worker_threads';
import type { Rows } from '../io/dataset.js';
import { blockCodes, blockCrc, blockRanges, type RowsInput } from './scalar-rows.js';

export interface ScalarJob {
  /** ranges; codes (and their blocks' checksums). */
  phase: 'ranges' | 'codes';
  /** The vectors' store and shape (a typed array over more than 4 GiB would arrive truncated). */
  x: Rows;
  anchors: SharedArrayBuffer;
  assign: SharedArrayBuffer;
  n: number;
  d: number;
  blocks: number[];
  /** ranges: blocks × d f64 each. */
  maxAbs?: SharedArrayBuffer;
  sumSq?: SharedArrayBuffer;
  /** codes: */
  scales?: Float32Array;
  levels?: number;
  codes?: SharedArrayBuffer;
}

parentPort?.on('message', (job: ScalarJob) => {
  try {
    const inp: RowsInput = {
      x: job.x,
      d: job.d,
      anchors: new Float32Array(job.anchors),
      assign: new Uint32Array(job.assign),
    };
    const errs: number[] = [];
    const crcs: number[] = [];
    if (job.phase === 'ranges') {
      const maxAbs = new Float64Array(job.maxAbs!), sumSq = new Float64Array(job.sumSq!);
      for (const b of job.blocks) blockRanges(inp, job.n, b, maxAbs, sumSq);
    } else {
      const codes = new Int8Array(job.codes!);
      for (const b of job.blocks) {
        errs.push(blockCodes(inp, job.n, b, job.scales!, job.levels!, codes));
        crcs.push(blockCrc(codes, job.n, job.d, b)); // while the block's codes are in cache
      }
    }
    parentPort!.postMessage({ ok: true, errs, crcs });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
