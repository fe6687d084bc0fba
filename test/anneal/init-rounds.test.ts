// k-means++ in rounds (init.ts): the engines' seedAddMany equals seedAdd after seedAdd and their
// seedPickMany equals seedPick target by target (CPU, CUDA through the fake driver with the vectors
// resident or in tiles, f32 and f16, and a sharded CPU engine); the walk of seed-pick.ts against
// a brute-force prefix search; and init in rounds: anchors are data rows, the same from the same
// seed with 1 or 2 threads, and an energy close to one-at-a-time k-means++.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { pickIndexes } from '../../dist/backend/seed-pick.js';
import { kmeansPlusPlus, Rng } from '../../dist/anneal/index.js';
import { datasetFromArray, f32ToF16, type Dataset } from '../../dist/vectors/dataset.js';
import type { Backend, Engine } from '../../src/backend/types.js';
import { FakeCuda } from '../cuda-host/fake-driver.js';
import { rng } from '../rng.js';

afterEach(() => setDriverForTests(undefined));

/** Clustered rows: 7 centres, so k-means++ has structure to find. */
function dataset(n: number, d: number, dtype: 'f32' | 'f16', seed: number): Dataset {
  const r = rng(seed);
  const v = new Float32Array(new SharedArrayBuffer(n * d * 4));
  for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) v[i * d + k] = (r() - 0.5) + ((i * 7919) % 7) * 3 * ((k % 3) - 1);
  const data = dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16);
  return datasetFromArray(data, n, d, 'test');
}

describe('pickIndexes', () => {
  it('finds, for each target, the first point whose prefix of units exceeds it (past the total: the last with a share)', () => {
    const r = rng(5);
    for (const [n, block] of [[1, 4], [37, 4], [300, 256], [1000, 64]]) {
      const units = Array.from({ length: n }, () => (r() < 0.3 ? 0 : Math.floor(r() * 50)));
      const blockSums = Array.from({ length: Math.ceil(n / block) }, (_, b) => units.slice(b * block, (b + 1) * block).reduce((a, u) => a + u, 0));
      const total = units.reduce((a, u) => a + u, 0);
      let last = 0;
      units.forEach((u, i) => u > 0 && (last = i));
      const scale = 4; // targets in distance units: units / scale
      const targets = Float64Array.from({ length: 40 }, (_, j) => (j < 35 ? r() * total : total * (1 + j / 10)) / scale);
      targets[3] = targets[4]; // a repeated target
      const want = Array.from(targets, (t) => {
        const T = Math.floor(t * scale);
        let acc = 0;
        for (let i = 0; i < n; i++) if ((acc += units[i]) > T) return i;
        return last;
      });
      expect(Array.from(pickIndexes(targets, scale, blockSums, block, n, (i) => units[i])), `n ${n}`).toEqual(want);
    }
  });
});

/** seedAddMany on one engine and seedAdd one candidate at a time on another: same totals and picks. */
async function agree(a: Engine, b: Engine, label: string): Promise<void> {
  const d = a.d;
  const rows = [3, a.n - 1, 17, 200, 17, 42, 99].map((i) => i % a.n);
  const c0 = await a.row(rows[0]);
  expect(await a.seedBegin(c0), label).toBe(await b.seedBegin(c0));
  const cands = new Float32Array((rows.length - 1) * d);
  for (let l = 1; l < rows.length; l++) cands.set(await a.row(rows[l]), (l - 1) * d);
  let one = 0;
  for (let l = 1; l < rows.length; l++) one = await b.seedAdd(cands.subarray((l - 1) * d, l * d));
  const many = await a.seedAddMany(cands);
  expect(many, label).toBe(one);
  const targets = Float64Array.from([0.5, 0, 0.999999, 0.25, 0.25, 0.75, 1.5], (f) => f * many);
  const want = [];
  for (const t of targets) want.push(await b.seedPick(t));
  expect(Array.from(await a.seedPickMany(targets)), label).toEqual(want);
  expect(Array.from(await a.seedPickMany(new Float64Array(0)))).toEqual([]);
}

describe('seedAddMany / seedPickMany', () => {
  it('CPU engine (and a sharded one over two CPU engines)', async () => {
    const ds = dataset(1301, 6, 'f32', 1);
    const backends = [createCpuBackend({ threads: 2 }), createCpuBackend({ threads: 1 })];
    try {
      await agree(await backends[0].open(ds, 4), await backends[1].open(ds, 4), 'cpu');
      const sharded = await shardedBackend(backends, () => [700, 601]).open(ds, 4);
      await agree(sharded, await backends[1].open(ds, 4), 'sharded');
    } finally {
      for (const b of backends) await b.close();
    }
  });

  for (const [dtype, tileRows] of [['f32', 0], ['f16', 0], ['f32', 512]] as const) {
    it(`CUDA engine through the fake driver (${dtype}${tileRows ? ', vectors in tiles' : ''})`, async () => {
      const ds = dataset(2500, 5, dtype, 2); // ten seeding blocks, the last one partial
      const fake = new FakeCuda();
      setDriverForTests(fake.api);
      const backend: Backend = await createCudaBackend(0, {});
      const opts = tileRows ? { tileRows } : {};
      await agree(await backend.open(ds, 4, opts), await backend.open(ds, 4, opts), `cuda ${dtype}`);
      await backend.close();
      expect(fake.live).toBe(0);
    });
  }
});

describe('k-means++ in rounds', () => {
  it('picks data rows, the same from the same seed on 1 or 2 threads, with an energy near one-at-a-time sampling', async () => {
    const n = 3001, d = 8, m = 150;
    const ds = dataset(n, d, 'f32', 3);
    const x = new Float32Array(ds.buffer, ds.byteOffset, n * d);
    const rowsOf = new Set(Array.from({ length: n }, (_, i) => x.subarray(i * d, (i + 1) * d).join(',')));
    const results = [];
    for (const threads of [1, 2]) {
      const backend = createCpuBackend({ threads });
      const e = await backend.open(ds, m);
      results.push(await kmeansPlusPlus(e, m, new Rng(9), 1, () => {}, 8));
      if (threads === 1) results.push(await kmeansPlusPlus(e, m, new Rng(9), 1, () => {}, 0));
      await backend.close();
    }
    const [rounds, oneAtATime, rounds2] = results;
    expect(Array.from(rounds2.anchors)).toEqual(Array.from(rounds.anchors));
    for (let j = 0; j < m; j++) expect(rowsOf.has(rounds.anchors.subarray(j * d, (j + 1) * d).join(','))).toBe(true);
    expect(Array.from(rounds.anchors)).not.toEqual(Array.from(oneAtATime.anchors));
    expect(rounds.energy / oneAtATime.energy).toBeGreaterThan(0.8);
    expect(rounds.energy / oneAtATime.energy).toBeLessThan(1.25);
  });
});
