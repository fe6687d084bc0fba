// GPU suite (npm run test:gpu, on the GPU machine): an engine on a sample whose rows are read in
// place (CudaBackend.openRows, src/backend/cuda/host-rows.ts) answers exactly what an engine on a
// host copy of the rows answers — every k-means++ sum and pick, pass, statistic, row and subset —
// on the real device, resident (no host copy made) and streamed in tiles (a host copy, as
// documented). Skipped without a GPU (kernels.test.ts reports the reason).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCuda, createCudaBackend } from '../../dist/backend/cuda/index.js';
import { Rng } from '../../dist/anneal/random.js';
import { sampleRows } from '../../dist/anneal/sample.js';
import { selectRows } from '../../dist/vectors/dataset.js';
import type { CudaBackend } from '../../src/backend/cuda/index.js';
import { recordOf, script } from '../sharded/script.js';
import { randomData } from './data.js';

const hasGpu = probeCuda().ok;

describe.skipIf(!hasGpu)('an engine on a sample, read in place, on the device', () => {
  let backend: CudaBackend;
  beforeAll(async () => {
    backend = await createCudaBackend(0);
  });
  afterAll(async () => {
    await backend?.close();
  });

  for (const c of [
    { n: 60013, d: 131, m: 301, dtype: 'f32', o: { screen: true }, s: 20011, tiled: false },
    { n: 60013, d: 64, m: 256, dtype: 'f16', o: { screen: false }, s: 30000, tiled: false },
    { n: 15003, d: 17, m: 64, dtype: 'f32', o: { screen: true, tileRows: 1024 }, s: 5003, tiled: true },
  ] as const) {
    it(`n=${c.n} d=${c.d} m=${c.m} ${c.dtype} ${JSON.stringify(c.o)}, a sample of ${c.s}: the same answers as on a host copy`, async () => {
      const { ds } = randomData(c.n, c.d, c.dtype, c.n + c.s);
      const list = sampleRows(new Rng(3), c.n, c.s);
      const copy = await recordOf(() => backend.open(selectRows(ds, list), c.m, c.o), c.m);
      const inPlace = await recordOf(() => backend.openRows(ds, list, c.m, c.o), c.m);
      expect(inPlace.rec).toEqual(copy.rec);
      expect(inPlace.copied).toBe(c.tiled ? copy.copied : 0);
    });
  }

  for (const dtype of ['f32', 'f16'] as const) {
    it(`a subset of a resident engine (init's sample), gathered on the device, answers as an engine on a host copy of its rows (${dtype})`, async () => {
      const n = 40013, d = 67, m = 50;
      const { ds } = randomData(n, d, dtype, 77);
      const list = sampleRows(new Rng(5), n, 9001);
      const e = await backend.open(ds, m);
      const gathered = await e.subset(list);
      const copy = await backend.open(selectRows(ds, list), m);
      expect(await script(gathered, m)).toEqual(await script(copy, m));
      for (const x of [gathered, copy, e]) await x.dispose();
    });
  }
});
