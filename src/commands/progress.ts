// A one-line progress display for `compress`, redrawn in place on stderr — only when stderr is a
// terminal (never in pipes, logs or tests) and not with -q. Fed by anneal()'s hooks.onIter.
import type { IterRecord } from '../anneal/types.js';

export interface Progress {
  onIter: (rec: IterRecord, maxIters: number) => void;
  /** Erase the line (call before printing anything else, and at the end). */
  done: () => void;
}

const REDRAW_MS = 100; // at most ten redraws a second: fast iterations should not flood a slow tty

export function createProgress(opts: { enabled: boolean; stream?: NodeJS.WriteStream }): Progress {
  const stream = opts.stream ?? process.stderr;
  if (!opts.enabled) return { onIter: () => {}, done: () => {} };
  const started = performance.now();
  let lastDraw = 0;
  let drawn = false;
  return {
    onIter(rec, maxIters) {
      const now = performance.now();
      if (now - lastDraw < REDRAW_MS && rec.iter + 1 < maxIters) return;
      lastDraw = now;
      drawn = true;
      stream.write(`\r\x1b[K${progressLine(rec, maxIters, (now - started) / 1000)}`);
    },
    done() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}

/**
 * "iter 12/100  T 0.0312  energy 0.28134  changed 41  ETA 3s". The ETA assumes the run goes to
 * maxIters at the pace so far; convergence usually ends it sooner.
 */
export function progressLine(rec: IterRecord, maxIters: number, elapsedSeconds: number): string {
  const done = rec.iter + 1; // IterRecord.iter counts from 0
  const eta = Math.max(0, ((maxIters - done) * elapsedSeconds) / done);
  return [
    `iter ${done}/${maxIters}`,
    `T ${rec.temperature.toPrecision(3)}`,
    `energy ${rec.energy.toPrecision(5)}`,
    `changed ${rec.changed}`,
    `ETA ${formatDuration(eta)}`,
  ].join('  ');
}

export function formatDuration(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
