// The CUDA engine's tiled mode (vectors streamed from the host when they do not fit on the GPU)
// through the fake driver: it must give what the resident engine gives — the same assignments,
// anchors (S and W are integer sums, so bit for bit), statistics, screen fallbacks and seeding —
// for n not a multiple of the tile, f32 and f16, screened and not; choose the tile from the memory
// it may use; fail with bytes needed and free when even tiles cannot fit; free everything. Every
// sum is an integer (reduce.cu), so the energy and sse agree bit for bit too.
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend, type CudaEngine } from '../../dist/backend/cuda/index.js';
import { engineBytes } from '../../dist/backend/cuda/plan.js';
import { fmtBytes } from '../../dist/backend/cuda/pool.js';
import { cudaOptionsFromEnv } from '../../dist/backend/cuda/options.js';
import { datasetFromArray, f32ToF16, f16ToF32, viewAll, type Dataset } from '../../dist/vectors/dataset.js';
import { log } from '../../dist/log.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';

// The engine's one line saying that a run is tiled, caught (and kept off the test output).
let warn: MockInstance;
beforeEach(() => {
  warn = vi.spyOn(log(), 'warn').mockImplementation(() => undefined);
});
afterEach(() => {
  setDriverForTests(undefined);
  vi.restoreAllMocks();
});

const SMS = 4; // multiprocessors of the fake GPU

function randomData(n: number, d: number, dtype: 'f32' | 'f16', seed: number, offset = 0): { ds: Dataset; X: Float64Array } {
  const r = rng(seed);
  const X = new Float64Array(n * d);
  const data = dtype === 'f32' ? new Float32Array(n * d) : new Uint16Array(n * d);
  for (let e = 0; e < n * d; e++) {
    const v = offset + (r() - 0.5) * 4 + (e % 3);
    if (dtype === 'f32') X[e] = (data[e] = v);
    else X[e] = f16ToF32((data[e] = f32ToF16(v)));
  }
  return { ds: datasetFromArray(data, n, d, 'test'), X };
}

function anchorsFrom(X: Float64Array, d: number, m: number, stride: number): Float32Array {
  const C = new Float32Array(m * d);
  for (let j = 0; j < m; j++) for (let k = 0; k < d; k++) C[j * d + k] = X[j * stride * d + k];
  return C;
}

async function backendOn(fake: FakeCuda) {
  setDriverForTests(fake.api);
  return createCudaBackend(0, {});
}

/** The same passes on both engines; every observable must agree. */
async function expectSameRuns(resident: CudaEngine, tiled: CudaEngine, C: Float32Array, n: number, m: number): Promise<void> {
  await resident.setAnchors(C);
  await tiled.setAnchors(C);
  for (const p of [
    { temperature: 0.8, step: 0.5, huber: 1.5 },
    { temperature: 0.3, step: 0.7, huber: 1.0 },
    { temperature: 0, step: 1, huber: 0 },
  ]) {
    const a = await resident.iterate(p);
    const b = await tiled.iterate(p);
    expect(b.energy).toBe(a.energy);
    expect(b.changed).toBe(a.changed);
    expect(Array.from(await tiled.getAnchors())).toEqual(Array.from(await resident.getAnchors()));
  }
  const fa = await resident.finalize();
  const fb = await tiled.finalize();
  expect(fb.energy).toBe(fa.energy);
  expect(fb.changed).toBe(fa.changed);
  expect(Array.from(await tiled.assignments())).toEqual(Array.from(await resident.assignments()));
  const sa = await resident.stats();
  const sb = await tiled.stats();
  expect(Array.from(sb.count)).toEqual(Array.from(sa.count));
  expect(Array.from(sb.far)).toEqual(Array.from(sa.far)); // indexes in the whole data, not the tile
  expect(Array.from(sb.farDist)).toEqual(Array.from(sa.farDist));
  expect(Array.from(sb.sse)).toEqual(Array.from(sa.sse));
  expect(sa.count.reduce((x, y) => x + y, 0)).toBe(n);
  expect(tiled.profile.screenPasses).toBe(resident.profile.screenPasses);
  expect(tiled.profile.screenFallbacks).toBe(resident.profile.screenFallbacks);
}

describe('CUDA engine, vectors in tiles (fake driver)', () => {
  for (const [dtype, screen] of [['f32', false], ['f16', false], ['f32', true], ['f16', true]] as const) {
    it(`tiled = resident: n = 601 in tiles of 256 (${dtype}${screen ? ', screened' : ''})`, async () => {
      const n = 601, d = 7, m = 5;
      const { ds, X } = randomData(n, d, dtype, 7);
      const fake = new FakeCuda();
      const backend = await backendOn(fake);
      const resident = await backend.open(ds, m, { screen });
      const tiled = await backend.open(ds, m, { screen, tileRows: 256 });
      expect(resident.tiling).toBe(null);
      expect(tiled.tiling).toEqual({ rows: 256, tiles: 3 }); // 256 + 256 + 89
      const before = fake.launches.length;
      await expectSameRuns(resident, tiled, anchorsFrom(X, d, m, 37), n, m);
      // Each pass: one reduce per tile on the tiled engine, one on the resident one.
      expect(fake.launches.slice(before).filter((k) => k === 'reduce_tally').length).toBe(4 * (1 + 3));
      if (screen) expect(resident.profile.screenPasses).toBe(4);
      await backend.close();
      expect(fake.live).toBe(0);
    });
  }

  it('the atomic reduce (A/B runs) gives the sorted reduce\'s bits: resident sorted = tiled atomic, f16', async () => {
    const n = 601, d = 9, m = 7;
    const { ds, X } = randomData(n, d, 'f16', 13);
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    const sorted = await backend.open(ds, m, {});
    const atomic = await backend.open(ds, m, { reduce: 'atomic', tileRows: 256 });
    const before = fake.launches.length;
    await expectSameRuns(sorted, atomic, anchorsFrom(X, d, m, 41), n, m);
    const launched = fake.launches.slice(before);
    // Four passes: three accumulate (tally, offsets, scatter, sums), the final assignment only tallies.
    expect(launched.filter((k) => k === 'reduce_sums_f16').length).toBe(3);
    expect(launched.filter((k) => k === 'reduce_tally').length).toBe(4);
    expect(launched.filter((k) => k === 'reduce_points_f16').length).toBe(4 * 3);
    await backend.close();
    expect(fake.live).toBe(0);
  });

  for (const order of ['copies-first', 'kernels-first'] as const) {
    it(`double buffering: tiles cut into several staging chunks, uploads run ${order}: tiled = resident`, async () => {
      const n = 1500, d = 12, m = 6;
      const { ds, X } = randomData(n, d, 'f32', 11);
      const fake = new FakeCuda({ order });
      const backend = await backendOn(fake);
      const resident = await backend.open(ds, m, {});
      // 256 rows × 48 bytes = 12 KiB a tile, through two chunks of 5000 bytes: 3 copies a tile.
      const tiled = await backend.open(ds, m, { tileRows: 256, stagingBytes: 5000 });
      expect(tiled.tiling).toEqual({ rows: 256, tiles: 6 });
      await expectSameRuns(resident, tiled, anchorsFrom(X, d, m, 101), n, m);
      expect(fake.hostAllocs).toBe(2);
      expect(fake.overlappedCopies).toBeGreaterThan(0);
      await backend.close();
      expect([fake.live, fake.livePinned]).toEqual([0, 0]);
    });
  }

  it('the screen in tiles: fallback lists per tile (some points, then all), counted like the resident pass', async () => {
    const n = 777, d = 16, m = 100; // more anchors than the 64 candidates collect_h gathers
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    // Anchors 30..99 are copies of anchor 0: a point nearest to it has 71 anchors at the same
    // distance, more than the screen's 8 keys and collect_h's 64 candidates, so it takes the direct
    // pass; the other points are decided. Both happen in every tile.
    {
      const { ds, X } = randomData(n, d, 'f32', 5);
      const resident = await backend.open(ds, m, { screen: true });
      const tiled = await backend.open(ds, m, { screen: true, tileRows: 256 });
      const C = anchorsFrom(X, d, m, 7);
      for (let j = 30; j < m; j++) C.copyWithin(j * d, 0, d);
      // (the engines screen: 777·100·16 < 2^24 is below 'auto', the option forces it)
      await expectSameRuns(resident, tiled, C, n, m);
      const perPass = resident.profile.screenFallbacks / resident.profile.screenPasses;
      expect(perPass).toBeGreaterThan(0);
      expect(perPass).toBeLessThan(n);
      expect(tiled.screening).toBe(resident.screening);
      await resident.dispose();
      await tiled.dispose();
    }
    // Two tight groups far apart: around their mean the screen's bound swamps every gap, every
    // point falls back, and both engines stop screening.
    {
      const { ds, X } = randomData(n, d, 'f32', 5);
      const far = viewAll(ds) as Float32Array;
      for (let e = 0; e < n * d; e++) far[e] = X[e] = Math.fround(X[e] * 0.01 + (Math.floor(e / d) % 2 ? 3000 : -3000));
      const resident = await backend.open(ds, 2 * m, { screen: true });
      const tiled = await backend.open(ds, 2 * m, { screen: true, tileRows: 512 });
      const C = anchorsFrom(X, d, 2 * m, 3); // rows 0, 3, 6, ...: 100 anchors in each group, more than collect_h's 64
      await resident.setAnchors(C);
      await tiled.setAnchors(C);
      expect((await tiled.finalize()).energy).toBe((await resident.finalize()).energy);
      expect(Array.from(await tiled.assignments())).toEqual(Array.from(await resident.assignments()));
      expect(tiled.profile.screenFallbacks).toBe(resident.profile.screenFallbacks);
      expect(tiled.profile.screenFallbacks).toBeGreaterThan(0.25 * n);
      expect(tiled.screening).toBe(false);
      expect(resident.screening).toBe(false);
    }
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('wide rows gather up to 256 candidates a point: 100 tied anchors are decided without the direct pass', async () => {
    // Anchors 30..129 are copies of anchor 0: a point nearest to it has 100 anchors at the same
    // distance. At d = 16 (64 candidates) those points take the direct pass; at d = 256 (256
    // candidates, screen.ts collectFor) collect_h gathers them all and exact_collect decides.
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    const fallbacks: number[] = [];
    for (const d of [16, 256]) {
      const n = 301, m = 130;
      const { ds, X } = randomData(n, d, 'f32', 11);
      const resident = await backend.open(ds, m, { screen: true });
      const tiled = await backend.open(ds, m, { screen: true, tileRows: 256 });
      const C = anchorsFrom(X, d, m, 2);
      for (let j = 30; j < m; j++) C.copyWithin(j * d, 0, d);
      await expectSameRuns(resident, tiled, C, n, m);
      fallbacks.push(resident.profile.screenFallbacks);
      await resident.dispose();
      await tiled.dispose();
    }
    expect(fallbacks[0]).toBeGreaterThan(0);
    expect(fallbacks[1]).toBe(0);
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('k-means++ support in tiles equals the resident engine (tiles of 512, the last partial)', async () => {
    const n = 2500, d = 5;
    const { ds, X } = randomData(n, d, 'f16', 11);
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    const resident = await backend.open(ds, 4);
    const tiled = await backend.open(ds, 4, { tileRows: 512 });
    expect(tiled.tiling).toEqual({ rows: 512, tiles: 5 });
    const c0 = Float32Array.from(X.subarray(0, d));
    const c1 = Float32Array.from(X.subarray(1500 * d, 1501 * d));
    const s0 = await resident.seedBegin(c0);
    expect(await tiled.seedBegin(c0)).toBe(s0);
    for (const cands of [new Float32Array([...c1, ...c0]), new Float32Array([...c0, ...c1, ...c1, ...c0, ...c1, ...c0, ...c1, ...c0, ...c1])]) {
      expect(Array.from(await tiled.seedTry(cands))).toEqual(Array.from(await resident.seedTry(cands)));
    }
    const s1 = await resident.seedAdd(c1);
    expect(await tiled.seedAdd(c1)).toBe(s1);
    for (const frac of [0, 0.1, 0.4999, 0.77, 0.999999]) {
      expect(await tiled.seedPick(frac * s1)).toBe(await resident.seedPick(frac * s1));
    }
    expect(Array.from(await tiled.row(2499))).toEqual(Array.from(await resident.row(2499)));
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('sizes the tile from the memory it may use, and says once that the run is tiled', async () => {
    const n = 5000, d = 64, m = 8;
    const { ds, X } = randomData(n, d, 'f32', 3);
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    const resident = await backend.open(ds, m);
    const residentBytes = engineBytes(n, d, m, 'f32', SMS);
    const held = backend.ctx.pool.bytesInUse;
    expect(held).toBeLessThanOrEqual(residentBytes + 2048); // engineBytes covers what is allocated
    // Room for everything: resident, nothing said.
    const roomy = await backend.open(ds, m, { maxDeviceBytes: residentBytes });
    expect(roomy.tiling).toBe(null);
    await roomy.dispose();
    expect(warn).not.toHaveBeenCalled();
    // Half the vectors' worth less: tiles, as large as fit, a multiple of 256 rows.
    const budget = residentBytes - (n * d * 4) / 2;
    const tiled = await backend.open(ds, m, { maxDeviceBytes: budget });
    const t = tiled.tiling!;
    expect(t.rows % 256).toBe(0);
    expect(t.rows).toBeGreaterThan(256);
    expect(t.tiles).toBe(Math.ceil(n / t.rows));
    expect(t.tiles).toBeGreaterThan(1);
    expect(backend.ctx.pool.bytesInUse - held).toBeLessThanOrEqual(budget);
    expect(engineBytes(n, d, m, 'f32', SMS, t.rows + 256)).toBeGreaterThan(budget - budget / 16); // no larger tile fits the margin
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toMatch(
      new RegExp(`5000×64 f32 vectors with 8 anchors need .+ of GPU memory on cuda:0, .+ allowed \\(VLC_CUDA_MAX_BYTES\\), .+ free of .+: streaming the vectors from host memory in ${t.tiles} tiles of ${t.rows} rows, which is slower \\(each pass and each k-means\\+\\+ step copies the 1\\.2 MiB of vectors to the GPU again\\)$`),
    );
    const C = anchorsFrom(X, d, m, 97);
    await resident.setAnchors(C);
    await tiled.setAnchors(C);
    expect((await tiled.iterate({ temperature: 0.5, step: 1, huber: 1 })).energy).toBe((await resident.iterate({ temperature: 0.5, step: 1, huber: 1 })).energy);
    expect(Array.from(await tiled.getAnchors())).toEqual(Array.from(await resident.getAnchors()));
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('the same from VLC_CUDA_MAX_BYTES with a unit (the backend reads it once, as options)', async () => {
    const n = 1000, d = 256, m = 4; // 500 KiB of f16 vectors
    const { ds } = randomData(n, d, 'f16', 9);
    const fake = new FakeCuda();
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0, cudaOptionsFromEnv({ VLC_CUDA_MAX_BYTES: '400K' }));
    expect(backend.options.maxDeviceBytes).toBe(400 * 1024);
    const e = await backend.open(ds, m);
    expect(e.tiling).not.toBe(null);
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('when even tiles of 256 rows do not fit: bytes needed and free, exit 3, nothing held', async () => {
    const n = 3000, d = 32, m = 100;
    const { ds } = randomData(n, d, 'f32', 4);
    const fake = new FakeCuda({ freeBytes: 2 ** 30 });
    const backend = await backendOn(fake);
    const minimal = engineBytes(n, d, m, 'f32', SMS, 256);
    const err = await backend.open(ds, m, { maxDeviceBytes: minimal - 1 }).catch((e: unknown) => e as Error & { exitCode: number });
    expect(err).toBeInstanceOf(Error);
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(
      `the data do not fit on cuda:0: 3000×32 f32 vectors with 100 anchors need ${fmtBytes(minimal)} of GPU memory even with the vectors ` +
        `streamed from host memory in tiles of 256 rows (${fmtBytes(engineBytes(n, d, m, 'f32', SMS))} with all of them on the GPU), ` +
        `${fmtBytes(minimal - 1)} allowed (VLC_CUDA_MAX_BYTES), 1.00 GiB free of 80.00 GiB; use fewer vectors or anchors, another GPU (--gpu), or --device cpu`,
    );
    expect(backend.ctx.pool.count).toBe(0);
    // Exactly the minimal need: a tile of 256 rows.
    const e = await backend.open(ds, m, { maxDeviceBytes: minimal });
    expect(e.tiling).toEqual({ rows: 256, tiles: 12 });
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('an out-of-memory error at any allocation of a tiled engine frees everything', async () => {
    const { ds } = randomData(600, 8, 'f32', 2);
    const probe = new FakeCuda();
    const b0 = await backendOn(probe);
    await b0.open(ds, 4, { tileRows: 256 });
    await b0.close();
    for (let k = 1; k <= probe.allocs; k++) {
      const fake = new FakeCuda({ oomAtAlloc: k });
      const backend = await backendOn(fake);
      await expect(backend.open(ds, 4, { tileRows: 256 })).rejects.toThrow(/out of GPU memory on cuda:0/);
      expect(backend.ctx.pool.count, `allocation ${k}`).toBe(0);
      await backend.close();
      expect(fake.live).toBe(0);
    }
  });

  it('tileRows must be a positive multiple of 256', async () => {
    const { ds } = randomData(300, 4, 'f32', 1);
    const fake = new FakeCuda();
    const backend = await backendOn(fake);
    await expect(backend.open(ds, 2, { tileRows: 100 })).rejects.toThrow(/tileRows must be a positive multiple of 256, got 100/);
    await backend.close();
    expect(fake.live).toBe(0);
  });
});
