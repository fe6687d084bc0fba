// k-means++ seeding (D² sampling, Arthur & Vassilvitskii 2007) through the Engine, so the n-sized
// distance array stays on the device; with `candidates` > 1 it is the greedy variant scikit-learn
// uses: sample several points by D² and keep the one that lowers Σ D the most.
import type { Engine } from '../backend/engine.js';
import type { Rng } from './random.js';
import { log } from '../log.js';

export interface InitResult {
  anchors: Float32Array;
  /** Mean squared distance of the points to the chosen anchors (the energy after init). */
  energy: number;
}

/** Candidates per pick: `candidates` when >= 1, else scikit-learn's 2 + ⌊ln m⌋. */
function candidatesFor(candidates: number, m: number): number {
  return candidates >= 1 ? Math.floor(candidates) : 2 + Math.floor(Math.log(m));
}

/**
 * k-means++ on the engine. With `rounds` > 0 and m above `rounds`, the anchors after the first come
 * in rounds (kmeansPlusPlusRounds below); else one at a time.
 */
export async function kmeansPlusPlus(
  engine: Engine, m: number, rng: Rng, candidates = 1, check: () => void = () => {}, rounds = 0,
): Promise<InitResult> {
  if (rounds > 0 && m > rounds) return kmeansPlusPlusRounds(engine, m, rng, rounds, check);
  const { n, d } = engine;
  candidates = candidatesFor(candidates, m);
  const anchors = new Float32Array(m * d);
  let row = await engine.row(rng.int(n));
  anchors.set(row, 0);
  let total = await engine.seedBegin(row);
  for (let t = 1; t < m; t++) {
    check();
    if (!(total > 0)) {
      // Every point already coincides with an anchor (fewer distinct points than m): any point.
      row = await engine.row(rng.int(n));
    } else if (candidates <= 1) {
      row = await engine.row(await engine.seedPick(rng.next() * total));
    } else {
      const cands = new Float32Array(candidates * d);
      for (let l = 0; l < candidates; l++) cands.set(await engine.row(await engine.seedPick(rng.next() * total)), l * d);
      const sums = await engine.seedTry(cands);
      let best = 0;
      for (let l = 1; l < candidates; l++) if (sums[l] < sums[best]) best = l;
      row = cands.slice(best * d, (best + 1) * d);
    }
    anchors.set(row, t * d);
    total = await engine.seedAdd(row);
  }
  return { anchors, energy: total / n };
}

/**
 * k-means++ in rounds: each round draws several anchors by D² from the same D, then adds them in
 * one pass (Engine.seedPickMany / seedAddMany), so init costs about `rounds` passes over the data
 * instead of m. A round draws as many anchors as are already chosen, up to ⌈(m − 1) / rounds⌉: the
 * first rounds grow 1, 2, 4, … as one-at-a-time sampling would have them see D, later ones are
 * capped. Within a round D does not shrink around the anchors just drawn, so two may land close
 * (or on one point); the Lloyd polish and the run's refills deal with them. Greedy candidates do not
 * apply here.
 */
async function kmeansPlusPlusRounds(engine: Engine, m: number, rng: Rng, rounds: number, check: () => void): Promise<InitResult> {
  const { n, d } = engine;
  const perRound = Math.ceil((m - 1) / rounds);
  const anchors = new Float32Array(m * d);
  const ms = { add: 0, pick: 0, rows: 0, rounds: 0 }; // -v: where init's time goes
  let t0 = performance.now();
  const lap = (what: 'add' | 'pick' | 'rows') => {
    const t = performance.now();
    ms[what] += t - t0;
    t0 = t;
  };
  anchors.set(await engine.row(rng.int(n)), 0);
  let total = await engine.seedBegin(anchors.subarray(0, d));
  for (let t = 1; t < m; ) {
    check();
    const k = Math.min(perRound, t, m - t);
    let picks: Int32Array;
    if (!(total > 0)) {
      // Every point already coincides with an anchor (fewer distinct points than m): any points.
      picks = Int32Array.from({ length: k }, () => rng.int(n));
    } else {
      const targets = new Float64Array(k);
      for (let l = 0; l < k; l++) targets[l] = rng.next() * total;
      picks = await engine.seedPickMany(targets);
    }
    lap('pick');
    await engine.rows(picks, anchors.subarray(t * d, (t + k) * d));
    lap('rows');
    total = await engine.seedAddMany(anchors.subarray(t * d, (t + k) * d));
    lap('add');
    t += k;
    ms.rounds++;
  }
  log().debug(`k-means++ in ${ms.rounds} rounds over ${n} rows: adding anchors ${ms.add.toFixed(0)} ms, drawing them ${ms.pick.toFixed(0)} ms, fetching their rows ${ms.rows.toFixed(0)} ms`);
  return { anchors, energy: total / n };
}
