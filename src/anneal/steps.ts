// The steps of anneal() (index.ts) that talk to the engine: the starting anchors, the free
// refill moves, moving anchors, and the final exact pass.
import type { AnchorStats, Engine, IterStats } from '../backend/types.js';
import type { Rng } from './random.js';
import { kmeansPlusPlus } from './init.js';
import { applyMoves, planRefills, type Move } from './maintenance.js';
import { Calm, LLOYD, type Run } from './run.js';

/** Where a moved anchor lands between the split cluster's centre (0) and its farthest point (1). */
const SPLIT_FRACTION = 0.5;
/** Rounds of refill + Lloyd after the final pass while an anchor is still empty (rare: see finalize). */
const FINAL_REFILL_ROUNDS = 3;
/** Lloyd passes after each of those refills, to let the refilled anchors take their points. */
const FINAL_REFILL_LLOYD = 3;

/**
 * Step 1: the starting anchors, set on the engine — hooks' given anchors, or k-means++ (the best of
 * `restarts` tries, each polished by a short Lloyd run). Returns their energy.
 */
export async function initialize(run: Run, rng: Rng, given: Float32Array | undefined): Promise<number> {
  const { engine, cfg } = run;
  if (given) {
    await engine.setAnchors(given);
    return (await engine.finalize()).energy;
  }
  // Large problems get one plain k-means++ pass (config.ts, initBudget).
  const small = engine.n * cfg.m <= cfg.initBudget;
  const tries = small ? Math.max(1, cfg.restarts) : 1;
  const candidates = small ? cfg.initCandidates : 1;
  let best: { anchors: Float32Array; energy: number } | undefined;
  for (let r = 0; r < tries; r++) {
    const init = await kmeansPlusPlus(engine, cfg.m, rng, candidates, () => run.check());
    await engine.setAnchors(init.anchors);
    if (tries === 1) return init.energy;
    const energy = await polish(run, init.energy);
    if (!best || energy < best.energy) best = { anchors: await engine.getAnchors(), energy };
  }
  await engine.setAnchors(best!.anchors);
  return best!.energy;
}

/** Lloyd on one k-means++ try: until stable, `restartIters` passes, or maxIters passes in all. */
async function polish(run: Run, energy: number): Promise<number> {
  const { cfg } = run;
  const calm = new Calm(cfg, run.engine.n);
  for (let k = 0; k < cfg.restartIters && !calm.settled && run.history.length < cfg.maxIters; k++) {
    const rec = await run.pass(LLOYD);
    run.report(rec);
    calm.observe(rec.energy, rec.changed);
    energy = rec.energy;
  }
  return energy;
}

/** Move anchors per `moves` (far points fetched from the engine: d values each). */
export async function moveAnchors(engine: Engine, anchors: Float32Array, moves: Move[], stats: AnchorStats): Promise<void> {
  const rows: Float32Array[] = [];
  for (const mv of moves) rows.push(await engine.row(stats.far[mv.to]));
  applyMoves(anchors, engine.d, moves, rows, SPLIT_FRACTION);
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
