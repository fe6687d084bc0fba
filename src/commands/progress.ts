// The one progress display of every command, redrawn in place on stderr — only when stderr is a
// terminal (never in pipes, logs or tests, never on stdout, so never in --json output), and not
// with -q; with -v each step is logged as a debug line when it starts instead. Every step that can
// take more than a second reports through it: reading (bytes of the total, rate), training
// (iterations), the final pass, choosing the codec (the one being measured, of how many expected),
// residual encoding, writing, and eval's and search's queries (done of total, rate, ETA).
//
// A step stays invisible for its first REVEAL_MS, so quick steps do not flicker; it is redrawn at
// most every REDRAW_MS, and a timer keeps its elapsed time moving while no update comes (the final
// assignment pass reports none). The ETA is what is left at the rate measured so far, shown once
// that rate has been measured for a moment. Training's ETA assumes the run goes to --iters, which
// convergence usually cuts short: it is an upper bound, shown as "≤".
import type { IterRecord } from '../api/options.js';
import { log, type Reporter, type ReportStep } from '../log.js';

export interface Progress extends Reporter {
  /** Training: the iteration line (its own step, opened by the first iteration). */
  onIter: (rec: IterRecord, maxIters: number) => void;
  /** End any open step and erase the line (call before printing anything else, and at the end). */
  done: () => void;
}

/** Quiet for this long, so steps shorter than a second or so never show. */
const REVEAL_MS = 500;
/** At most ten redraws a second: fast updates should not flood a slow terminal. */
const REDRAW_MS = 100;
/** Elapsed time and ETA move at least this often while a step waits for updates. */
const TICK_MS = 250;
/** Rate (and ETA) shown once measured over this long. */
const RATE_MS = 300;

/**
 * The display for a command run with these flags: on when stderr is a terminal, off with -q; with
 * -v each step is one debug line as it starts instead (a log, in order, where a redrawn line
 * would interleave).
 */
export function progressFor(o: { quiet?: boolean; verbose?: boolean }): Progress {
  if (o.verbose && !o.quiet) return stepLog();
  return createProgress({ enabled: process.stderr.isTTY === true && !o.quiet });
}

function stepLog(): Progress {
  const silent = { update: () => {}, end: () => {} };
  return {
    step(label) {
      log().debug(`step: ${label}`);
      return silent;
    },
    onIter: () => {},
    done: () => {},
  };
}

export function createProgress(opts: { enabled: boolean; stream?: NodeJS.WriteStream }): Progress {
  const stream = opts.stream ?? process.stderr;
  if (!opts.enabled)
    return { step: () => ({ update: () => {}, end: () => {} }), onIter: () => {}, done: () => {} };
  let drawn = false;
  let current: { end(): void } | undefined;
  const write = (line: string) => {
    stream.write(`\r\x1b[K${line}`);
    drawn = true;
  };
  const erase = () => {
    if (drawn) stream.write('\r\x1b[K');
    drawn = false;
  };

  /** A step: `render(elapsedSeconds)` gives its line; drawn when revealed, throttled, kept alive by a timer. */
  const open = (render: (elapsed: number) => string) => {
    current?.end();
    const started = performance.now();
    let lastDraw = 0;
    let ended = false;
    const draw = (force = false) => {
      const now = performance.now();
      if (ended || now - started < REVEAL_MS || (!force && now - lastDraw < REDRAW_MS)) return;
      lastDraw = now;
      write(render((now - started) / 1000));
    };
    const timer = setInterval(() => draw(true), TICK_MS);
    timer.unref();
    const handle = {
      draw,
      end() {
        if (ended) return;
        ended = true;
        clearInterval(timer);
        erase();
        if (current === handle) current = undefined;
      },
    };
    current = handle;
    return handle;
  };

  let training: { draw(force?: boolean): void; end(): void } | undefined;
  let lastIter: { rec: IterRecord; maxIters: number } | undefined;
  // The ETA comes from the iterations' own times: init's tries may come between iterations.
  let iterMs = 0;
  return {
    step(label, unit, total): ReportStep {
      let done = 0;
      let known = total;
      let text = label;
      const rate = new RateMeter();
      const h = open((elapsed) => stepLine(text, unit, done, known, rate.perSecond(), elapsed, rate.sinceLast()));
      return {
        update(d, t, l) {
          done = d;
          if (t !== undefined) known = t;
          if (l !== undefined) text = l;
          rate.observe(d);
          h.draw(l !== undefined);
        },
        end: () => h.end(),
      };
    },
    onIter(rec, maxIters) {
      if (!training || current !== training) training = open(() => (lastIter ? progressLine(lastIter.rec, lastIter.maxIters, iterMs / 1000) : 'training'));
      lastIter = { rec, maxIters };
      iterMs += rec.ms;
      training.draw(rec.iter + 1 >= maxIters);
    },
    done() {
      current?.end();
      erase();
    },
  };
}

/** Units per second over the last second or so (undefined until measured for RATE_MS). */
class RateMeter {
  private readonly samples: Array<[number, number]> = [];
  observe(done: number): void {
    const now = performance.now();
    this.samples.push([now, done]);
    while (this.samples.length > 2 && now - this.samples[1][0] > 1000) this.samples.shift();
  }
  /** Seconds since the last observation (0 before any). */
  sinceLast(): number {
    const last = this.samples[this.samples.length - 1];
    return last ? (performance.now() - last[0]) / 1000 : 0;
  }
  perSecond(): number | undefined {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || last[0] - first[0] < RATE_MS) return undefined;
    return ((last[1] - first[1]) * 1000) / (last[0] - first[0]);
  }
}

/**
 * "reading x.npy  512 MB / 1.5 GB  410 MB/s  ETA 3s", "searching  2,048 / 10,000 queries  410/s
 * ETA 20s", or without a total "reading stdin  512 MB  410 MB/s  5s"; without progress at all
 * (the final pass) "final assignment pass  3s". `sinceUpdate`: seconds since the count last moved,
 * taken off the ETA so that it counts down between coarse updates (a codec measured every few
 * seconds).
 */
export function stepLine(
  label: string, unit: string, done: number, total: number | undefined, rate: number | undefined, elapsed: number, sinceUpdate = 0,
): string {
  const bytes = unit === 'bytes';
  const amount = (x: number) => (bytes ? formatBytes(x) : Math.round(x).toLocaleString('en-US'));
  const parts = [label];
  if (total !== undefined && total > 0) parts.push(`${amount(done)} / ${amount(total)}${bytes ? '' : ` ${unit}`}`);
  else if (done > 0) parts.push(`${amount(done)}${bytes ? '' : ` ${unit}`}`);
  if (rate !== undefined && rate > 0) parts.push(bytes ? `${formatBytes(rate)}/s` : `${formatRate(rate)}/s`);
  if (total !== undefined && total > 0 && rate !== undefined && rate > 0) parts.push(`ETA ${formatDuration(Math.max(0, (total - done) / rate - sinceUpdate))}`);
  else parts.push(formatDuration(elapsed));
  return parts.join('  ');
}

/**
 * "iter 12/100  T 0.0312  energy 0.28134  changed 41  ETA ≤3s". The ETA assumes the run goes to
 * maxIters at the pace of the iterations so far (`elapsedSeconds`: their time); convergence
 * usually ends it sooner, so it is an upper bound.
 */
export function progressLine(rec: IterRecord, maxIters: number, elapsedSeconds: number): string {
  const done = rec.iter + 1; // IterRecord.iter counts from 0
  const eta = Math.max(0, ((maxIters - done) * elapsedSeconds) / done);
  return [
    'training',
    `iter ${done}/${maxIters}`,
    `T ${rec.temperature.toPrecision(3)}`,
    `energy ${rec.energy.toPrecision(5)}`,
    `changed ${rec.changed}`,
    `ETA ≤${formatDuration(eta)}`,
  ].join('  ');
}

export function formatDuration(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function formatBytes(x: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (x >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  return `${i === 0 ? x : x.toPrecision(3)} ${units[i]}`;
}

function formatRate(x: number): string {
  if (x >= 1e6) return `${(x / 1e6).toPrecision(3)}M`;
  if (x >= 1e4) return `${(x / 1e3).toPrecision(3)}k`;
  return x.toPrecision(3);
}
