// The training sample drawn on a thread of its own (api/train.ts trainingSampleOffThread): the same
// rows as trainingSample, handed back without a copy.
import { parentPort, workerData } from 'node:worker_threads';
import { Rng } from '../anneal/random.js';
import { sampleRows } from '../anneal/sample.js';

const { seed, n, s } = workerData as { seed: number; n: number; s: number };
const rows = sampleRows(new Rng(seed), n, s);
parentPort!.postMessage(rows, [rows.buffer as ArrayBuffer]);
