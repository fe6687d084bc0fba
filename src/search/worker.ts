// A search worker thread (parallel.ts), kept between searches: each request is one range of
// queries of a pq-coded index over shared arrays, searched by pq-search.ts into the shared
// output; the reply ({ ok, error? }, as backend/cpu/pool.ts expects) says it is done.
import { parentPort } from 'node:worker_threads';
import { PqSearcher } from './pq-search.js';
import type { WorkerTask } from './parallel.js';

parentPort!.on('message', (t: WorkerTask) => {
  try {
    new PqSearcher(t.index).search(t.queries, t.q0, t.q1, t.options, t.out);
    parentPort!.postMessage({ ok: true });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
