// The training sample drawn on a thread of its own (api/sample-draw.ts): trainingSample's rows,
// handed back without a copy, with the milliseconds the draw took.
import { parentPort, workerData } from 'node:worker_threads';
import { trainingSample } from './train.js';

const { seed, n, s } = workerData as { seed: number; n: number; s: number };
const t0 = performance.now();
const rows = trainingSample(seed, n, s);
parentPort!.postMessage({ rows, ms: performance.now() - t0 }, [rows.buffer as ArrayBuffer]);
