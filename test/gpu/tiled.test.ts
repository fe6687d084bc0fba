// GPU suite (npm run test:gpu, on the GPU machine): the engine with its vectors streamed from the
// host in tiles against the same engine with them resident, on the real device. By design they
// agree bit for bit on everything: the assignments, the anchors, counts, sse, the energy (all
// integer sums, reduce.cu), farthest points, screen fallbacks and every k-means++ sum. Skipped
// without a GPU (kernels.test.ts reports the reason).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCuda, createCudaBackend, type CudaEngine } from '../../dist/backend/cuda/index.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
import { rng } from '../rng.js';
import { randomData } from './data.js';

const hasGpu = probeCuda().ok;

function anchorsFrom(X: Float64Array, n: number, d: number, m: number, seed: number): Float32Array {
  const r = rng(seed);
  const C = new Float32Array(m * d);
  for (let j = 0; j < m; j++) {
    const i = Math.floor(r() * n);
    for (let k = 0; k < d; k++) C[j * d + k] = X[i * d + k] + (r() - 0.5) * 0.1;
  }
  return C;
}

/** The same passes on both engines; every observable compared. */
async function compare(resident: CudaEngine, tiled: CudaEngine, C: Float32Array, label: string): Promise<void> {
  const { n, m } = resident;
  await resident.setAnchors(C);
  await tiled.setAnchors(C);
  let msR = 0, msT = 0;
  // Huber on: its thresholds come from sse, an integer sum, so they agree bit for bit too.
  for (const p of [
    { temperature: 0.05, step: 0.5, huber: 1.5 },
    { temperature: 0.01, step: 0.8, huber: 1 },
    { temperature: 0, step: 1, huber: 0 },
  ]) {
    resident.poisonForTests();
    tiled.poisonForTests();
    const a = await resident.iterate(p);
    const b = await tiled.iterate(p);
    msR += a.ms;
    msT += b.ms;
    expect(b.energy).toBe(a.energy);
    expect(b.changed).toBe(a.changed);
    expect(Array.from(await tiled.getAnchors())).toEqual(Array.from(await resident.getAnchors()));
  }
  resident.poisonForTests();
  tiled.poisonForTests();
  const fa = await resident.finalize();
  const fb = await tiled.finalize();
  expect(fb.energy).toBe(fa.energy);
  expect(fb.changed).toBe(fa.changed);
  expect(Array.from(await tiled.assignments())).toEqual(Array.from(await resident.assignments()));
  const sa = await resident.stats();
  const sb = await tiled.stats();
  expect(Array.from(sb.count)).toEqual(Array.from(sa.count));
  expect(Array.from(sb.far)).toEqual(Array.from(sa.far));
  expect(Array.from(sb.farDist)).toEqual(Array.from(sa.farDist));
  expect(Array.from(sb.sse)).toEqual(Array.from(sa.sse));
  expect(sa.count.reduce((x, y) => x + y, 0)).toBe(n);
  expect(tiled.profile.screenPasses).toBe(resident.profile.screenPasses);
  expect(tiled.profile.screenFallbacks).toBe(resident.profile.screenFallbacks);
  console.log(`${label}: ${tiled.tiling!.tiles} tiles of ${tiled.tiling!.rows} rows; 3 passes ${msR.toFixed(2)} ms resident, ${msT.toFixed(2)} ms tiled`);
}

describe.skipIf(!hasGpu)('CUDA engine, vectors in tiles vs resident', () => {
  let backend: Awaited<ReturnType<typeof createCudaBackend>>;
  beforeAll(async () => {
    backend = await createCudaBackend(0);
  });
  afterAll(async () => {
    await backend?.close();
  });

  const CASES = [
    { n: 100003, d: 128, m: 1000, dtype: 'f16', screen: true, tileRows: 16384 },
    { n: 100003, d: 128, m: 1000, dtype: 'f16', screen: false, tileRows: 16384 },
    { n: 30001, d: 384, m: 257, dtype: 'f32', screen: true, tileRows: 4096 },
    { n: 30001, d: 384, m: 257, dtype: 'f32', screen: false, tileRows: 4096 },
    { n: 1001, d: 3, m: 2, dtype: 'f32', screen: false, tileRows: 256 },
    { n: 5000, d: 1536, m: 65, dtype: 'f16', screen: true, tileRows: 768 },
  ] as const;
  for (const c of CASES) {
    it(`tiled = resident n=${c.n} d=${c.d} m=${c.m} ${c.dtype}${c.screen ? ' screened' : ''}, tiles of ${c.tileRows}`, async () => {
      const { ds, X } = randomData(c.n, c.d, c.dtype, c.n + c.d + c.m);
      const before = backend.ctx.pool.count;
      const resident = (await backend.open(ds, c.m, { screen: c.screen })) as CudaEngine;
      const tiled = (await backend.open(ds, c.m, { screen: c.screen, tileRows: c.tileRows })) as CudaEngine;
      try {
        expect(resident.tiling).toBe(null);
        expect(tiled.tiling).toEqual({ rows: c.tileRows, tiles: Math.ceil(c.n / c.tileRows) });
        await compare(resident, tiled, anchorsFrom(X, c.n, c.d, c.m, 5), `n=${c.n} d=${c.d} m=${c.m} ${c.dtype}${c.screen ? ' screened' : ''}`);
      } finally {
        await resident.dispose();
        await tiled.dispose();
      }
      expect(backend.ctx.pool.count).toBe(before);
    });
  }

  it('k-means++ sums, tries, picks and rounds in tiles equal the resident ones (f16, n=100003 d=17, tiles of 8192)', async () => {
    const n = 100003, d = 17;
    const { ds, X } = randomData(n, d, 'f16', 5);
    const resident = (await backend.open(ds, 8)) as CudaEngine;
    const tiled = (await backend.open(ds, 8, { tileRows: 8192 })) as CudaEngine;
    try {
      resident.poisonForTests();
      tiled.poisonForTests();
      const c0 = Float32Array.from(X.subarray(0, d));
      const c1 = Float32Array.from(X.subarray(77777 * d, 77778 * d));
      const s0 = await resident.seedBegin(c0);
      expect(await tiled.seedBegin(c0)).toBe(s0);
      const cands = new Float32Array([...c1, ...c0, ...c1]);
      expect(Array.from(await tiled.seedTry(cands))).toEqual(Array.from(await resident.seedTry(cands)));
      const s1 = await resident.seedAdd(c1);
      expect(await tiled.seedAdd(c1)).toBe(s1);
      for (const frac of [0, 0.25, 0.5, 0.9, 0.999]) expect(await tiled.seedPick(frac * s1)).toBe(await resident.seedPick(frac * s1));
      const many = new Float32Array([...c0, ...c1, ...Float32Array.from(X.subarray(4242 * d, 4243 * d))]);
      const s2 = await resident.seedAddMany(many);
      expect(await tiled.seedAddMany(many)).toBe(s2);
      const targets = Float64Array.from([0.9, 0.1, 0.5], (f) => f * s2);
      expect(Array.from(await tiled.seedPickMany(targets))).toEqual(Array.from(await resident.seedPickMany(targets)));
    } finally {
      await resident.dispose();
      await tiled.dispose();
    }
  });

  it('maxDeviceBytes (VLC_CUDA_MAX_BYTES) below what the engine needs: tiles chosen from it, same results', async () => {
    const n = 200001, d = 64, m = 512;
    const { ds, X } = randomData(n, d, 'f32', 8);
    const resident = (await backend.open(ds, m)) as CudaEngine;
    const budget = engineBytes(n, d, m, 'f32', backend.ctx.info.multiprocessors) - (n * d * 4) / 2;
    let tiled: CudaEngine | undefined;
    try {
      const held = backend.ctx.pool.bytesInUse;
      tiled = (await backend.open(ds, m, { maxDeviceBytes: budget })) as CudaEngine;
      expect(backend.ctx.pool.bytesInUse - held).toBeLessThanOrEqual(budget);
      const t = tiled.tiling!;
      expect(t.rows % 256).toBe(0);
      expect(t.tiles).toBeGreaterThan(1);
      await compare(resident, tiled, anchorsFrom(X, n, d, m, 6), `n=${n} d=${d} m=${m} f32, VLC_CUDA_MAX_BYTES=${budget}`);
    } finally {
      await resident.dispose();
      await tiled?.dispose();
    }
  });
});
