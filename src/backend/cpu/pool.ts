// A fixed set of worker threads, one request at a time per worker, answered in order; and the
// pool the k-NN and the pq search share, kept between calls (cpuWorkers).
import { Worker } from 'node:worker_threads';
import type { WorkerRequest } from './shared.js';

interface Pending {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class WorkerPool {
  private workers: Worker[] = [];
  private queues: Pending[][] = [];
  private closed = false;
  private engines = 0;

  constructor(readonly size: number) {
    for (let w = 0; w < size; w++) {
      // The parent's flags (e.g. --input-type of `node -e` / stdin scripts) can be invalid for a worker file.
      const worker = new Worker(new URL('./worker.js', import.meta.url), { execArgv: [] });
      const queue: Pending[] = [];
      worker.on('message', (r: { ok: boolean; error?: string }) => {
        const p = queue.shift();
        if (!p) return;
        if (r.ok) p.resolve();
        else p.reject(new Error(`cpu worker: ${r.error}`));
      });
      worker.on('error', (e) => {
        for (const p of queue.splice(0)) p.reject(e);
      });
      worker.on('exit', (code) => {
        if (code !== 0 && !this.closed) for (const p of queue.splice(0)) p.reject(new Error(`cpu worker exited with code ${code}`));
      });
      this.workers.push(worker);
      this.queues.push(queue);
    }
  }

  /** A new engine id: every engine served by this pool keeps its own state on the workers. */
  nextEngineId(): number {
    return this.engines++;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  call(w: number, msg: WorkerRequest): Promise<void> {
    if (this.closed) return Promise.reject(new Error('cpu engine already disposed'));
    return new Promise<void>((resolve, reject) => {
      this.queues[w].push({ resolve, reject });
      this.workers[w].postMessage(msg);
    });
  }

  /** The same kind of request to every worker, built per worker index. */
  all(make: (w: number) => WorkerRequest | undefined): Promise<void[]> {
    const calls: Promise<void>[] = [];
    for (let w = 0; w < this.size; w++) {
      const msg = make(w);
      if (msg) calls.push(this.call(w, msg));
    }
    return Promise.all(calls);
  }

  /**
   * Whether the workers keep the process alive: a pool kept between calls (knn.ts) lets go of it
   * while idle, so a command ends when its work does.
   */
  keepAlive(on: boolean): void {
    for (const w of this.workers) {
      if (on) w.ref();
      else w.unref();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Anything still waiting (dispose() during a pass, e.g. on Ctrl-C) fails instead of hanging.
    for (const q of this.queues) for (const p of q.splice(0)) p.reject(new Error('cpu engine disposed during a pass'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * Workers started once and kept (idle, they do not hold the process): a command runs several
 * k-NN or index searches in a row (compress's quality figures, eval, a benchmark), and starting
 * workers costs far more than a small call.
 */
export class KeptPool {
  private pool: WorkerPool | undefined;
  private busy = 0;

  /** Start `workers` now, in the background (a later call finds them ready). */
  prewarm(workers: number): void {
    this.poolFor(workers).keepAlive(this.busy > 0);
  }

  /**
   * One request to each of `workers` workers, made by `make(w, used)`: `used` is how many take
   * part (fewer than asked while another call holds a smaller pool).
   */
  async all(workers: number, make: (w: number, used: number) => WorkerRequest): Promise<void> {
    const pool = this.poolFor(workers);
    const used = Math.min(pool.size, workers);
    this.busy++;
    pool.keepAlive(true);
    try {
      await pool.all((w) => (w < used ? make(w, used) : undefined));
    } finally {
      if (--this.busy === 0) pool.keepAlive(false);
    }
  }

  /** The pool, grown to `workers` when no call is using it (a call meanwhile makes do with its size). */
  private poolFor(workers: number): WorkerPool {
    const pool = this.pool;
    if (pool && !pool.isClosed && (pool.size >= workers || this.busy > 0)) return pool;
    void pool?.close();
    this.pool = new WorkerPool(Math.max(workers, pool?.size ?? 0));
    return this.pool;
  }
}

/** The workers of the CPU's k-NN (knn.ts) and pq search (pq-search.ts). */
export const cpuWorkers = new KeptPool();
