// k-means++ rounds through the screen (cuda/seeding.ts addMany → pass.ts screenCandidates → seed_min):
// on an engine whose passes screen, a round's candidates are screened like anchors and each row's
// exact nearest distance taken from the top-2; the sums, and every pick after them, are those of the
// direct seed_many, for any number of candidates up to m (more: seed_many), resident or in tiles,
// f32 and f16, several rounds on one D. Through the fake driver, which runs the screen's kernels
// as the device does (the GPU suite checks the real ones: test/gpu/kernels.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend, type CudaEngine } from '../../dist/backend/cuda/index.js';
import { datasetFromArray, f32ToF16, type Dataset } from '../../dist/vectors/dataset.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';

afterEach(() => setDriverForTests(undefined));

const GPU = { name: 'Fake GPU', cc: [9, 0] as [number, number], sms: 4, memBytes: 2 ** 30 };

/** Clustered rows (so that candidates tie and near-tie), with exact duplicates. */
function dataset(n: number, d: number, dtype: 'f32' | 'f16', seed: number): Dataset {
  const r = rng(seed);
  const v = new Float32Array(n * d);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < d; k++) v[i * d + k] = i % 11 === 3 ? v[(i - 1) * d + k] : ((i % 6) - 2.5) * 2 + (r() - 0.5) * 0.3;
  return datasetFromArray(dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16), n, d, 'test');
}

/** Rounds of seedAddMany (L candidates each, rows of the data) and picks after each: totals and picks. */
async function rounds(e: CudaEngine, Ls: number[]): Promise<number[]> {
  const out: number[] = [await e.seedBegin(await e.row(0))];
  let at = 1;
  for (const L of Ls) {
    const C = new Float32Array(L * e.d);
    for (let l = 0; l < L; l++) C.set(await e.row((at++ * 7919) % e.n), l * e.d);
    const total = await e.seedAddMany(C);
    out.push(total, ...(await e.seedPickMany(Float64Array.from([0, 0.13, 0.5, 0.77, 0.999999], (f) => f * total))));
  }
  return out;
}

describe('k-means++ rounds through the screen = seed_many', () => {
  for (const [label, n, d, dtype, tileRows] of [
    ['resident, f16', 1001, 13, 'f16', 0],
    ['resident, f32', 777, 5, 'f32', 0],
    ['in tiles of 256, f32', 1003, 9, 'f32', 256],
  ] as const) {
    it(`${label}: n=${n} d=${d}, rounds of 3, 7, 12 (= m) and 13 (> m: seed_many) candidates`, async () => {
      const m = 12, Ls = [3, 7, 12, 13, 7];
      const fake = new FakeCuda({ devices: [GPU], poison: true });
      setDriverForTests(fake.api);
      const ds = dataset(n, d, dtype, 5);
      const tiles = tileRows ? { tileRows } : {};
      const screened = await createCudaBackend(0, { screen: true, ...tiles });
      const direct = await createCudaBackend(0, { screen: false, ...tiles });
      const a = (await screened.open(ds, m)) as CudaEngine;
      const b = (await direct.open(ds, m)) as CudaEngine;
      const launches = fake.launches.length;
      const got = await rounds(a, Ls);
      const seedMin = fake.launches.slice(launches).filter((k) => k === 'seed_min').length;
      expect(got).toEqual(await rounds(b, Ls));
      expect(seedMin, 'four of the five rounds screened (one a span)').toBe(4 * (tileRows ? Math.ceil(n / tileRows) : 1));
      // The engine's passes after the rounds: the top-2 buffers the rounds used are a pass's scratch.
      const C = new Float32Array(m * d);
      for (let j = 0; j < m; j++) C.set(await a.row((j * 37) % n), j * d);
      await a.setAnchors(C);
      await b.setAnchors(C);
      const p = { temperature: 0, step: 1, huber: 0 };
      expect((await a.iterate(p)).energy).toBe((await b.iterate(p)).energy);
      expect(Array.from(await a.assignments())).toEqual(Array.from(await b.assignments()));
      await a.dispose();
      await b.dispose();
      await screened.close();
      await direct.close();
    });
  }
});
