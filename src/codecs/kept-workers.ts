// Worker threads started once per process and kept for the next job, idle and unref'd (they do not
// hold the process): the residual encoders' (scalar.ts) and the ec decoder's (ec/decode-threads.ts).
import { Worker } from 'node:worker_threads';

/** `kept` grown to at least t workers running `file`; returned. */
export function keepWorkers(kept: Worker[], file: URL, t: number): Worker[] {
  while (kept.length < t) {
    // The parent's flags (e.g. --input-type of `node -e`) can be invalid for a worker file.
    const w = new Worker(file, { execArgv: [] });
    w.unref();
    // A worker that dies (it never should) is dropped, so the next job starts a fresh one. Its error
    // outside a job (the ec decoder's jobs have no listener) must not end the process: the other
    // threads take its work; a job that listens still hears it.
    w.on('error', () => {});
    w.once('exit', () => kept.splice(kept.indexOf(w) >>> 0, 1));
    kept.push(w);
  }
  return kept;
}
