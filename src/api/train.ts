// Training for compress(): the annealing loop on every row, or — when the sample (--sample,
// api/sample.ts) is smaller than the data — on a seeded uniform sample of the rows, then ONE exact
// hard pass (Engine.finalize) over every row that gives each its nearest anchor. On a GPU the
// engine over every row opens first and the sample's engine is gathered from its resident rows on
// the device (Engine.subset): each row crosses to the GPU once, and the final pass runs on vectors
// already there, where gathering the sample on the host and uploading every row again afterwards
// cost most of a multi-GPU run's time (bench/results/2026-11-27-h200x4-r3d.json). Elsewhere (the
// CPU, MPI ranks) the sample's engine is disposed before the final pass's engine opens. Either
// way a GPU keeps the vectors resident when they fit and streams them in tiles otherwise
// (backend/cuda/spans.ts), so the final pass covers any n.
import type { AnnealConfig } from '../anneal/config.js';
import { Rng } from '../anneal/random.js';
import { sampleRows } from '../anneal/sample.js';
import type { AnnealHooks, AnnealResult } from '../anneal/types.js';
import type { Backend, Engine } from '../backend/types.js';
import { InterruptedError } from '../errors.js';
import type { Dataset } from '../vectors/dataset.js';
import { log } from '../log.js';
import { sampleSize, type SampleSpec } from './sample.js';
import { trainingSampleOffThread } from './sample-draw.js';

/** Mixed into the seed for the training sample, so that it is not the draw init makes from the same seed. */
const SAMPLE_STREAM = 0x5a3b1e;

export interface TrainResult extends AnnealResult {
  /** Rows the loop trained on (n when it trained on every row). */
  sampleRows: number;
  /** Energy of the training rows after the loop (= energy without a sample). */
  trainEnergy: number;
  /** Wall seconds of the final pass over every row, its engine's opening included (0 without a sample). */
  finalSeconds: number;
  /** Wall seconds of opening the training engine (a sample's: gathering and uploading its rows) and disposing of it. */
  openSeconds: number;
  /** Wall seconds of all of train(): its phases (open, init, loop, final pass) add up to this. */
  wallSeconds: number;
}

/** Where training gets its engines: over every row, or over a list of them (ascending). */
export interface TrainEngines {
  n: number;
  whole(): Promise<Engine>;
  rows(list: Int32Array): Promise<Engine>;
  /** Open the engine over every row first and take the sample from it (Engine.subset): a GPU's rows then cross once. */
  wholeFirst?: boolean;
  /**
   * The final pass over every row with these anchors, when the engines give it their own way (a
   * streamed compress: block after block, api/compress-stream.ts); else whole()'s engine runs it.
   */
  finalPass?(anchors: Float32Array): Promise<{ energy: number; assignments: Uint32Array }>;
  /**
   * The pass over every row gives every row's anchor here (one process, not MPI ranks): the
   * sample's own exact pass is then skipped — the pass over every row gives the sample's rows
   * their anchors too, and only when one of the sample's anchors is left without any of its rows
   * is the sample's pass (with its refill of the empty anchor) run after all, and every row
   * assigned again: the same anchors and bytes either way.
   */
  sampleFromFinal?: boolean;
}

/**
 * Engines opened by `backend` on `ds` (in one process). The sample's engine reads its rows in
 * place where the backend can (TrainEngine.openRows: a GPU); the CPU opens it on a copy of them.
 */
export function enginesOn(backend: Backend, ds: Dataset, m: number): TrainEngines {
  return {
    n: ds.n,
    whole: () => backend.open(ds, m),
    rows: (list) => backend.openRows(ds, list, m),
    wholeFirst: backend.kind === 'cuda',
    sampleFromFinal: true,
  };
}

/** The rows (ascending) train() trains on: s of n drawn with the run's seed. */
export function trainingSample(seed: number, n: number, s: number): Int32Array {
  return sampleRows(new Rng((seed ^ SAMPLE_STREAM) >>> 0), n, s);
}

export async function train(engines: TrainEngines, cfg: AnnealConfig, sample: SampleSpec, hooks: AnnealHooks): Promise<TrainResult> {
  const start = performance.now();
  let t = start; // loading the training code counts with opening the engine
  const { anneal, finishSample } = await import('../anneal/index.js'); // loaded on use: commands that never train start faster
  const s = sampleSize(sample, engines.n, cfg.m);
  if (s >= engines.n) {
    const engine = await engines.whole();
    let openSeconds = (performance.now() - t) / 1000;
    try {
      const r = await anneal(engine, cfg, hooks);
      t = performance.now();
      await engine.dispose();
      openSeconds += (performance.now() - t) / 1000;
      return { ...r, sampleRows: engines.n, trainEnergy: r.energy, finalSeconds: 0, openSeconds, wallSeconds: (performance.now() - start) / 1000 };
    } finally {
      await engine.dispose(); // safe twice: after a failure, the engine is still freed
    }
  }

  log().info(`training on a sample of ${s} of the ${engines.n} vectors (--sample), then assigning every vector in one exact pass`);
  // Drawing the sample counts with opening its engine (t runs on), and so does opening the engine
  // over every row when it opens first.
  const drawn = trainingSampleOffThread(cfg.seed, engines.n, s);
  let trained: AnnealResult;
  let engine = engines.wholeFirst && !engines.finalPass ? await engines.whole() : undefined;
  try {
    const rows = await drawn;
    // The sample's engine: a subset of the engine over every row (its rows already on the GPU), or its own.
    const openSample = engine ? (list: Int32Array) => engine!.subset(list) : (list: Int32Array) => engines.rows(list);
    const sampled = await openSample(rows);
    let openSeconds = (performance.now() - t) / 1000;
    const deferred = engines.sampleFromFinal === true;
    try {
      trained = await anneal(sampled, cfg, hooks, { finalPass: !deferred });
    } finally {
      t = performance.now();
      await sampled.dispose();
      openSeconds += (performance.now() - t) / 1000;
    }

    const t0 = performance.now();
    if (hooks.signal?.aborted) throw new InterruptedError();
    hooks.onFinalPass?.(); // the pass over every row
    const overAll = async (anchors: Float32Array): Promise<{ energy: number; assignments: Uint32Array }> => {
      if (engines.finalPass) return engines.finalPass(anchors);
      engine ??= await engines.whole();
      await engine.setAnchors(anchors);
      const fin = await engine.finalize();
      return { energy: fin.energy, assignments: await engine.assignments() };
    };
    let fin = await overAll(trained.anchors);
    if (deferred && emptyInSample(fin.assignments, rows, cfg.m)) {
      // Rare: the loop ended with an anchor holding none of the sample's rows. The sample's own
      // step 4 refills it (as anneal would have), then every row is assigned again.
      log().debug('an anchor holds none of the sample\'s rows after the loop: its exact pass and refill, then every row again');
      const again = await openSample(rows); // opened as the first was: the same figures, the same sums
      try {
        await again.setAnchors(trained.anchors);
        const done = await finishSample(again, cfg, hooks);
        trained = { ...trained, anchors: done.anchors, energy: done.energy };
      } finally {
        await again.dispose();
      }
      fin = await overAll(trained.anchors);
    }
    const { assignments } = fin;
    await engine?.dispose();
    const finalSeconds = (performance.now() - t0) / 1000; // the engine's disposal included
    return {
      ...trained,
      assignments,
      energy: fin.energy,
      seconds: trained.seconds + finalSeconds,
      sampleRows: s,
      trainEnergy: trained.energy,
      finalSeconds,
      openSeconds,
      wallSeconds: (performance.now() - start) / 1000,
    };
  } finally {
    await engine?.dispose(); // safe twice: after a failure, the engine is still freed
  }
}

/** Whether some anchor below m holds none of the listed rows (their anchors read from every row's). */
function emptyInSample(assignments: Uint32Array, rows: Int32Array, m: number): boolean {
  const held = new Uint8Array(m);
  let left = m;
  for (let k = 0; k < rows.length && left > 0; k++) {
    const a = assignments[rows[k]];
    if (held[a] === 0) {
      held[a] = 1;
      left--;
    }
  }
  return left > 0;
}
