// The training sample drawn on a thread of its own (api/sample-worker.ts), so that a large draw
// (16.8M of 100M rows: most of a second) runs while the engine over every row opens on this one.
// The same rows as trainingSample on this thread.
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import { trainingSample } from './train.js';

/** Below this many sampled rows the draw stays on this thread (a thread's start costs more than it saves). */
export const OFF_THREAD_MIN = 1 << 22;

/** trainingSample(seed, n, s), drawn on a thread of its own from `min` rows; falls back to this thread where no thread can be had. */
export function trainingSampleOffThread(seed: number, n: number, s: number, min = OFF_THREAD_MIN): Promise<Int32Array> {
  const here = () => trainingSample(seed, n, s);
  if (s < min) return Promise.resolve().then(here);
  const t0 = performance.now();
  return new Promise<Int32Array>((resolve) => {
    let w: Worker;
    try {
      w = new Worker(new URL('./sample-worker.js', import.meta.url), { workerData: { seed, n, s }, execArgv: [] });
    } catch {
      return resolve(here());
    }
    let done = false;
    const fallback = () => void (done || ((done = true), resolve(here())));
    w.on('message', ({ rows, ms }: { rows: Int32Array; ms: number }) => {
      if (done) return;
      done = true;
      log().debug(`training sample: ${s} of ${n} rows drawn on a thread in ${ms.toFixed(0)} ms, here ${(performance.now() - t0).toFixed(0)} ms after it was asked for`);
      resolve(rows);
    });
    w.on('error', fallback);
    w.on('exit', fallback); // after the message: no effect
  });
}
