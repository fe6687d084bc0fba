// k-means++ one anchor at a time against k-means++ in rounds (src/anneal/init.ts): for each
// setting of initRoundsAbove, the same anneal (compress's configuration for the device, its seed)
// on the same engine, reporting init's seconds, the energy after init's polish, the final energy,
// the iterations and the training seconds. Prints one JSON line per setting.
//
//   node bench/init_rounds.mjs --input x.npy --m 20000 [--device cuda|cpu] [--iters 10]
//        [--rounds-above inf,4096,1024] [--runs 1]
import { parseArgs } from 'node:util';
import { readNpy } from './npy.mjs';
import { selectBackend } from '../dist/backend/select.js';
import { anneal, kmeansPlusPlus, Rng } from '../dist/anneal/index.js';
import { initRows, roundsFor } from '../dist/anneal/steps.js';
import { sampleRows } from '../dist/anneal/sample.js';
import { configFor } from '../dist/anneal/config.js';
import { setVerbosity } from '../dist/log.js';

const { values: a } = parseArgs({
  options: {
    input: { type: 'string' }, m: { type: 'string' }, device: { type: 'string', default: 'cuda' },
    iters: { type: 'string' }, 'rounds-above': { type: 'string', default: 'inf,4096,1024' }, runs: { type: 'string', default: '1' },
  },
});
if (!a.input || !a.m) throw new Error('usage: node bench/init_rounds.mjs --input x.npy --m M [--device cuda|cpu] [--iters N] [--rounds-above inf,4096,...]');
setVerbosity('quiet');
const m = Number(a.m);
const ds = readNpy(a.input);
const backend = await selectBackend({ device: a.device, gpu: 0 });
try {
  for (const text of a['rounds-above'].split(',')) {
    const initRoundsAbove = text === 'inf' ? Infinity : Number(text);
    for (let run = 0; run < Number(a.runs); run++) {
      const engine = await backend.open(ds, m);
      const cfg = configFor('default', m, { initRoundsAbove, ...(a.iters ? { maxIters: Number(a.iters) } : {}) }, backend.kind);
      // k-means++ alone, on the rows init uses (steps.ts): what the rounds change.
      const rows = initRows(ds.n, ds.d, cfg);
      const t0 = performance.now();
      const on = rows === ds.n ? engine : await engine.subset(sampleRows(new Rng(cfg.seed), ds.n, rows));
      const t1 = performance.now();
      const seeded = await kmeansPlusPlus(on, m, new Rng(cfg.seed), 1, () => {}, roundsFor(cfg));
      const seedingSeconds = (performance.now() - t1) / 1000, subsetSeconds = (t1 - t0) / 1000;
      if (on !== engine) await on.dispose();
      const r = await anneal(engine, cfg);
      await engine.dispose();
      const polished = r.history.filter((h) => h.init).at(-1);
      console.log(JSON.stringify({
        n: ds.n, d: ds.d, m, device: backend.kind, rounds_above: text, rounds: m > initRoundsAbove ? cfg.initRounds : 0,
        init_rows: rows, subset_seconds: +subsetSeconds.toFixed(4), seeding_seconds: +seedingSeconds.toFixed(4),
        seeding_energy: seeded.energy, init_seconds: +r.initSeconds.toFixed(4), energy_after_init: polished ? polished.energy : null,
        energy: r.energy, iterations: r.iterations, init_iterations: r.initIterations, seconds: +r.seconds.toFixed(4),
        iter_ms_median: +r.iterMsMedian.toFixed(4),
      }));
    }
  }
} finally {
  await backend.close();
}
