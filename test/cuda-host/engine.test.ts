// The CUDA engine's host code (argument lists, buffer handling, seeding bookkeeping, statistics
// decoding) through the fake driver, whose kernels emulate cuda/*.cu, against the plain f64
// reference of engine.ts. The same checks run on a real GPU in test/gpu/kernels.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { datasetFromArray, f32ToF16, f16ToF32, type Dataset, viewAll } from '../../dist/vectors/dataset.js';
import { FakeCuda } from './fake-driver.js';
import { rng } from '../rng.js';
import { refPass, dist, type RefState } from './reference.js';

afterEach(() => setDriverForTests(undefined));

function randomData(n: number, d: number, dtype: 'f32' | 'f16', seed: number): { ds: Dataset; X: Float64Array } {
  const r = rng(seed);
  const X = new Float64Array(n * d);
  const data = dtype === 'f32' ? new Float32Array(n * d) : new Uint16Array(n * d);
  for (let e = 0; e < n * d; e++) {
    const v = (r() - 0.5) * 4 + (e % 3);
    if (dtype === 'f32') X[e] = (data[e] = v);
    else X[e] = f16ToF32((data[e] = f32ToF16(v)));
  }
  return { ds: datasetFromArray(data, n, d, 'test'), X };
}

async function open(ds: Dataset, m: number, screen = false, wgmma = true) {
  const fake = new FakeCuda();
  setDriverForTests(fake.api);
  const backend = await createCudaBackend(0, {});
  const engine = await backend.open(ds, m, { screen, wgmma });
  return { fake, backend, engine };
}

describe('CUDA engine through the fake driver', () => {
  for (const [dtype, screen, wg] of [['f32', false, true], ['f16', false, true], ['f32', true, false], ['f16', true, true], ['f32', true, true]] as const) {
    it(`iterate/finalize/stats match the reference (${dtype}, soft + Huber${screen ? `, screened by ${wg ? 'the wgmma kernels' : 'the mma.sync kernel'}` : ''})`, async () => {
      const n = 301, d = 7, m = 5;
      const { ds, X } = randomData(n, d, dtype, 7);
      const { fake, backend, engine } = await open(ds, m, screen, wg);
      const C = new Float32Array(m * d);
      for (let j = 0; j < m; j++) for (let k = 0; k < d; k++) C[j * d + k] = X[(j * 37) * d + k];
      await engine.setAnchors(C);
      const prev: RefState = { count: new Float64Array(m), sse: new Float64Array(m), hasPrev: false };
      let ref = Float64Array.from(C) as ArrayLike<number>;
      let lastJ1 = new Int32Array(n);
      for (const p of [
        { temperature: 0.8, step: 0.5, huber: 1.5 },
        { temperature: 0.3, step: 0.7, huber: 1.0 },
        { temperature: 0, step: 1, huber: 0 },
      ]) {
        const s = await engine.iterate(p);
        const r = refPass(X, n, d, ref, m, p.temperature, p.step, p.huber, prev);
        expect(s.energy).toBeCloseTo(r.energy, 4);
        const got = await engine.getAnchors();
        for (let e = 0; e < m * d; e++) expect(got[e]).toBeCloseTo(r.anchors[e], 4);
        ref = got; // continue from the engine's f32 anchors
        lastJ1 = r.j1;
      }
      const fin = await engine.finalize();
      const r = refPass(X, n, d, ref, m, 0, 0, 0, prev);
      expect(fin.energy).toBeCloseTo(r.energy, 5);
      expect(fin.changed).toBe(r.j1.filter((j, i) => j !== lastJ1[i]).length);
      const st = await engine.stats();
      expect(Array.from(st.count)).toEqual(Array.from(r.count));
      expect(Array.from(st.far)).toEqual(Array.from(r.far));
      for (let j = 0; j < m; j++) {
        expect(st.sse[j]).toBeCloseTo(r.sse[j], 3);
        expect(st.farDist[j]).toBeCloseTo(r.farDist[j], 4);
      }
      expect(Array.from(await engine.assignments())).toEqual(Array.from(r.j1));
      const prof = (engine as unknown as { profile: { screenPasses: number } }).profile;
      expect(prof.screenPasses).toBe(screen ? 4 : 0);
      await engine.dispose();
      await engine.dispose(); // twice is fine
      await backend.close();
      expect(fake.live).toBe(0);
    });
  }

  it('the screen hands undecidable points to the exact fallback, and stops when most are', async () => {
    const n = 200, d = 16, m = 200; // 100 anchors in each group: more than collect_h's 64 candidates
    const { ds, X } = randomData(n, d, 'f32', 5);
    // Two groups far apart, tight each: around their mean (the screen's centre) the rounding
    // bound of the expansion, which grows with ‖x − μ‖, swamps the gaps between anchors.
    const far = new Float32Array(n * d);
    for (let e = 0; e < n * d; e++) far[e] = (X[e] = Math.fround(X[e] * 0.01 + (Math.floor(e / d) % 2 ? 3000 : -3000)));
    viewAll(ds).set(far);
    const { fake, backend, engine } = await open(ds, m, true);
    const C = new Float32Array(m * d);
    for (let j = 0; j < m; j++) for (let k = 0; k < d; k++) C[j * d + k] = X[j * d + k]; // every row: both groups
    await engine.setAnchors(C);
    const prev: RefState = { count: new Float64Array(m), sse: new Float64Array(m), hasPrev: false };
    const s = await engine.finalize();
    const r = refPass(X, n, d, C, m, 0, 0, 0, prev);
    expect(s.energy).toBeCloseTo(r.energy, 6);
    expect(Array.from(await engine.assignments())).toEqual(Array.from(r.j1));
    const prof = (engine as unknown as { profile: { screenPasses: number; screenFallbacks: number } }).profile;
    expect(prof.screenPasses).toBe(1);
    expect(prof.screenFallbacks).toBeGreaterThan(0.25 * n);
    expect((engine as unknown as { screening: boolean }).screening).toBe(false);
    await backend.close();
    expect(fake.live).toBe(0);
  });

  // Each Hopper screen by the row width that picks it: d 7 → screen_h90mo_k2 (8-key rows), 200 →
  // screen_h90m and 300 → screen_h90 (16-key rows, read by exact_h16), with near-duplicate and
  // duplicate anchors so that some rows need more than 8 keys: the direct pass's assignments and
  // energy (the fake's f32 chain; an f64 reference may order such near-ties otherwise).
  for (const [d, kernel, exact] of [[7, 'screen_h90mo_k2', 'exact_h'], [200, 'screen_h90m', 'exact_h16'], [300, 'screen_h90', 'exact_h16']] as const) {
    it(`${kernel} (d = ${d}): the direct pass's assignments, through ${exact}`, async () => {
      const n = 97, m = 24;
      const { ds, X } = randomData(n, d, 'f32', 11);
      const C = new Float32Array(m * d);
      for (let j = 0; j < m; j++) for (let k = 0; k < d; k++) C[j * d + k] = X[((j % 6) * 13) * d + k] + (j >= 6 ? 1e-3 * (j % 5) : 0);
      const pass = async (screen: boolean) => {
        const { fake, backend, engine } = await open(ds, m, screen);
        const cuda = engine as unknown as { timeKernels(on: boolean): void; kernelTimes(): Promise<Record<string, { launches: number }>> };
        await engine.setAnchors(C);
        cuda.timeKernels(true);
        const s = await engine.iterate({ temperature: 0, step: 0, huber: 0 });
        const out = { energy: s.energy, j1: Array.from(await engine.assignments()), kernel: engine.screenKernel, t: await cuda.kernelTimes() };
        await engine.dispose();
        await backend.close();
        expect(fake.live).toBe(0);
        return out;
      };
      const screened = await pass(true), direct = await pass(false);
      expect(screened.kernel).toBe(kernel);
      expect(screened.t[exact].launches).toBe(1);
      expect(direct.kernel).toBe('direct');
      expect(screened.j1).toEqual(direct.j1);
      expect(screened.energy).toBe(direct.energy);
    });
  }

  it('timeKernels: every launch of a pass is counted per kernel, and nothing after it is switched off', async () => {
    const { ds, X } = randomData(301, 7, 'f32', 3);
    const { fake, backend, engine } = await open(ds, 5, true);
    const cuda = engine as unknown as { timeKernels(on: boolean): void; kernelTimes(): Promise<Record<string, { ms: number; launches: number }>> };
    await engine.setAnchors(Float32Array.from(X.subarray(0, 5 * 7)));
    cuda.timeKernels(true);
    await engine.iterate({ temperature: 0, step: 1, huber: 0 });
    const t = await cuda.kernelTimes();
    expect(t.exact_h.launches).toBe(1);
    expect(t.screen_h90mo_k2.launches).toBe(1);
    expect(t.tile_anchors.launches).toBe(1);
    for (const k of Object.values(t)) expect(k.ms).toBe(0.5 * k.launches); // the fake's elapsed time per event pair
    cuda.timeKernels(false);
    await engine.iterate({ temperature: 0, step: 1, huber: 0 });
    expect(await cuda.kernelTimes()).toEqual({});
    await engine.dispose();
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('first pass counts every point as changed; m = 1 has no runner-up', async () => {
    const { ds } = randomData(50, 3, 'f32', 3);
    const { fake, backend, engine } = await open(ds, 1);
    await engine.setAnchors(new Float32Array([0, 0, 0]));
    expect((await engine.iterate({ temperature: 5, step: 1, huber: 0 })).changed).toBe(50);
    expect((await engine.iterate({ temperature: 5, step: 1, huber: 0 })).changed).toBe(0);
    await backend.close();
    expect(fake.live).toBe(0);
  });

  it('k-means++ support: seedBegin / seedAdd / seedTry / seedPick', async () => {
    const n = 2500, d = 5; // ten seeding blocks of 256 points, the last one partial
    const { ds, X } = randomData(n, d, 'f32', 11);
    const { backend, engine } = await open(ds, 4);
    const c0 = Float32Array.from(X.subarray(0, d));
    const c1 = Float32Array.from(X.subarray(1500 * d, 1501 * d));
    const D = new Float64Array(n);
    for (let i = 0; i < n; i++) D[i] = dist(X, i, c0, 0, d);
    const sum0 = D.reduce((a, b) => a + b, 0);
    expect(await engine.seedBegin(c0)).toBeCloseTo(sum0, 2);
    const tries = await engine.seedTry(new Float32Array([...c1, ...c0]));
    let t1 = 0;
    for (let i = 0; i < n; i++) t1 += Math.min(D[i], dist(X, i, c1, 0, d));
    expect(tries[0]).toBeCloseTo(t1, 2);
    expect(tries[1]).toBeCloseTo(sum0, 2);
    for (let i = 0; i < n; i++) D[i] = Math.min(D[i], dist(X, i, c1, 0, d));
    const sum1 = D.reduce((a, b) => a + b, 0);
    expect(await engine.seedAdd(c1)).toBeCloseTo(sum1, 2);
    for (const frac of [0, 0.1, 0.4999, 0.77, 0.999999]) {
      const target = frac * sum1;
      let acc = 0, want = n - 1;
      for (let i = 0; i < n; i++) {
        acc += D[i];
        if (acc > target) {
          want = i;
          break;
        }
      }
      expect(Math.abs((await engine.seedPick(target)) - want)).toBeLessThanOrEqual(1);
    }
    expect(Array.from(await engine.row(1500))).toEqual(Array.from(c1));
    await backend.close();
  });

  it('vectors with a NaN or an infinity are a usage error (exit 2), as on the CPU, and nothing is held', async () => {
    for (const [dtype, bad] of [['f32', NaN], ['f16', Infinity]] as const) {
      const { ds } = randomData(300, 4, dtype, 2);
      if (dtype === 'f32') (viewAll(ds) as Float32Array)[777] = bad;
      else (viewAll(ds) as Uint16Array)[777] = f32ToF16(bad);
      const fake = new FakeCuda();
      setDriverForTests(fake.api);
      const backend = await createCudaBackend(0, {});
      await expect(backend.open(ds, 3)).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/NaN or infinite values.*--drop-invalid/) });
      expect(backend.ctx.pool.count).toBe(0);
      await backend.close();
      expect(fake.live).toBe(0);
    }
  });
});
