// The annealing quantizer, backend-free: every n-sized computation happens inside the Engine; this
// file only sees scalars per iteration and m-sized statistics at maintenance. docs/algorithm.md
// explains the design and how the defaults were chosen.
//
//  1. init: k-means++ (greedy D² sampling) through the engine, best of `restarts` tries each
//     polished by a few Lloyd iterations — or hooks.initAnchors.
//  2. warm phase: temperature T falls geometrically from t0 × (energy after init); each point
//     shares its weight with its runner-up anchor (softmax at T), the step toward the mean is
//     damped and a Huber weight tempers far points; both fade to plain Lloyd as T → 0.
//     Maintenance every `maintenanceEvery` iterations refills empty / duplicate anchors.
//  3. cold phase (T = 0, step 1, no Huber: exactly Lloyd, so energy never rises): run to
//     stability, then try swaps — move the anchors that are cheapest to remove into the clusters
//     with the largest error — keep them if the energy, once stable again, is lower, else restore
//     the anchors. The swap count halves on each rejection and doubles (up to its first size)
//     on each acceptance; the phase ends after
//     `swapRejects` rejections of a single swap, or at maxIters.
//  4. finalize: one exact hard pass; refill any anchor still empty; the assignments.
import type { AnchorStats, Engine } from '../backend/types.js';
import { InterruptedError, UsageError } from '../errors.js';
import type { AnnealConfig } from './config.js';
import type { AnnealHooks, AnnealResult, IterRecord } from './types.js';
import { Rng } from './random.js';
import { kmeansPlusPlus } from './init.js';
import { applyMoves, planRefills, planSwaps, type Move } from './maintenance.js';

export { kmeansPlusPlus } from './init.js';
export { Rng } from './random.js';

/** Where a moved anchor lands between the split cluster's centre (0) and its farthest point (1). */
const SPLIT_FRACTION = 0.5;

/** One iteration counts toward convergence (energy 0 included: 0/0 is "no change"). */
function isStable(prev: number, energy: number, changed: number, n: number, cfg: AnnealConfig): boolean {
  const rel = prev === energy ? 0 : Math.abs(prev - energy) / Math.max(energy, Number.MIN_VALUE);
  return rel < cfg.energyTol && changed / n < cfg.changeTol;
}

function median(v: number[]): number {
  if (v.length === 0) return 0;
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Move anchors per `moves` (far points fetched from the engine: d values each). */
async function moveAnchors(engine: Engine, anchors: Float32Array, moves: Move[], stats: AnchorStats): Promise<void> {
  const rows: Float32Array[] = [];
  for (const mv of moves) rows.push(await engine.row(stats.far[mv.to]));
  applyMoves(anchors, engine.d, moves, rows, SPLIT_FRACTION);
  await engine.setAnchors(anchors);
}

export async function anneal(engine: Engine, cfg: AnnealConfig, hooks: AnnealHooks = {}): Promise<AnnealResult> {
  const start = performance.now();
  const check = () => {
    if (hooks.signal?.aborted) throw new InterruptedError();
  };
  const { n, d } = engine;
  const m = cfg.m;
  if (n < 1) throw new UsageError('the input has no vectors: nothing to quantize');
  if (!(Number.isInteger(m) && m >= 1 && m <= n)) {
    throw new UsageError(`--anchors ${m}: must be an integer from 1 to the number of vectors (${n})`);
  }
  const rng = new Rng(cfg.seed);
  // Large problems get one plain k-means++ pass (config.ts, initBudget).
  const small = n * m <= cfg.initBudget;
  const restarts = small ? cfg.restarts : 1;
  const candidates = small ? cfg.initCandidates : 1;

  // 1. init: k-means++ (best of `restarts` tries, each polished by a short Lloyd run), or given
  const history: IterRecord[] = [];
  check();
  let eInit: number;
  if (hooks.initAnchors) {
    await engine.setAnchors(hooks.initAnchors);
    eInit = (await engine.finalize()).energy;
  } else if (restarts <= 1) {
    const init = await kmeansPlusPlus(engine, m, rng, candidates, check);
    await engine.setAnchors(init.anchors);
    eInit = init.energy;
  } else {
    let best: { anchors: Float32Array; energy: number } | undefined;
    for (let r = 0; r < restarts; r++) {
      const init = await kmeansPlusPlus(engine, m, rng, candidates, check);
      await engine.setAnchors(init.anchors);
      let energy = init.energy, prev = NaN, calm = 0;
      for (let k = 0; k < cfg.restartIters && calm < cfg.patience && history.length < cfg.maxIters; k++) {
        check();
        const s = await engine.iterate({ temperature: 0, step: 1, huber: 0 });
        const rec: IterRecord = { iter: history.length, temperature: 0, energy: s.energy, changed: s.changed, ms: s.ms };
        history.push(rec);
        hooks.onIter?.(rec, cfg.maxIters);
        calm = isStable(prev, s.energy, s.changed, n, cfg) ? calm + 1 : 0;
        prev = energy = s.energy;
      }
      if (!best || energy < best.energy) best = { anchors: await engine.getAnchors(), energy };
    }
    await engine.setAnchors(best!.anchors);
    eInit = best!.energy;
  }
  const initSeconds = (performance.now() - start) / 1000;

  // 2-3. the loop
  const t0 = cfg.t0 * eInit;
  const tStop = cfg.tMin * eInit;
  let stable = 0;
  let prevEnergy = NaN;
  let sinceMove = 0;
  let converged = false;
  const maxSwapK = Math.max(1, Math.round(m * cfg.swapShare));
  let swapK = maxSwapK;
  let rejectsAtOne = 0;
  const excluded = new Set<number>();
  let trial: { anchors: Float32Array; energy: number; stats: AnchorStats; moves: Move[] } | undefined;
  let lastEnergy = eInit;
  const maintain = cfg.maintenanceEvery > 0;

  const loopStart = history.length;
  for (let it = loopStart; it < cfg.maxIters; it++) {
    check();
    let T = t0 > 0 ? t0 * Math.pow(1 - cfg.cooling, it - loopStart) : 0;
    if (T < tStop) T = 0;
    const u = t0 > 0 ? T / t0 : 0; // 1 → 0 as the system cools
    const params = { temperature: T, step: 1 - (1 - cfg.step) * u, huber: cfg.huber * u };
    const s = await engine.iterate(params);
    const rec: IterRecord = { iter: it, temperature: T, energy: s.energy, changed: s.changed, ms: s.ms };
    history.push(rec);
    lastEnergy = s.energy;
    sinceMove++;
    stable = isStable(prevEnergy, s.energy, s.changed, n, cfg) ? stable + 1 : 0;
    prevEnergy = s.energy;

    if (T > 0) {
      // Warm: only the free moves (empty or duplicate anchors).
      if (maintain && (it - loopStart + 1) % cfg.maintenanceEvery === 0) {
        const stats = await engine.stats();
        const anchors = await engine.getAnchors();
        const moves = planRefills(stats, await engine.nearestOther());
        if (moves.length) await moveAnchors(engine, anchors, moves, stats);
        rec.maintenance = { split: 0, merged: 0, refilled: moves.length };
      }
      hooks.onIter?.(rec, cfg.maxIters);
      continue;
    }

    // Cold: wait until Lloyd is stable (or a trial has had its iterations).
    const settled = stable >= cfg.patience || (maintain && trial !== undefined && sinceMove >= cfg.maintenanceEvery);
    if (!settled) {
      hooks.onIter?.(rec, cfg.maxIters);
      continue;
    }
    let stats: AnchorStats | undefined;
    let anchors: Float32Array | undefined;
    if (trial) {
      if (s.energy < trial.energy) {
        excluded.clear(); // accepted: the landscape changed
        rejectsAtOne = 0;
        swapK = Math.min(maxSwapK, trial.moves.length * 2);
      } else {
        await engine.setAnchors(trial.anchors);
        if (trial.moves.length === 1) {
          rejectsAtOne++;
          excluded.add(trial.moves[0].from).add(trial.moves[0].to);
        }
        swapK = Math.max(1, Math.floor(trial.moves.length / 2));
        stats = trial.stats;
        anchors = trial.anchors.slice();
        lastEnergy = trial.energy;
      }
      trial = undefined;
    }
    if (!maintain || rejectsAtOne >= cfg.swapRejects) {
      if (stats === undefined) {
        converged = true;
        hooks.onIter?.(rec, cfg.maxIters);
        break;
      }
      // Just restored a rejected trial: let Lloyd confirm the restored state, then stop.
      stable = 0;
      prevEnergy = NaN;
      hooks.onIter?.(rec, cfg.maxIters);
      continue;
    }
    stats ??= await engine.stats();
    anchors ??= await engine.getAnchors();
    const nn = await engine.nearestOther();
    const refills = planRefills(stats, nn);
    const snapshot = { anchors: anchors.slice(), energy: lastEnergy, stats };
    let moves: Move[];
    if (refills.length) {
      moves = refills; // free moves: no trial needed
    } else {
      moves = planSwaps(stats, nn, swapK, excluded);
      if (moves.length) trial = { ...snapshot, moves };
    }
    if (moves.length === 0) {
      converged = true;
      hooks.onIter?.(rec, cfg.maxIters);
      break;
    }
    await moveAnchors(engine, anchors, moves, stats);
    rec.maintenance = refills.length
      ? { split: 0, merged: 0, refilled: refills.length }
      : { split: moves.length, merged: moves.length, refilled: 0 };
    stable = 0;
    prevEnergy = NaN;
    sinceMove = 0;
    hooks.onIter?.(rec, cfg.maxIters);
  }
  // Out of iterations in the middle of a trial that is not (yet) better: keep the accepted state.
  if (trial && !(lastEnergy < trial.energy)) await engine.setAnchors(trial.anchors);

  // 4. final exact pass; never leave an anchor empty
  check();
  let fin = await engine.finalize();
  for (let attempt = 0; attempt < 3; attempt++) {
    const stats = await engine.stats();
    if (!stats.count.some((c) => c === 0)) break;
    const anchors = await engine.getAnchors();
    const moves = planRefills(stats, await engine.nearestOther());
    if (moves.length === 0) break; // fewer distinct points than anchors: nothing to split
    await moveAnchors(engine, anchors, moves, stats);
    for (let k = 0; k < 3; k++) {
      check();
      await engine.iterate({ temperature: 0, step: 1, huber: 0 });
    }
    fin = await engine.finalize();
  }
  check();
  const assignments = await engine.assignments();
  const anchors = await engine.getAnchors();
  return {
    anchors,
    assignments,
    energy: fin.energy,
    iterations: history.length,
    converged,
    seconds: (performance.now() - start) / 1000,
    initSeconds,
    iterMsMedian: median(history.map((h) => h.ms)),
    history,
  };
}
