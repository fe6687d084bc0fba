// The training sample drawn on a thread of its own (api/train.ts trainingSampleOffThread):
// trainingSample's rows, handed back without a copy.
import { parentPort, workerData } from 'node:worker_threads';
import { trainingSample } from './train.js';

const { seed, n, s } = workerData as { seed: number; n: number; s: number };
const rows = trainingSample(seed, n, s);
parentPort!.postMessage(rows, [rows.buffer as ArrayBuffer]);
