// A worker thread of dims-on-threads.ts: makes the task's per-dimension work as the caller made its
// own, then claims dimensions until none is left. It answers through the job's shared counters only.
import { parentPort } from 'node:worker_threads';
import { claimDimensions, type DimWork, type DimsTask } from './dims-on-threads.js';
import { stepsWork, type StepsTask } from './bits-steps.js';
import { pointWork, type PointTask } from './ec/steps.js';
import { int4RangesWork, type Int4RangesTask } from './scalar.js';

/** Each task kind's maker of its DimWork. */
const makers: Record<string, (task: never) => DimWork> = {
  'bits-steps': (t: StepsTask) => stepsWork(t),
  'ec-point': (t: PointTask) => pointWork(t),
  'int4-range': (t: Int4RangesTask) => int4RangesWork(t),
};

parentPort?.on('message', (job: { task: DimsTask; d: number; ctrl: SharedArrayBuffer }) => {
  const make = makers[job.task.kind];
  if (make) claimDimensions(job, make(job.task as never));
});
