// Runs a third-party decoder (apache-arrow, hyparquet, h5wasm) off the main thread, for guard.ts. The
// result's data lives in a SharedArrayBuffer, so posting it back copies nothing.
import { parentPort, workerData } from 'node:worker_threads';
import { sourceFromRef } from './source.js';
import type { GuardedJob } from './guard.js';

const job = workerData as GuardedJob;
const port = parentPort!;
const beat = () => port.postMessage({ type: 'beat' });
const src = sourceFromRef(job.name, job.ref);
try {
  // Load only the library this input needs (import times: bench/results/host_costs.json).
  const read =
    job.kind === 'arrow' ? (await import('./arrow.js')).readArrow
    : job.kind === 'parquet' ? (await import('./parquet.js')).readParquet
    : (await import('./hdf5.js')).readHdf5;
  const result = await read(src, job.column, job.dropInvalid, beat);
  port.postMessage({ type: 'done', result });
} catch (e) {
  port.postMessage({ type: 'error', name: (e as Error).name, message: (e as Error).message });
} finally {
  src.close();
}
