// A worker thread of the bits encoder's step table (bits-steps.ts): claims dimensions until none is
// left. It answers through the job's shared counters only.
import { parentPort } from 'node:worker_threads';
import { claimDimensions, type StepsJob } from './bits-steps.js';

parentPort?.on('message', (job: StepsJob) => claimDimensions(job));
