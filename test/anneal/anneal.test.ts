// The annealing loop through the CPU engine: determinism, monotone cold phase, D² seeding,
// maintenance (no empty anchor), hooks.
import { describe, expect, it } from 'vitest';
import { anneal, kmeansPlusPlus, Rng } from '../../dist/anneal/index.js';
import { configFor, DEFAULT_CONFIG } from '../../dist/anneal/config.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { InterruptedError } from '../../dist/errors.js';
import type { Dataset } from '../../src/vectors/dataset.js';
import type { AnnealConfig } from '../../src/anneal/config.js';
import { blobs, randomDataset } from '../cpu/data.js';
import { viewAll, datasetFromArray } from '../../dist/vectors/dataset.js';

async function run(ds: Dataset, cfg: AnnealConfig, threads = 2, hooks = {}) {
  const backend = createCpuBackend({ threads });
  const engine = await backend.open(ds, cfg.m);
  try {
    return await anneal(engine, cfg, hooks);
  } finally {
    await backend.close();
  }
}

describe('anneal', () => {
  const ds = blobs(23, 40, 9, 7, 1.5); // overlapping blobs: a landscape with local minima

  it('is deterministic: same seed, same anchors and assignments, with 1 or 2 threads', async () => {
    const cfg = { ...DEFAULT_CONFIG, m: 16, maxIters: 120 };
    const a = await run(ds, cfg, 2);
    const b = await run(ds, cfg, 2);
    const c = await run(ds, cfg, 1);
    expect(Array.from(b.anchors)).toEqual(Array.from(a.anchors));
    expect(Array.from(b.assignments)).toEqual(Array.from(a.assignments));
    expect(Array.from(c.anchors)).toEqual(Array.from(a.anchors));
    expect(Array.from(c.assignments)).toEqual(Array.from(a.assignments));
    expect(c.energy).toBe(a.energy);
    const other = await run(ds, { ...cfg, seed: cfg.seed + 1 }, 2);
    expect(Array.from(other.anchors)).not.toEqual(Array.from(a.anchors));
  });

  it('above initBudget (n·m), init is one plain k-means++ pass whatever restarts/candidates say', async () => {
    const base = { ...DEFAULT_CONFIG, m: 16, maxIters: 40 };
    const capped = await run(ds, { ...base, restarts: 5, initCandidates: 0, initBudget: 0 });
    const plain = await run(ds, { ...base, restarts: 1, initCandidates: 1 });
    expect(Array.from(capped.anchors)).toEqual(Array.from(plain.anchors));
    const full = await run(ds, base); // default budget: n·m is small here, so restarts apply
    expect(Array.from(full.anchors)).not.toEqual(Array.from(plain.anchors));
  });

  it('large data: init (k-means++, one try) runs on a sample and the warm phase is skipped, the same with 1 or 2 threads', async () => {
    const cfg = { ...DEFAULT_CONFIG, m: 8, maxIters: 60, initSample: 6, initSampleAbove: 0 };
    const a = await run(ds, cfg, 2);
    const b = await run(ds, cfg, 1);
    expect(Array.from(b.anchors)).toEqual(Array.from(a.anchors));
    expect(b.energy).toBe(a.energy);
    // No warm phase: every iteration on all points is cold; with init on all points it runs.
    expect(a.history.every((h) => h.temperature === 0)).toBe(true);
    expect(a.iterations).toBeGreaterThan(0);
    expect(a.initIterations).toBe(0); // one k-means++ try on the sample, not polished there
    const full = await run(ds, { ...cfg, initSample: 0 });
    expect(full.history.some((h) => h.temperature > 0)).toBe(true);
    expect(Array.from(full.anchors)).not.toEqual(Array.from(a.anchors));
  });

  it('the stall rule ends the swap trials once the best energy stops falling', async () => {
    const base = { ...DEFAULT_CONFIG, m: 16, maxIters: 300, restarts: 1, t0: 0, swapRejects: 1000 };
    const long = await run(ds, { ...base, stallIters: 0 });
    const short = await run(ds, { ...base, stallIters: 5 });
    expect(short.converged).toBe(true);
    expect(short.iterations).toBeLessThan(long.iterations);
    // Stopped: the last 5 iterations (at least) did not lower the best energy by energyTol.
    const best = (h: typeof short.history) => Math.min(...h.map((r) => r.energy));
    const h = short.history;
    expect(best(h)).toBeGreaterThanOrEqual(best(h.slice(0, h.length - 5)) * (1 - base.energyTol));
  });

  it('large data: Lloyd that keeps moving points but stops lowering the energy ends the run at a plateau', async () => {
    // changeTol 0: Lloyd never settles, so without the plateau rule the run goes on to maxIters.
    const base = { ...DEFAULT_CONFIG, m: 16, maxIters: 150, initSample: 6, initSampleAbove: 0, changeTol: 0 };
    const off = await run(ds, { ...base, plateauIters: 0, sampledPlateauIters: 0 });
    expect(off.iterations).toBe(150);
    const on = await run(ds, { ...base, sampledPlateauIters: 4 });
    expect(on.converged).toBe(true);
    expect(on.iterations).toBeLessThan(off.iterations);
    expect(on.history.some((h) => h.maintenance !== undefined)).toBe(false); // no trial was started
    // Stopped: the last 4 iterations did not lower the best energy by energyTol.
    const best = (h: typeof on.history) => Math.min(...h.map((r) => r.energy));
    const h = on.history;
    expect(best(h)).toBeGreaterThanOrEqual(best(h.slice(0, h.length - 4)) * (1 - base.energyTol));
    // The same iterations as the run without the rule, up to where it stopped.
    expect(h.map((r) => r.energy)).toEqual(off.history.slice(0, h.length).map((r) => r.energy));
  });

  it('large data: Lloyd that settles goes on to the swap trials, the plateau rule notwithstanding', async () => {
    const cfg = { ...DEFAULT_CONFIG, m: 16, maxIters: 150, initSample: 6, initSampleAbove: 0 };
    const r = await run(ds, cfg);
    expect(r.history.some((h) => h.maintenance !== undefined)).toBe(true);
    expect(r.converged).toBe(true);
  });

  it('--effort: fast runs no swap trial and no warm phase; best is the full schedule', async () => {
    const fast = await run(ds, configFor('fast', 16, { maxIters: 200 }));
    expect(fast.history.some((h) => h.maintenance !== undefined || h.temperature > 0)).toBe(false);
    const best = configFor('best', 16);
    expect([best.initSample, best.stallIters, best.t0]).toEqual([0, 0, 0.3]);
    expect(configFor('default', 16, { seed: 7 })).toEqual({ ...DEFAULT_CONFIG, m: 16, seed: 7 });
  });

  it('never raises the energy between cold iterations without maintenance', async () => {
    const r = await run(ds, { ...DEFAULT_CONFIG, m: 16, maxIters: 150, restarts: 1 });
    let checked = 0;
    for (let i = 1; i < r.history.length; i++) {
      const prev = r.history[i - 1], cur = r.history[i];
      if (prev.temperature > 0 || cur.temperature > 0 || prev.maintenance) continue;
      expect(cur.energy).toBeLessThanOrEqual(prev.energy * (1 + 1e-9));
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
    // ...and the final exact energy is no worse than the last cold iteration's.
    expect(r.energy).toBeLessThanOrEqual(r.history[r.history.length - 1].energy * (1 + 1e-9));
  });

  it('beats plain Lloyd from the same k-means++ start (the swaps work)', async () => {
    const base = { ...DEFAULT_CONFIG, m: 16, maxIters: 300, restarts: 1, t0: 0 };
    const lloyd = await run(ds, { ...base, maintenanceEvery: 0 });
    const full = await run(ds, base);
    expect(full.energy).toBeLessThan(lloyd.energy);
  });

  it('leaves no anchor empty, even with more anchors than clusters and duplicate points', async () => {
    // 6 tight blobs, 30 anchors: most anchors share a blob; every one must keep a point.
    const tight = blobs(6, 50, 4, 3, 0.01);
    const r = await run(tight, { ...DEFAULT_CONFIG, m: 30, maxIters: 80 });
    const used = new Set(r.assignments);
    expect(used.size).toBe(30);
    // 12 distinct points, each repeated: m = 12 anchors must cover all of them exactly.
    const d = 3;
    const data = new Float32Array(new SharedArrayBuffer(120 * d * 4));
    for (let i = 0; i < 120; i++) for (let k = 0; k < d; k++) data[i * d + k] = (i % 12) * 10 + k;
    const dup: Dataset = datasetFromArray(data, 120, d, 'test');
    const r2 = await run(dup, { ...DEFAULT_CONFIG, m: 12, maxIters: 50 });
    expect(new Set(r2.assignments).size).toBe(12);
    expect(r2.energy).toBe(0);
  });

  it('uses hooks.initAnchors, reports every iteration and stops on abort', async () => {
    const small = randomDataset(300, 4, 11);
    const init = (viewAll(small) as Float32Array).slice(0, 5 * 4);
    const seen: number[] = [];
    const r = await run(small, { ...DEFAULT_CONFIG, m: 5, maxIters: 12, t0: 0, maintenanceEvery: 0 }, 2, {
      initAnchors: init,
      onIter: (rec: { iter: number }) => seen.push(rec.iter),
    });
    expect(seen).toEqual(r.history.map((h) => h.iter));
    expect(r.iterations).toBe(r.history.length);
    const ac = new AbortController();
    let calls = 0;
    const p = run(small, { ...DEFAULT_CONFIG, m: 5, maxIters: 100 }, 2, {
      signal: ac.signal,
      onIter: () => {
        if (++calls === 3) ac.abort();
      },
    });
    await expect(p).rejects.toBeInstanceOf(InterruptedError);
    expect(calls).toBe(3);
  });
});

describe('k-means++', () => {
  it('picks the second anchor with probability proportional to D²', async () => {
    // Four points on a line at 0, 1, 3, 10. Given a first pick, the second is i with p ∝ D(i).
    const xs = [0, 1, 3, 10];
    const data = new Float32Array(new SharedArrayBuffer(16));
    data.set(xs);
    const backend = createCpuBackend({ threads: 1 });
    const e = await backend.open(datasetFromArray(data, 4, 1, 'test'), 2);
    const counts = xs.map(() => xs.map(() => 0));
    const trials = 1500;
    try {
      for (let s = 0; s < trials; s++) {
        const { anchors } = await kmeansPlusPlus(e, 2, new Rng(s), 1);
        counts[xs.indexOf(anchors[0])][xs.indexOf(anchors[1])]++;
      }
    } finally {
      await backend.close();
    }
    for (let f = 0; f < 4; f++) {
      const row = counts[f];
      const total = row.reduce((a, b) => a + b, 0);
      expect(total).toBeGreaterThan(trials / 4 - 4 * Math.sqrt(trials)); // first pick uniform
      const w = xs.map((x) => (x - xs[f]) ** 2);
      const wsum = w.reduce((a, b) => a + b, 0);
      for (let i = 0; i < 4; i++) {
        const p = w[i] / wsum;
        const sd = Math.sqrt(total * p * (1 - p));
        expect(Math.abs(row[i] - total * p)).toBeLessThanOrEqual(4.5 * sd + 1);
      }
      expect(row[f]).toBe(0); // never the point itself (D = 0)
    }
  });
});
