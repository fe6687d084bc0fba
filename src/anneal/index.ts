// The annealing quantizer, backend-free: every n-sized computation happens inside the Engine; this
// file only sees scalars per iteration and m-sized statistics at maintenance. docs/algorithm.md
// explains the design and how the defaults were chosen.
//
//  1. init (steps.ts initialize): k-means++ (greedy D² sampling) through the engine, best of
//     `restarts` tries each polished by a few Lloyd iterations — or hooks.initAnchors.
//  2. warm phase: temperature T falls geometrically from t0 × (energy after init); each point
//     shares its weight with its runner-up anchor (softmax at T), the step toward the mean is
//     damped and a Huber weight tempers far points; both fade to plain Lloyd as T → 0.
//     Maintenance every `maintenanceEvery` iterations refills empty / duplicate anchors.
//  3. cold phase (T = 0, step 1, no Huber: exactly Lloyd, so energy never rises): run to
//     stability, then maintain (settle): judge the open swap trial (trials.ts) — accept, or reject
//     and restore the anchors before it — then refill empty / duplicate anchors, or plan the next
//     swap trial. The phase ends when nothing is left to try, after `swapRejects` rejections of a
//     single swap (once Lloyd has confirmed the restored state), or at maxIters.
//  4. finalize (steps.ts): one exact hard pass; refill any anchor still empty; the assignments.
import type { Engine, IterParams } from '../backend/engine.js';
import { UsageError } from '../errors.js';
import type { AnnealConfig } from './config.js';
import type { AnnealHooks, AnnealResult, IterRecord } from './types.js';
import { Rng } from './random.js';
import { planRefills } from './maintenance.js';
import { Calm, Run, Stall, schedule } from './run.js';
import { finalize, initialize, moveAnchors, refill } from './steps.js';
import { SwapTrials, type Snapshot } from './trials.js';

export { kmeansPlusPlus } from './init.js';
export { Rng } from './random.js';

/**
 * `finalPass: false` (a sample's run, whose caller passes over every row next: api/train.ts): step 4
 * is left to the caller, which runs it here (finishSample) only when an anchor is left without any of
 * the sample's rows; the result then has no assignments and the energy of the loop's last state.
 */
export async function anneal(engine: Engine, cfg: AnnealConfig, hooks: AnnealHooks = {}, opts: { finalPass?: boolean } = {}): Promise<AnnealResult> {
  const start = performance.now();
  validate(engine, cfg);
  const run = new Run(engine, cfg, hooks);
  run.check();
  const { energy: eInit, sampled } = await initialize(run, new Rng(cfg.seed), hooks.initAnchors);
  // A sampled init means a large input, where the warm phase's tens of soft passes over every point
  // would cost more than the rest of the run: it is skipped, Lloyd ends once its energy stops
  // falling, and the swap phase once it stops paying (config.ts sampledPlateauIters,
  // sampledStallIters; --effort best inits on every point and keeps the full schedule).
  const loopCfg = sampled
    ? { ...cfg, t0: 0, stallIters: cfg.stallIters || cfg.sampledStallIters, plateauIters: cfg.plateauIters || cfg.sampledPlateauIters }
    : cfg;
  const initSeconds = (performance.now() - start) / 1000;

  // 2-3. the loop: warm iterations, then cold ones that settle, maintain and try swaps
  const maintain = cfg.maintenanceEvery > 0;
  const calm = new Calm(cfg, engine.n);
  const trials = new SwapTrials(cfg.m, cfg);
  const stall = new Stall(cfg.energyTol);
  let swapPhase = false; // since maintenance first moved anchors (a swap trial or a refill)
  const loopStart = run.history.length;
  let sinceMove = 0; // iterations since maintenance last moved anchors
  let energy = eInit; // of the last pass
  let converged = false;
  for (let it = loopStart; it < cfg.maxIters && !converged; it++) {
    const p = schedule(loopCfg, eInit, it - loopStart);
    const rec = await run.pass(p);
    energy = rec.energy;
    if (it === loopStart && loopCfg.plateauIters > 0) stall.watch(it, rec.energy, loopCfg.plateauIters);
    sinceMove++;
    calm.observe(rec.energy, rec.changed);
    if (p.temperature > 0) {
      if (maintain && (it - loopStart + 1) % cfg.maintenanceEvery === 0) {
        rec.maintenance = { swapped: 0, refilled: await refill(engine) };
      }
    } else if (stall.observe(it, rec.energy) && (swapPhase || !calm.settled)) {
      // The trials stopped paying (an open one is judged after the loop), or before any trial
      // Lloyd stopped lowering the energy without settling. Settled Lloyd goes on to the trials.
      converged = true;
    } else if (calm.settled || (maintain && trials.open !== undefined && sinceMove >= cfg.maintenanceEvery)) {
      const outcome = await settle(rec);
      if (outcome === 'converged') converged = true;
      calm.reset();
      if (outcome === 'moved') {
        sinceMove = 0;
        if (!swapPhase) stall.watch(it, rec.energy, loopCfg.stallIters);
        swapPhase = true;
      }
    }
    run.report(rec);
  }
  // Out of iterations in the middle of a trial that is not (yet) better: keep the state before it.
  if (trials.open && !(energy < trials.open.energy)) {
    await engine.setAnchors(trials.open.anchors);
    energy = trials.open.energy;
  }

  let assignments: Uint32Array = new Uint32Array(0);
  if (opts.finalPass !== false) {
    hooks.onFinalPass?.();
    energy = (await finalize(run)).energy;
    run.check();
    assignments = await engine.assignments();
  }
  const anchors = await engine.getAnchors();
  return {
    anchors,
    assignments,
    energy,
    iterations: run.history.length,
    initIterations: loopStart,
    converged,
    seconds: (performance.now() - start) / 1000,
    initSeconds,
    iterMsMedian: median(run.history.slice(loopStart).map((h) => h.ms)),
    history: run.history,
  };

  /**
   * Cold maintenance once Lloyd has settled (or a trial has had its iterations): judge the open
   * trial, then the free refills, else the next swap trial. 'restored': a rejected trial's state
   * is back and the trials are over — Lloyd confirms it, then the next settle converges.
   */
  async function settle(rec: IterRecord): Promise<'converged' | 'restored' | 'moved'> {
    const restored: Snapshot | undefined = trials.open ? trials.judge(rec.energy) : undefined;
    if (restored) await engine.setAnchors(restored.anchors);
    if (!maintain || trials.exhausted) return restored ? 'restored' : 'converged';
    const stats = restored?.stats ?? (await engine.stats());
    const anchors = restored ? restored.anchors.slice() : await engine.getAnchors();
    const nn = await engine.nearestOther();
    const refills = planRefills(stats, nn);
    const moves = refills.length ? refills : trials.plan({ anchors: anchors.slice(), energy: restored?.energy ?? rec.energy, stats }, nn);
    if (moves.length === 0) return 'converged';
    await moveAnchors(engine, anchors, moves, stats);
    rec.maintenance = refills.length ? { swapped: 0, refilled: refills.length } : { swapped: moves.length, refilled: 0 };
    return 'moved';
  }
}

function validate(engine: Engine, cfg: AnnealConfig): void {
  const { n } = engine;
  const m = cfg.m;
  if (n < 1) throw new UsageError('the input has no vectors: nothing to quantize');
  if (!(Number.isInteger(m) && m >= 1 && m <= n)) {
    throw new UsageError(`--anchors ${m}: must be an integer from 1 to the number of vectors (${n})`);
  }
}

function median(v: number[]): number {
  if (v.length === 0) return 0;
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/**
 * Step 4 on `engine` (its anchors set): the exact pass, and the refill rounds while an anchor is
 * empty. api/train.ts runs it on the sample when the pass over every row left an anchor without
 * any of the sample's rows: the anchors anneal's own step 4 would have given.
 */
export async function finishSample(engine: Engine, cfg: AnnealConfig, hooks: AnnealHooks = {}): Promise<{ anchors: Float32Array; energy: number }> {
  const fin = await finalize(new Run(engine, cfg, hooks));
  return { anchors: await engine.getAnchors(), energy: fin.energy };
}
