// k-means++ seeding (D² sampling, Arthur & Vassilvitskii 2007) through the Engine, so the n-sized
// distance array stays on the device; with `candidates` > 1 it is the greedy variant scikit-learn
// uses: sample several points by D² and keep the one that lowers Σ D the most.
import type { Engine } from '../backend/types.js';
import type { Rng } from './random.js';

export interface InitResult {
  anchors: Float32Array;
  /** Mean squared distance of the points to the chosen anchors (the energy after init). */
  energy: number;
}

/** Candidates per pick: `candidates` when >= 1, else scikit-learn's 2 + ⌊ln m⌋. */
function candidatesFor(candidates: number, m: number): number {
  return candidates >= 1 ? Math.floor(candidates) : 2 + Math.floor(Math.log(m));
}

export async function kmeansPlusPlus(
  engine: Engine, m: number, rng: Rng, candidates = 1, check: () => void = () => {},
): Promise<InitResult> {
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
