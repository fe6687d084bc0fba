// A worker thread of the residual encoders (scalar.ts encodeScalar, bits-train.ts encodeBits,
// ec/encode.ts encodeEc): runs the blocks it is given of one phase (the scalar codec's ranges or
// codes, the bits codec's codes, a pass of the ec encoder: ec/encode-blocks.ts) over shared memory,
// and answers with its blocks' errors (ec: its pass's answer, their buffers moved, not copied).
import { parentPort } from 'node:worker_threads';
import type { Rows } from '../vectors/dataset.js';
import { codesOf, type CodesHandle } from '../vectors/codes.js';
import { blockBits, type BitsPlan } from './bits-rows.js';
import { blockCodes, blockCrc, blockRanges, type RowsInput } from './scalar-rows.js';
import { passRun, type EcJob } from './ec/encode-blocks.js';
import { planRotated } from './ec/encode-rotated.js';

export interface ScalarJob {
  /** ranges; codes (and their blocks' checksums); bits: the bits codec's codes; ec: a pass of the ec encoder. */
  phase: 'ranges' | 'codes' | 'bits' | 'ec';
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
  /** codes and bits: where the codes go (n × d int8, n × R bytes): their buffer and offsets, the views made here. */
  codes?: CodesHandle;
  /** bits: */
  bitsPlan?: BitsPlan;
  /** ec: the pass (over the ec section's blocks, not BLOCK_ROWS'), or the principal directions' plan. */
  ec?: EcJob;
}

parentPort?.on('message', (job: ScalarJob) => {
  try {
    const inp: RowsInput = {
      x: job.x,
      d: job.d,
      anchors: new Float32Array(job.anchors),
      assign: new Uint32Array(job.assign),
    };
    if (job.ec?.pass === 'plan') {
      const { sample, target, blockRows, scale } = job.ec;
      parentPort!.postMessage({ ok: true, plan: planRotated(sample, job.n, job.d, target, blockRows, scale) });
      return;
    }
    if (job.phase === 'ec') {
      const run = passRun(inp, job.n, job.ec!);
      for (const b of job.blocks) run.block(b);
      const { answer, transfer } = run.answer();
      parentPort!.postMessage({ ok: true, ...answer }, transfer);
      return;
    }
    const errs: number[] = [];
    const crcs: number[] = [];
    if (job.phase === 'ranges') {
      const maxAbs = new Float64Array(job.maxAbs!), sumSq = new Float64Array(job.sumSq!);
      for (const b of job.blocks) blockRanges(inp, job.n, b, maxAbs, sumSq);
    } else if (job.phase === 'bits') {
      const codes = codesOf<Uint8Array>(job.codes!);
      for (const b of job.blocks) errs.push(blockBits(inp, job.n, b, job.bitsPlan!, codes));
    } else {
      const codes = codesOf<Int8Array>(job.codes!);
      for (const b of job.blocks) {
        errs.push(blockCodes(inp, job.n, b, job.scales!, job.levels!, codes));
        crcs.push(blockCrc(codes, job.n, b)); // while the block's codes are in cache
      }
    }
    parentPort!.postMessage({ ok: true, errs, crcs });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
