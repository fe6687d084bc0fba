// The bookkeeping every step of anneal() shares: the engine and config, the iteration history,
// the hooks (progress reports, Ctrl-C), and the stability count that decides convergence.
import type { Engine, IterParams } from '../backend/engine.js';
import { InterruptedError } from '../errors.js';
import type { AnnealConfig } from './config.js';
import type { AnnealHooks, IterRecord } from './types.js';

/** A plain Lloyd pass: hard assignment, full step to the mean, no Huber weight. */
export const LLOYD: IterParams = { temperature: 0, step: 1, huber: 0 };

export class Run {
  readonly history: IterRecord[] = [];

  constructor(readonly engine: Engine, readonly cfg: AnnealConfig, private readonly hooks: AnnealHooks) {}

  /** Between engine calls: Ctrl-C (hooks.signal) ends the run with InterruptedError. */
  check(): void {
    if (this.hooks.signal?.aborted) throw new InterruptedError();
  }

  /** One iterate() pass, added to the history (the caller reports it once maintenance is noted). */
  async pass(p: IterParams): Promise<IterRecord> {
    this.check();
    const s = await this.engine.iterate(p);
    const rec: IterRecord = { iter: this.history.length, temperature: p.temperature, energy: s.energy, changed: s.changed, ms: s.ms };
    this.history.push(rec);
    return rec;
  }

  report(rec: IterRecord): void {
    this.hooks.onIter?.(rec, this.cfg.maxIters);
  }

  /** Tells the hooks a k-means++ try of init starts (0-based, of `tries`). */
  initTry(tryIndex: number, tries: number): void {
    this.hooks.onInitTry?.(tryIndex, tries);
  }
}

/**
 * Consecutive stable iterations — relative energy change below energyTol and changed assignments
 * below changeTol (energy 0 included: 0/0 is "no change") — reset whenever anchors are moved.
 */
export class Calm {
  private count = 0;
  private prev = NaN;

  constructor(private readonly cfg: AnnealConfig, private readonly n: number) {}

  observe(energy: number, changed: number): void {
    const rel = this.prev === energy ? 0 : Math.abs(this.prev - energy) / Math.max(energy, Number.MIN_VALUE);
    this.count = rel < this.cfg.energyTol && changed / this.n < this.cfg.changeTol ? this.count + 1 : 0;
    this.prev = energy;
  }

  reset(): void {
    this.count = 0;
    this.prev = NaN;
  }

  /** Stable for `patience` iterations in a row. */
  get settled(): boolean {
    return this.count >= this.cfg.patience;
  }
}

/**
 * The adaptive end of the loop: it stops once the best energy seen has fallen by less than energyTol
 * (relative) over the last `window` iterations. Watched from the first swap trial on (the trials
 * have stopped paying for their passes: stallIters) and, on a large input, from the loop's start
 * (Lloyd still moves points but no longer lowers the energy: plateauIters). watch() restarts the
 * count with a new window.
 */
export class Stall {
  private best = Infinity;
  private markEnergy = Infinity;
  private markIter = -1;
  private window = 0;

  constructor(private readonly energyTol: number) {}

  /** Counts from this iteration (its energy the mark) with this window (0: never stalls). */
  watch(iter: number, energy: number, window: number): void {
    this.best = this.markEnergy = energy;
    this.markIter = iter;
    this.window = window;
  }

  /** One cold iteration's energy; true once stalled. */
  observe(iter: number, energy: number): boolean {
    if (this.markIter < 0) return false;
    this.best = Math.min(this.best, energy);
    if (this.best < this.markEnergy * (1 - this.energyTol)) {
      this.markEnergy = this.best;
      this.markIter = iter;
    }
    return this.window > 0 && iter - this.markIter >= this.window;
  }
}

/**
 * The pass parameters at loop iteration k: T = t0·(1 − cooling)^k from t0 = cfg.t0 × (energy after
 * init), 0 once below tMin × that energy; the damped step and the Huber factor fade with T.
 */
export function schedule(cfg: AnnealConfig, eInit: number, k: number): IterParams {
  const t0 = cfg.t0 * eInit;
  let T = t0 > 0 ? t0 * Math.pow(1 - cfg.cooling, k) : 0;
  if (T < cfg.tMin * eInit) T = 0;
  const u = t0 > 0 ? T / t0 : 0; // 1 → 0 as the system cools
  return { temperature: T, step: 1 - (1 - cfg.step) * u, huber: cfg.huber * u };
}

