// The CUDA engine's nearestOther() (maintenance's nearest other anchor on the device) through the
// fake driver, against the CPU backend's (src/backend/cpu/nearest.ts), and the whole anneal with
// the one and the other. The same comparison runs on a real GPU in test/gpu/kernels.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { nearestOtherOnCpu } from '../../dist/backend/cpu/nearest.js';
import { makeKernel } from '../../dist/backend/cpu/kernel.js';
import { anneal } from '../../dist/anneal/index.js';
import { DEFAULT_CONFIG } from '../../dist/anneal/config.js';
import { datasetFromArray, f32ToF16, type Dataset, viewAll } from '../../dist/vectors/dataset.js';
import type { Engine } from '../../src/backend/types.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';
import { blobs } from '../cpu/data.js';

afterEach(() => setDriverForTests(undefined));

/**
 * m random anchors where every fifth row (from the fourth on) repeats an earlier one exactly, and
 * row 2 repeats row 1 when m >= 3: exact duplicates with a lower index, in runs of two and more.
 */
export function anchorsWithDuplicates(m: number, d: number, seed: number): Float32Array {
  const r = rng(seed);
  const C = new Float32Array(m * d);
  for (let j = 0; j < m; j++) {
    const from = j === 2 ? 1 : j % 5 === 3 ? Math.floor(r() * j) : -1;
    for (let k = 0; k < d; k++) C[j * d + k] = from >= 0 ? C[from * d + k] : (r() - 0.5) * 6 + k * 0.1;
  }
  return C;
}

function dataset(n: number, d: number, dtype: 'f32' | 'f16'): Dataset {
  const r = rng(n + d);
  const v = Float32Array.from({ length: n * d }, () => r() * 4 - 2);
  return datasetFromArray(dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16), n, d, 'test');
}

/** The CPU backend's nearestOther of anchors C, on this thread. */
function cpuNearestOther(C: Float32Array, m: number, d: number) {
  return nearestOtherOnCpu(makeKernel('wasm'), C, m, d);
}

/** The engine as anneal() sees it: its own nearestOther counted, or the CPU's on its anchors instead. */
function wrap(e: Engine, device: boolean, calls: { n: number }): Engine {
  return new Proxy(e, {
    get: (t, k) => {
      if (k === 'nearestOther') {
        return device ? () => (calls.n++, t.nearestOther()) : async () => cpuNearestOther(await t.getAnchors(), t.m, t.d);
      }
      const v = Reflect.get(t, k);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

describe('CUDA engine nearestOther through the fake driver', () => {
  for (const [m, d, dtype] of [[1, 5, 'f32'], [2, 3, 'f16'], [3, 7, 'f32'], [257, 19, 'f16'], [257, 1, 'f32']] as const) {
    it(`equals the CPU backend's nearestOther (m=${m} d=${d}, ${dtype} data, exact duplicates)`, async () => {
      const fake = new FakeCuda();
      setDriverForTests(fake.api);
      const backend = await createCudaBackend(0, {});
      const engine = await backend.open(dataset(300, d, dtype), m);
      const C = anchorsWithDuplicates(m, d, m * 13 + d);
      await engine.setAnchors(C);
      const want = cpuNearestOther(C, m, d);
      const allocs = fake.allocs;
      engine.poisonForTests();
      const got = await engine.nearestOther();
      expect(Array.from(got.idx)).toEqual(Array.from(want.idx));
      for (let j = 0; j < m; j++) {
        // f32 distances summed in another order (the wasm kernel's four lanes): equal to rounding,
        // and exactly 0 for a duplicate.
        if (want.dist[j] === 0 || !Number.isFinite(want.dist[j])) expect(got.dist[j]).toBe(want.dist[j]);
        else expect(Math.abs(got.dist[j] - want.dist[j])).toBeLessThanOrEqual(1e-6 * want.dist[j]);
      }
      if (m >= 3) expect(got.idx[2]).toBe(1); // row 2 repeats row 1: its nearest other, at 0
      // Buffers once, on the first call; anchors are f32 whatever the data: the f32 kernel.
      const again = await engine.nearestOther();
      expect(Array.from(again.idx)).toEqual(Array.from(got.idx));
      expect(fake.allocs - allocs).toBe(m < 2 ? 0 : 4);
      expect(fake.launches.filter((l) => l === 'assign_top2_f32')).toHaveLength(m < 2 ? 0 : 2);
      await backend.close();
      expect(fake.live).toBe(0);
    });
  }

  it('the whole anneal gives the same result with it as with the CPU backend\'s', async () => {
    // Start from anchors of which a quarter are exact duplicates and a quarter far from the data:
    // the warm phase refills them, the cold phase swaps, to convergence.
    const ds = blobs(6, 50, 9, 3, 0.5), m = 24, d = 9;
    const X = viewAll(ds) as Float32Array;
    const initAnchors = new Float32Array(m * d);
    for (let j = 0; j < m; j++) {
      for (let k = 0; k < d; k++) {
        initAnchors[j * d + k] = j % 4 === 3 ? initAnchors[(j - 1) * d + k] : j % 4 === 2 ? 100 + j : X[j * 7 * d + k];
      }
    }
    const cfg = { ...DEFAULT_CONFIG, m, maxIters: 200, maintenanceEvery: 5 };
    const run = async (device: boolean) => {
      setDriverForTests(new FakeCuda().api);
      const backend = await createCudaBackend(0, {});
      try {
        const calls = { n: 0 };
        const r = await anneal(wrap(await backend.open(ds, m), device, calls), cfg, { initAnchors });
        return { r, calls: calls.n };
      } finally {
        await backend.close();
      }
    };
    const dev = await run(true);
    const host = await run(false);
    expect(host.calls).toBe(0);
    const moves = dev.r.history.flatMap((h) => (h.maintenance ? [h.maintenance] : []));
    expect(dev.calls).toBeGreaterThanOrEqual(moves.length); // every maintenance round asked the device
    expect(moves.reduce((s, mv) => s + mv.refilled, 0)).toBeGreaterThan(5);
    expect(moves.reduce((s, mv) => s + mv.swapped, 0)).toBeGreaterThan(2);
    expect(dev.r.converged).toBe(true);
    expect(Array.from(dev.r.anchors)).toEqual(Array.from(host.r.anchors));
    expect(Array.from(dev.r.assignments)).toEqual(Array.from(host.r.assignments));
    expect(dev.r.energy).toBe(host.r.energy);
    expect(dev.r.history.map((h) => [h.energy, h.maintenance])).toEqual(host.r.history.map((h) => [h.energy, h.maintenance]));
    expect(new Set(dev.r.assignments).size).toBe(m);
  });
});
