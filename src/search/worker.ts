// A search worker thread (parallel.ts): scores one range of queries of a pq-coded index over
// shared arrays and writes their results into the shared output; replies with the queries that
// ran short of k vectors among their ranked anchors (the caller ranks those against all anchors).
import { parentPort, workerData } from 'node:worker_threads';
import { pqAdcScorer } from './pq-adc.js';
import { scanQueries } from './scan.js';
import type { WorkerTask } from './parallel.js';

const t = workerData as WorkerTask;
const index = { ...t.index, anchors: new Float32Array(0), scorer: pqAdcScorer(t.index.pq!) };
const list = Array.from({ length: t.q1 - t.q0 }, (_, r) => t.q0 + r);
const rows = (a: Float32Array | Int32Array, width: number) => a.subarray(t.q0 * width, t.q1 * width);
const ranked = { ids: rows(t.ranked.ids, t.ranked.width) as Int32Array, dists: rows(t.ranked.dists, t.ranked.width) as Float32Array, width: t.ranked.width };
const short = scanQueries(index, rows(t.queries, t.index.d) as Float32Array, ranked, t.options, t.out, list, false);
parentPort!.postMessage(short);
