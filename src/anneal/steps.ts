// The steps of anneal() (index.ts) that talk to the engine: the starting anchors, the free
// refill moves, moving anchors, and the final exact pass.
import type { AnchorStats, Engine, IterStats } from '../backend/engine.js';
import type { AnnealConfig } from './config.js';
import type { Rng } from './random.js';
import { kmeansPlusPlus } from './init.js';
import { sampleRows } from './sample.js';
import { applyMoves, planRefills, type Move } from './maintenance.js';
import { Calm, LLOYD, type Run } from './run.js';

/** Where a moved anchor lands between the split cluster's centre (0) and its farthest point (1). */
const SPLIT_FRACTION = 0.5;
/** Rounds of refill + Lloyd after the final pass while an anchor is still empty (rare: see finalize). */
const FINAL_REFILL_ROUNDS = 3;
/** Lloyd passes after each of those refills, to let the refilled anchors take their points. */
const FINAL_REFILL_LLOYD = 3;

/**
 * Step 1: the starting anchors, set on the engine — hooks' given anchors, or k-means++: the best of
 * `restarts` tries, each polished by a short Lloyd run. When one pass over the data costs more than
 * `initSampleAbove`, k-means++ (one try) runs on a uniform sample of `initSample` points per anchor
 * (Engine.subset), so init costs the same whatever n. Returns the energy of the chosen anchors (on
 * the sample when `sampled`).
 */
export async function initialize(run: Run, rng: Rng, given: Float32Array | undefined): Promise<{ energy: number; sampled: boolean }> {
  const { engine, cfg } = run;
  if (given) {
    await engine.setAnchors(given);
    return { energy: (await engine.finalize()).energy, sampled: false };
  }
  const rows = initRows(engine.n, engine.d, cfg);
  if (rows === engine.n) {
    const best = await bestStart(run, engine, rng, true);
    await engine.setAnchors(best.anchors);
    return { energy: best.energy, sampled: false };
  }
  const sample = await engine.subset(sampleRows(rng, engine.n, rows));
  try {
    const best = await bestStart(run, sample, rng, false);
    await engine.setAnchors(best.anchors);
    return { energy: best.energy, sampled: true };
  } finally {
    await sample.dispose();
  }
}

/** Rows init works on: all n, or initSample per anchor when a pass over all costs more than initSampleAbove. */
export function initRows(n: number, d: number, cfg: AnnealConfig): number {
  if (!(cfg.initSample > 0) || n * cfg.m * d <= cfg.initSampleAbove) return n;
  return Math.min(n, Math.max(cfg.m, Math.ceil(cfg.initSample * cfg.m)));
}

/**
 * k-means++ on `e` (the engine or a sample of it). On the whole data (`whole`) while rows·m <=
 * initBudget (config.ts), `restarts` tries, each polished by Lloyd (its passes are iterations of the
 * run), and the lowest energy wins; greedy candidates under the same budget. One try (a sample, a
 * large input, restarts 1) is not polished: the loop's Lloyd passes over every point do that — on
 * a sample of initSample points per anchor, Lloyd would fit the anchors to those few points (on
 * 50,000 Gaussian vectors the run then ended higher, docs/algorithm.md §1).
 */
async function bestStart(run: Run, e: Engine, rng: Rng, whole: boolean): Promise<{ anchors: Float32Array; energy: number }> {
  const { cfg } = run;
  const small = e.n * cfg.m <= cfg.initBudget;
  const tries = small && whole ? Math.max(1, cfg.restarts) : 1;
  const candidates = small ? cfg.initCandidates : 1;
  let best: { anchors: Float32Array; energy: number } | undefined;
  for (let r = 0; r < tries; r++) {
    run.initTry(r, tries);
    const init = await kmeansPlusPlus(e, cfg.m, rng, candidates, () => run.check(), roundsFor(cfg));
    if (tries === 1) return init;
    await e.setAnchors(init.anchors);
    const energy = await polish(run);
    if (!best || energy < best.energy) best = { anchors: await e.getAnchors(), energy };
  }
  return best!;
}

/** Rounds for kmeansPlusPlus: initRounds when m is above initRoundsAbove, else 0 (one anchor at a time). */
export function roundsFor(cfg: AnnealConfig): number {
  return cfg.initRounds > 0 && cfg.m > cfg.initRoundsAbove ? cfg.initRounds : 0;
}

/** Lloyd on one try, as iterations of the run marked init: until stable, `restartIters` passes or maxIters in all. */
async function polish(run: Run): Promise<number> {
  const { cfg, engine } = run;
  const calm = new Calm(cfg, engine.n);
  let energy = NaN;
  for (let k = 0; k < cfg.restartIters && !calm.settled && run.history.length < cfg.maxIters; k++) {
    const rec = await run.pass(LLOYD);
    rec.init = true;
    run.report(rec);
    calm.observe(rec.energy, rec.changed);
    energy = rec.energy;
  }
  return energy;
}

/** Move anchors per `moves` (far points fetched from the engine: d values each). */
export async function moveAnchors(engine: Engine, anchors: Float32Array, moves: Move[], stats: AnchorStats): Promise<void> {
  const d = engine.d, far = await engine.rows(moves.map((mv) => stats.far[mv.to])); // one call, not one a move
  applyMoves(anchors, d, moves, moves.map((_, q) => far.subarray(q * d, (q + 1) * d)), SPLIT_FRACTION);
  await engine.setAnchors(anchors);
}

/** The free moves: every empty or duplicate anchor into a costly cluster. Returns how many moved. */
export async function refill(engine: Engine, stats?: AnchorStats): Promise<number> {
  stats ??= await engine.stats();
  const anchors = await engine.getAnchors();
  const moves = planRefills(stats, await engine.nearestOther());
  if (moves.length) await moveAnchors(engine, anchors, moves, stats);
  return moves.length;
}

/**
 * Step 4: one exact hard pass. An anchor left empty (the run ended before maintenance could
 * refill it) is refilled and given a few Lloyd passes; with fewer distinct points than anchors
 * there is nothing to split and it stays empty.
 */
export async function finalize(run: Run): Promise<IterStats> {
  const { engine } = run;
  run.check();
  let fin = await engine.finalize();
  for (let round = 0; round < FINAL_REFILL_ROUNDS; round++) {
    const stats = await engine.stats();
    if (!stats.count.some((c) => c === 0)) break;
    if ((await refill(engine, stats)) === 0) break;
    for (let k = 0; k < FINAL_REFILL_LLOYD; k++) {
      run.check();
      await engine.iterate(LLOYD);
    }
    fin = await engine.finalize();
  }
  return fin;
}
