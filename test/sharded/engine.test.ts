// A sharded engine (src/backend/sharded/) over N engines of one kind gives exactly what one
// engine of that kind gives on all the rows: k-means++ sums, tries and picks, every pass's
// energy, changes, anchors and statistics, the assignments, the whole anneal. CUDA through the
// fake driver exposing three GPUs (members with their vectors resident or in tiles, screened or
// not), and the CPU backend; N = 1, 2, 3 with row splits that cut the k-means++ blocks and tiles
// anywhere. And accumulate + applyUpdate on one engine equals its fused iterate.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { peerGroup } from '../../dist/backend/cuda/peer.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { anneal } from '../../dist/anneal/index.js';
import { DEFAULT_CONFIG } from '../../dist/anneal/config.js';
import { datasetFromArray, f32ToF16, type Dataset } from '../../dist/vectors/dataset.js';
import type { Backend } from '../../src/backend/types.js';
import { FakeCuda } from '../cuda-host/fake-driver.js';
import { rng } from '../rng.js';
import { plain, script } from './script.js';

afterEach(() => setDriverForTests(undefined));

function dataset(n: number, d: number, dtype: 'f32' | 'f16', seed: number): Dataset {
  const r = rng(seed);
  const v = new Float32Array(new SharedArrayBuffer(n * d * 4));
  for (let e = 0; e < n * d; e++) v[e] = (r() - 0.5) * 4 + ((e / d) % 5 | 0) * 1.5;
  const data = dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16);
  return datasetFromArray(data, n, d, 'test');
}

const SPLITS: number[][] = [[601], [1, 600], [300, 301], [257, 44, 300], [200, 200, 201]];

async function cudaBackends(fake: FakeCuda, o: Record<string, unknown>): Promise<Backend[]> {
  setDriverForTests(fake.api);
  return [await createCudaBackend(0, o), await createCudaBackend(1, o), await createCudaBackend(2, o)];
}

const threeGpus = () =>
  new FakeCuda({ devices: [0, 1, 2].map((k) => ({ name: `Fake GPU ${k}`, cc: [9, 0] as [number, number], sms: 4, memBytes: 80 * 2 ** 30 })) });

describe('sharded CUDA engines (fake driver, three GPUs) = one engine', () => {
  for (const [label, opts, dtype] of [
    ['resident, f32', { screen: false }, 'f32'],
    ['screened, f16', { screen: true }, 'f16'],
    ['in tiles of 256, f32', { screen: true, tileRows: 256 }, 'f32'],
  ] as const) {
    it(`${label}: N = 1, 2, 3, odd splits`, async () => {
      const m = 5;
      const ds = dataset(601, 7, dtype, 11);
      const fake = threeGpus();
      const backends = await cudaBackends(fake, opts);
      const single = await backends[0].open(ds, m);
      const want = await script(single, m);
      await single.dispose();
      // The members combine through the host (the Comm), or between the GPUs (cuda/peer.ts).
      for (const groupOf of [undefined, peerGroup]) {
        for (const split of SPLITS) {
          const copies = fake.peerCopies;
          const sharded = await shardedBackend(backends.slice(0, split.length), () => split, groupOf).open(ds, m);
          expect(sharded.n).toBe(601);
          expect(await script(sharded, m), `split ${split}${groupOf ? ', combined on the GPUs' : ''}`).toEqual(want);
          await sharded.dispose();
          expect(fake.peerCopies > copies, 'copies between the GPUs').toBe(groupOf !== undefined && split.length > 1);
        }
      }
      for (const b of backends) await b.close();
      expect(fake.live).toBe(0);
    });
  }

  it('the whole anneal: same anchors, assignments, energies and iterations', async () => {
    const ds = dataset(1001, 6, 'f32', 3);
    const cfg = { ...DEFAULT_CONFIG, m: 12, maxIters: 40, huber: 1, restarts: 2, restartIters: 4 };
    const fake = threeGpus();
    const backends = await cudaBackends(fake, { screen: true });
    const one = await backends[0].open(ds, cfg.m);
    const want = await anneal(one, cfg);
    await one.dispose();
    for (const groupOf of [undefined, peerGroup]) {
      const three = await shardedBackend(backends, () => [333, 1, 667], groupOf).open(ds, cfg.m);
      const got = await anneal(three, cfg);
      await three.dispose();
      expect(plain(got.anchors)).toEqual(plain(want.anchors));
      expect(plain(got.assignments)).toEqual(plain(want.assignments));
      expect(got.energy).toBe(want.energy);
      expect(got.history.map((h) => [h.energy, h.changed, h.maintenance])).toEqual(want.history.map((h) => [h.energy, h.changed, h.maintenance]));
    }
    for (const b of backends) await b.close();
  });

  it('accumulate + applyUpdate on one engine equals its fused iterate', async () => {
    const ds = dataset(301, 5, 'f16', 8);
    const fake = threeGpus();
    const [b] = await cudaBackends(fake, { screen: false });
    const fused = await b.open(ds, 4);
    const split = await b.open(ds, 4);
    const C = new Float32Array(4 * 5).map((_, k) => (k % 7) * 0.9);
    await fused.setAnchors(C);
    await split.setAnchors(C);
    for (const p of [{ temperature: 0.5, step: 0.5, huber: 1.2 }, { temperature: 0, step: 1, huber: 0.8 }, { temperature: 0, step: 0, huber: 0 }]) {
      const a = await fused.iterate(p);
      const s = await split.applyUpdate(await split.accumulate(p), p);
      expect([s.energy, s.changed]).toEqual([a.energy, a.changed]);
      expect(plain(await split.getAnchors())).toEqual(plain(await fused.getAnchors()));
      expect(await split.stats()).toEqual(await fused.stats());
    }
    await b.close();
  });
});

describe('sharded CPU engines = one CPU engine (fixed-point sums: exact)', () => {
  it('N = 1, 2, 3, odd splits', async () => {
    const m = 5;
    const ds = dataset(601, 7, 'f32', 11);
    const backends = [0, 1, 2].map(() => createCpuBackend({ threads: 2 }));
    const single = await backends[0].open(ds, m);
    const want = await script(single, m);
    await single.dispose();
    for (const split of SPLITS) {
      const sharded = await shardedBackend(backends.slice(0, split.length), () => split).open(ds, m);
      expect(await script(sharded, m), `split ${split}`).toEqual(want);
      await sharded.dispose();
    }
    for (const b of backends) await b.close();
  });

  it('the whole anneal (init on all rows, on a sample, in rounds), and accumulate + applyUpdate = iterate', async () => {
    const ds = dataset(900, 5, 'f16', 4);
    const backends = [0, 1].map(() => createCpuBackend({ threads: 1 }));
    for (const cfg of [
      { ...DEFAULT_CONFIG, m: 9, maxIters: 30, huber: 1 },
      { ...DEFAULT_CONFIG, m: 9, maxIters: 30, initSample: 20, initSampleAbove: 0 },
      { ...DEFAULT_CONFIG, m: 9, maxIters: 30, initRounds: 3, initRoundsAbove: 0 }, // k-means++ in rounds
    ]) {
      const one = await backends[0].open(ds, cfg.m);
      const want = await anneal(one, cfg);
      await one.dispose();
      const two = await shardedBackend(backends, () => [451, 449]).open(ds, cfg.m);
      const got = await anneal(two, cfg);
      expect(plain(got.anchors)).toEqual(plain(want.anchors));
      expect(plain(got.assignments)).toEqual(plain(want.assignments));
      expect(got.history.map((h) => h.energy)).toEqual(want.history.map((h) => h.energy));
      await two.dispose();
    }
    const fused = await backends[0].open(ds, 3);
    const split = await backends[1].open(ds, 3);
    const C = new Float32Array(3 * 5).map((_, k) => k * 0.3);
    await fused.setAnchors(C);
    await split.setAnchors(C);
    for (const p of [{ temperature: 0.5, step: 0.5, huber: 1.2 }, { temperature: 0, step: 1, huber: 0 }]) {
      const a = await fused.iterate(p);
      const s = await split.applyUpdate(await split.accumulate(p), p);
      expect([s.energy, s.changed]).toEqual([a.energy, a.changed]);
      expect(plain(await split.getAnchors())).toEqual(plain(await fused.getAnchors()));
    }
    for (const b of backends) await b.close();
  });
});
