// A CUDA engine over a sample reads the sample's rows in place (Backend.openRows,
// cuda/host-rows.ts): the engine answers exactly what an engine opened on a host copy of the
// rows (selectRows) answers — every seeding sum, pass, statistic, row, subset — and no host
// copy of the rows is made (allocStore's byte counter), except for a streamed engine, which
// copies its tiles from contiguous host memory. One GPU and three (sharded), through the fake
// driver, and the whole compress: on a GPU the engine over every row opens first and the sample's
// is gathered from it on the device (api/train.ts), the same training as opening the sample first.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend, type CudaEngine } from '../../dist/backend/cuda/index.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
import { screenBytes } from '../../dist/backend/cuda/screen.js';
import { log } from '../../dist/log.js';
import { peerGroup } from '../../dist/backend/cuda/peer.js';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { Rng } from '../../dist/anneal/random.js';
import { sampleRows } from '../../dist/anneal/sample.js';
import { datasetFromArray, f32ToF16, selectRows, setMaxViewBytesForTests, storeBytesAllocated, type Dataset } from '../../dist/vectors/dataset.js';
import { npyHeader } from '../../dist/io/writers/npy.js';
import { FakeCuda } from './fake-driver.js';
import { runVlc } from './in-process.js';
import { rng } from '../rng.js';
import { recordOf, script } from '../sharded/script.js';
import { enginesOn, train } from '../../dist/api/train.js';
import { configFor } from '../../dist/anneal/config.js';

afterEach(() => {
  setDriverForTests(undefined);
  setMaxViewBytesForTests(undefined);
  vi.restoreAllMocks();
});

function dataset(n: number, d: number, dtype: 'f32' | 'f16', seed: number): Dataset {
  const r = rng(seed);
  const v = new Float32Array(n * d);
  for (let e = 0; e < n * d; e++) v[e] = (r() - 0.5) * 4 + ((e / d) % 5 | 0) * 1.5;
  return datasetFromArray(dtype === 'f32' ? v : Uint16Array.from(v, f32ToF16), n, d, 'test');
}

const threeGpus = () =>
  new FakeCuda({ devices: [0, 1, 2].map((k) => ({ name: `Fake GPU ${k}`, cc: [9, 0] as [number, number], sms: 4, memBytes: 80 * 2 ** 30 })) });

describe('an engine on a sample, its rows read in place (fake driver)', () => {
  const n = 1200, d = 7, m = 5;
  const ascending = sampleRows(new Rng(9), n, 601);
  const shuffled = ascending.slice().sort((a, b) => ((a * 7919) % 1201) - ((b * 7919) % 1201)); // any order

  for (const [label, opts, dtype, viewBytes] of [
    ['resident, f32', { screen: false }, 'f32', undefined],
    ['screened, f16, the upload gathered 3 rows at a time', { screen: true }, 'f16', 3 * 7 * 2],
    ['resident, f32, views of 2 rows', { screen: true }, 'f32', 2 * 7 * 4],
  ] as const) {
    it(`${label}: the same answers as on a host copy, and no host copy`, async () => {
      const ds = dataset(n, d, dtype, 3);
      setMaxViewBytesForTests(viewBytes);
      const fake = new FakeCuda();
      setDriverForTests(fake.api);
      const backend = await createCudaBackend(0, opts);
      for (const list of [ascending, shuffled]) {
        const copy = await recordOf(() => backend.open(selectRows(ds, list), m), m);
        const inPlace = await recordOf(() => backend.openRows(ds, list, m), m);
        expect(inPlace.rec).toEqual(copy.rec);
        expect(copy.copied).toBe(list.length * d * (dtype === 'f32' ? 4 : 2));
        expect(inPlace.copied, 'no host copy of the sample').toBe(0);
      }
      await backend.close();
      expect(fake.live).toBe(0);
    });
  }

  for (const dtype of ['f32', 'f16'] as const) it(`its subset (init on a sample of the sample) reads in place too, gathered on the device (${dtype})`, async () => {
    const ds = dataset(n, d, dtype, 5);
    setDriverForTests(new FakeCuda().api);
    const backend = await createCudaBackend(0, { screen: false });
    const sub = Int32Array.from({ length: 100 }, (_, k) => k * 6);
    const byCopy = await backend.open(selectRows(selectRows(ds, ascending), sub), m);
    const e = await backend.openRows(ds, ascending, m);
    const before = storeBytesAllocated();
    const inPlace = await e.subset(sub);
    expect(storeBytesAllocated() - before).toBe(0);
    expect(await script(inPlace, m)).toEqual(await script(byCopy, m));
    for (const x of [inPlace, e, byCopy]) await x.dispose();
    await backend.close();
  });

  it("the engine over every row makes its screen's buffers at its first pass, so a sample's engine beside it stays resident", async () => {
    const N = 6000, D = 16, M = 40, S = 3000; // n·m·d small: screen forced on
    const ds = dataset(N, D, 'f32', 13);
    const whole = engineBytes(N, D, M, 'f32', 4, 0, true), sample = engineBytes(S, D, M, 'f32', 4, 0, true);
    // Room for the whole engine with its screen, or for it without the screen beside the sample's engine, not for both with it.
    const memBytes = whole + sample - Math.floor(screenBytes(D, M, N) / 2);
    expect(whole - screenBytes(D, M, N) + sample).toBeLessThanOrEqual(memBytes);
    const fake = new FakeCuda({ devices: [{ name: 'small GPU', cc: [9, 0], sms: 4, memBytes }], trackFree: true });
    setDriverForTests(fake.api);
    const warn = vi.spyOn(log(), 'warn').mockImplementation(() => undefined);
    const backend = await createCudaBackend(0, { screen: true });
    const e = (await backend.open(ds, M)) as CudaEngine;
    const sub = (await e.subset(sampleRows(new Rng(3), N, S))) as CudaEngine;
    expect(warn, 'the sample is not streamed from host memory').not.toHaveBeenCalled();
    await sub.setAnchors(Float32Array.from({ length: M * D }, (_, k) => Math.sin(k)));
    await sub.iterate({ temperature: 0, step: 1, huber: 0 });
    expect(sub.profile.screenPasses).toBe(1);
    await sub.dispose();
    await e.setAnchors(Float32Array.from({ length: M * D }, (_, k) => Math.cos(k)));
    await e.finalize(); // its screen made now, in the room the sample left
    expect(e.profile.screenPasses).toBe(1);
    expect(warn).not.toHaveBeenCalled();
    await e.dispose();
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('streamed in tiles: gathered into a host copy first (spans.ts copies tiles from contiguous memory), the same answers', async () => {
    const ds = dataset(n, d, 'f32', 7);
    setDriverForTests(new FakeCuda().api);
    const backend = await createCudaBackend(0, { screen: true, tileRows: 256 });
    const copy = await recordOf(() => backend.open(selectRows(ds, ascending), m), m);
    const tiled = await recordOf(() => backend.openRows(ds, ascending, m), m);
    expect(tiled.rec).toEqual(copy.rec);
    expect(tiled.copied).toBe(ascending.length * d * 4);
    await backend.close();
  });

  it('three GPUs (sharded): each member reads its part of the list in place; the same answers as one engine on a copy', async () => {
    const ds = dataset(n, d, 'f16', 11);
    const fake = threeGpus();
    setDriverForTests(fake.api);
    const members = [await createCudaBackend(0, { screen: true }), await createCudaBackend(1, { screen: true }), await createCudaBackend(2, { screen: true })];
    const one = await recordOf(() => members[0].open(selectRows(ds, ascending), m), m);
    for (const groupOf of [undefined, peerGroup]) {
      const sharded = shardedBackend(members, () => [200, 1, 400], groupOf);
      const viaCopy = await recordOf(() => sharded.open(selectRows(ds, ascending), m), m);
      const inPlace = await recordOf(() => sharded.openRows(ds, ascending, m), m);
      expect(viaCopy.rec).toEqual(one.rec);
      expect(inPlace.rec).toEqual(one.rec);
      expect(inPlace.copied, 'no host copy of the sample').toBe(0);
    }
    for (const b of members) await b.close();
    expect(fake.live).toBe(0);
  });
});

describe('compress --sample on the GPU (fake driver): the same file without the host copy of the sample', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vlc-rows-in-place-'));
  const n = 1000, d = 8;
  const input = join(dir, 'x.npy');
  const body = new Float32Array(n * d).map((_, e) => Math.sin(e * 0.37) * 2 + ((e / d) % 7 | 0));
  writeFileSync(input, Buffer.concat([Buffer.from(npyHeader('<f4', [n, d])), Buffer.from(body.buffer)]));

  /** compress in-process on a fresh fake GPU; the bytes allocStore handed out during the run. */
  async function compressed(out: string): Promise<number> {
    setDriverForTests(new FakeCuda().api);
    const before = storeBytesAllocated();
    const r = await runVlc('compress', input, '-o', out, '--device', 'cuda', '--anchors', '4', '--iters', '8', '--seed', '3', '--sample', '300', '--residual', 'int8');
    expect(r.code, r.err).toBe(0);
    return storeBytesAllocated() - before;
  }

  it('no host copy of the sample: the engine over every row opens first and the sample is gathered from it on the device', async () => {
    expect(await compressed(join(dir, 'in-place.vlc')), 'only the input itself').toBe(n * d * 4);
  }, 120_000);

  it('training with the whole engine first (the sample gathered on the device) = the sample opened in place first: the same anchors, assignments and energies; 1 GPU and 3', async () => {
    const ds = dataset(n, d, 'f32', 5);
    const cfg = configFor('default', 4, { seed: 3, maxIters: 8 }, 'cuda');
    for (const gpus of [1, 3]) {
      const runs = [];
      for (const wholeFirst of [true, false]) {
        const fake = threeGpus();
        setDriverForTests(fake.api);
        const members = await Promise.all(Array.from({ length: gpus }, (_, k) => createCudaBackend(k)));
        const backend = gpus === 1 ? members[0] : shardedBackend(members, undefined, peerGroup);
        const engines = { ...enginesOn(backend, ds, 4), wholeFirst };
        const before = storeBytesAllocated();
        const r = await train(engines, cfg, { rows: 300 }, {});
        runs.push({ anchors: r.anchors, assignments: r.assignments, energy: r.energy, trainEnergy: r.trainEnergy, iterations: r.iterations, copied: storeBytesAllocated() - before });
        await backend.close();
        expect(fake.live).toBe(0);
      }
      const [first, inPlace] = runs;
      expect({ ...first, copied: 0 }).toEqual({ ...inPlace, copied: 0 });
      expect(first.copied, 'no host copy of the sample').toBe(0);
    }
  }, 120_000);
});
