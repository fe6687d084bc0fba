// GPU suite (npm run test:gpu, on the GPU machine): every kernel family against the f64 reference
// of engine.ts on random inputs of awkward sizes, f32 and f16, with outputs poisoned before launch;
// the whole loop's parity with the CPU backend; error paths. Skipped visibly without a GPU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCuda, createCudaBackend, type CudaEngine } from '../../dist/backend/cuda/index.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { runParity } from '../../dist/bench/parity.js';
import { nearestOtherOnCpu } from '../../dist/backend/cpu/nearest.js';
import { makeKernel } from '../../dist/backend/cpu/kernel.js';
import { datasetFromArray, f16ToF32, f32ToF16, type Dataset } from '../../dist/vectors/dataset.js';
import { refPass, dist, type RefState } from '../cuda-host/reference.js';
import { rng } from '../rng.js';
import { launch } from '../../dist/backend/cuda/kernels.js';
import { randomData } from './data.js';

const probe = probeCuda();
const hasGpu = probe.ok;

describe.skipIf(hasGpu)('GPU suite', () => {
  it(`skipped: ${probe.ok ? '' : probe.reason}`, () => {
    expect(probe.ok).toBe(false);
  });
});

/** Anchors: rows of X (some repeated, to exercise ties) nudged slightly. */
function anchorsFrom(X: Float64Array, n: number, d: number, m: number, seed: number): Float32Array {
  const r = rng(seed);
  const C = new Float32Array(m * d);
  for (let j = 0; j < m; j++) {
    const i = j % 5 === 4 && j > 0 ? -1 : Math.floor(r() * n);
    for (let k = 0; k < d; k++) C[j * d + k] = i < 0 ? C[(j - 1) * d + k] : X[i * d + k] + (r() - 0.5) * 0.1;
  }
  return C;
}

// n from 1 to 10^5; d in 1, 3, 17, 64, 128, 384, 784, 1536; m from 1 to 4096.
const CASES: Array<{ n: number; d: number; m: number; dtype: 'f32' | 'f16' }> = [
  { n: 1, d: 1, m: 1, dtype: 'f32' },
  { n: 2, d: 3, m: 1, dtype: 'f16' },
  { n: 37, d: 17, m: 3, dtype: 'f32' },
  { n: 1000, d: 64, m: 32, dtype: 'f16' },
  { n: 129, d: 128, m: 129, dtype: 'f32' },
  { n: 2049, d: 384, m: 257, dtype: 'f16' },
  { n: 700, d: 784, m: 100, dtype: 'f32' },
  { n: 300, d: 1536, m: 65, dtype: 'f16' },
  { n: 100000, d: 3, m: 7, dtype: 'f32' },
  { n: 3001, d: 17, m: 4096, dtype: 'f32' },
  { n: 5000, d: 64, m: 1000, dtype: 'f16' },
];

describe.skipIf(!hasGpu)('CUDA kernels vs the reference', () => {
  let backend: Awaited<ReturnType<typeof createCudaBackend>>;
  beforeAll(async () => {
    backend = await createCudaBackend(0);
  });
  afterAll(async () => {
    await backend?.close();
  });

  // Each case three ways: the direct assign, the fp16 screen with the portable mma.sync kernel, and
  // with the wgmma kernels (on a Hopper; elsewhere the option changes nothing).
  const VARIANTS = [
    { screen: false, wgmma: false, label: '' },
    { screen: true, wgmma: false, label: ' screened (mma.sync)' },
    { screen: true, wgmma: true, label: ' screened (wgmma)' },
  ];
  for (const c of CASES.flatMap((k) => VARIANTS.map((v) => ({ ...k, ...v })))) {
    it(`assign/reduce/update n=${c.n} d=${c.d} m=${c.m} ${c.dtype}${c.label}`, async () => {
      const { n, d, m } = c;
      const { ds, X } = randomData(n, d, c.dtype, n * 31 + d * 7 + m, 3);
      const C0 = anchorsFrom(X, n, d, m, 99);
      const engine = (await backend.open(ds, m, { screen: c.screen, wgmma: c.wgmma })) as CudaEngine;
      try {
        await engine.setAnchors(C0);
        const prev: RefState = { count: new Float64Array(m), sse: new Float64Array(m), hasPrev: false };
        let anchors: ArrayLike<number> = C0;
        for (const p of [
          { temperature: 0.05, step: 0.5, huber: 1.5 },
          { temperature: 0.01, step: 0.8, huber: 1.0 },
        ]) {
          engine.poisonForTests();
          const s = await engine.iterate(p);
          const r = refPass(X, n, d, anchors, m, p.temperature, p.step, p.huber, prev);
          expect(Math.abs(s.energy - r.energy)).toBeLessThanOrEqual(1e-4 * (r.energy + 1e-6));
          const got = await engine.getAnchors();
          // A near-tie decided the other way in f32 moves a point between two anchors: allow a few.
          let off = 0;
          for (let j = 0; j < m; j++) {
            let worst = 0;
            for (let k = 0; k < d; k++) {
              const e = j * d + k;
              worst = Math.max(worst, Math.abs(got[e] - r.anchors[e]) / (Math.abs(r.anchors[e]) + 1e-2));
            }
            if (worst > 1e-3) off++;
          }
          expect(off).toBeLessThanOrEqual(2 + Math.floor(m / 100));
          anchors = got;
        }
        engine.poisonForTests();
        const fin = await engine.finalize();
        const r = refPass(X, n, d, anchors, m, 0, 0, 0, prev);
        expect(Math.abs(fin.energy - r.energy)).toBeLessThanOrEqual(1e-4 * (r.energy + 1e-6));
        const a = await engine.assignments();
        let bad = 0;
        for (let i = 0; i < n; i++) {
          if (a[i] === r.j1[i]) continue;
          // only a near-tie may differ, and then the GPU's choice must be (nearly) as close
          const dg = dist(X, i, anchors, a[i], d);
          if (!(a[i] < m) || Math.abs(dg - r.d1[i]) > 1e-4 * (r.d1[i] + 1e-6)) bad++;
        }
        expect(bad).toBe(0);
        if (c.screen && m >= 3) {
          expect(engine.profile.screenPasses).toBeGreaterThan(0);
          console.log(`${engine.screenKernel} n=${n} d=${d} m=${m}: ${engine.profile.screenFallbacks} fallbacks in ${engine.profile.screenPasses} passes`);
        }
        const st = await engine.stats();
        let cnt = 0;
        for (let j = 0; j < m; j++) cnt += st.count[j];
        expect(cnt).toBe(n);
        for (let j = 0; j < m; j++) {
          if (st.count[j] === 0) expect(st.far[j]).toBe(-1);
          else {
            expect(a[st.far[j]]).toBe(j);
            expect(st.farDist[j]).toBeGreaterThanOrEqual(0);
          }
        }
      } finally {
        await engine.dispose();
      }
    });
  }

  // The sorted reduce (the default) against the atomic one (VLC_CUDA_REDUCE=atomic): both add the
  // same integer terms, so anchors, energies and statistics must agree bit for bit; soft shares
  // (temperature > 0) and Huber weights on; many points per anchor, few, and a tiled engine.
  const REDUCES: Array<{ n: number; d: number; m: number; dtype: 'f32' | 'f16'; tileRows?: number }> = [
    { n: 100003, d: 131, m: 7, dtype: 'f16' },
    { n: 70001, d: 96, m: 61, dtype: 'f16' }, // rows of a multiple of 4: reduce_sums' vector loads
    { n: 50021, d: 67, m: 2999, dtype: 'f32' },
    { n: 30011, d: 390, m: 257, dtype: 'f32', tileRows: 8192 },
    { n: 777, d: 1, m: 5, dtype: 'f16' },
  ];
  for (const c of REDUCES) {
    it(`sorted reduce = atomic reduce, bit for bit: n=${c.n} d=${c.d} m=${c.m} ${c.dtype}${c.tileRows ? ', tiled' : ''}`, async () => {
      const { n, d, m } = c;
      const { ds, X } = randomData(n, d, c.dtype, n + d + m, 3);
      const C0 = anchorsFrom(X, n, d, m, 5);
      const sorted = (await backend.open(ds, m, { tileRows: c.tileRows })) as CudaEngine;
      const atomic = (await backend.open(ds, m, { reduce: 'atomic' })) as CudaEngine;
      try {
        for (const e of [sorted, atomic]) await e.setAnchors(C0);
        for (const p of [
          { temperature: 0.2, step: 0.5, huber: 1.5 },
          { temperature: 0.02, step: 0.9, huber: 1.0 },
          { temperature: 0, step: 1, huber: 0 },
        ]) {
          sorted.poisonForTests();
          const a = await sorted.iterate(p);
          const b = await atomic.iterate(p);
          expect(a.energy).toBe(b.energy);
          expect(a.changed).toBe(b.changed);
          expect(Array.from(await sorted.getAnchors())).toEqual(Array.from(await atomic.getAnchors()));
        }
        const [sa, sb] = [await sorted.stats(), await atomic.stats()];
        expect(Array.from(sa.count)).toEqual(Array.from(sb.count));
        expect(Array.from(sa.sse)).toEqual(Array.from(sb.sse));
        expect(Array.from(sa.far)).toEqual(Array.from(sb.far));
      } finally {
        await sorted.dispose();
        await atomic.dispose();
      }
    });
  }

  // Maintenance's nearest other anchor on the device (engine.nearestOther) against the CPU
  // backend's (src/backend/cpu/nearest.ts). Distances are both f32 but summed in other orders
  // (four wasm lanes vs one sequence), so only a near-tie may pick another anchor; duplicates must
  // match exactly.
  for (const [m, d] of [[1, 3], [2, 1], [3, 17], [257, 128], [1000, 384], [2048, 128], [4096, 17]]) {
    it(`nearestOther m=${m} d=${d} vs the CPU backend (exact duplicates)`, async () => {
      const { ds, X } = randomData(Math.max(m, 2), d, 'f16', m + d, 3);
      const C = anchorsFrom(X, ds.n, d, m, 7); // every fifth anchor repeats the one before
      if (m >= 3) C.copyWithin((m - 1) * d, 0, d); // and the last repeats the first
      const engine = (await backend.open(ds, m)) as CudaEngine;
      try {
        await engine.setAnchors(C);
        await engine.nearestOther(); // allocates its buffers: poison them for the checked call
        engine.poisonForTests();
        const got = await engine.nearestOther();
        const want = nearestOtherOnCpu(makeKernel('wasm'), C, m, d);
        const tol = 4 * d * 2 ** -24;
        let ties = 0;
        for (let j = 0; j < m; j++) {
          if (want.dist[j] === 0 || m < 2) {
            expect([got.idx[j], got.dist[j]], `anchor ${j}`).toEqual([want.idx[j], want.dist[j]]);
            continue;
          }
          expect(Math.abs(got.dist[j] - want.dist[j]), `anchor ${j}`).toBeLessThanOrEqual(tol * want.dist[j]);
          if (got.idx[j] === want.idx[j]) continue;
          // another anchor at (nearly) the same distance: allowed, if it is not j itself
          ties++;
          expect(got.idx[j] >= 0 && got.idx[j] < m && got.idx[j] !== j, `anchor ${j}`).toBe(true);
          expect(Math.abs(dist(C, j, C, got.idx[j], d) - want.dist[j])).toBeLessThanOrEqual(tol * want.dist[j]);
        }
        expect(ties).toBeLessThanOrEqual(1 + Math.floor(m / 1000));
      } finally {
        await engine.dispose();
      }
    });
  }

  // The screens must really screen (keys that certify nothing would send every point to the
  // fallback and still pass the tests above) and give the direct pass's results bit for bit: the
  // same assignments and the same distances (hence the same fixed-point energy). Near the origin
  // and far from it (the screen works around the data's mean).
  // The last case: anchors 50..249 are copies of anchor 0, so the points nearest to it have 200
  // anchors at one distance; on wide rows collect_h gathers up to 256 candidates (screen.ts
  // collectFor) and exact_collect decides them: no point takes the direct pass.
  for (const [dtype, offset, m, d, ties] of [
    ['f32', 0, 301, 131, 0], ['f16', 0, 301, 131, 0], ['f32', 50, 301, 131, 0], ['f32', 0, 3000, 131, 0], ['f32', 0, 401, 300, 200],
  ] as const) {
    it(`the screens decide most points and equal the direct assign bit for bit (${dtype}, clustered + ${offset}, n=20011 d=${d} m=${m}, ${ties} tied anchors)`, async () => {
      const n = 20011;
      const r = rng(17);
      const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
      const centres = Float64Array.from({ length: 64 * d }, gauss);
      const X = new Float64Array(n * d);
      const data = dtype === 'f32' ? new Float32Array(n * d) : new Uint16Array(n * d);
      for (let i = 0; i < n; i++) {
        const c = Math.floor(r() * 64);
        for (let k = 0; k < d; k++) {
          const v = centres[c * d + k] + 0.3 * gauss() + offset;
          if (dtype === 'f32') X[i * d + k] = (data[i * d + k] = v);
          else X[i * d + k] = f16ToF32((data[i * d + k] = f32ToF16(v)));
        }
      }
      const ds: Dataset = datasetFromArray(data, n, d, 'test');
      const C0 = anchorsFrom(X, n, d, m, 5);
      for (let j = 50; j < 50 + ties; j++) C0.copyWithin(j * d, 0, d);
      const runs: Array<{ a: Uint32Array; fallbacks: number; energy: number; sse: Float64Array; kernel: string }> = [];
      for (const o of [{ screen: false }, { screen: true, wgmma: false }, { screen: true, wgmma: true }]) {
        const e = (await backend.open(ds, m, o)) as CudaEngine;
        try {
          await e.setAnchors(C0);
          e.poisonForTests();
          const s = await e.finalize();
          runs.push({ a: await e.assignments(), fallbacks: e.profile.screenFallbacks, energy: s.energy, sse: (await e.stats()).sse, kernel: e.screenKernel });
        } finally {
          await e.dispose();
        }
      }
      const [direct, ...screened] = runs;
      for (const s of screened) {
        console.log(`clustered ${dtype} + ${offset}, m=${m}: ${s.kernel} ${s.fallbacks} fallbacks of ${n}`);
        expect(s.kernel).not.toBe('direct');
        expect(s.fallbacks).toBeLessThan(ties ? 1 : 0.1 * n);
        expect(s.energy).toBe(direct.energy);
        expect(Array.from(s.sse)).toEqual(Array.from(direct.sse));
        let differ = 0;
        for (let i = 0; i < n; i++) differ += s.a[i] !== direct.a[i] ? 1 : 0;
        expect(differ).toBe(0);
      }
    });
  }

  it('k-means++ kernels: sums, tries, picks and rounds (f16, n=100000 d=17)', async () => {
    const n = 100000, d = 17;
    const { ds, X } = randomData(n, d, 'f16', 5);
    const engine = (await backend.open(ds, 8)) as CudaEngine;
    try {
      engine.poisonForTests();
      const c0 = Float32Array.from(X.subarray(0, d));
      const c1 = Float32Array.from(X.subarray(77777 * d, 77778 * d));
      const D = new Float64Array(n);
      for (let i = 0; i < n; i++) D[i] = dist(X, i, c0, 0, d);
      const s0 = D.reduce((p, q) => p + q, 0);
      expect(Math.abs((await engine.seedBegin(c0)) - s0)).toBeLessThan(1e-5 * s0);
      const tries = await engine.seedTry(new Float32Array([...c1, ...c0, ...c1]));
      let t1 = 0;
      for (let i = 0; i < n; i++) t1 += Math.min(D[i], dist(X, i, c1, 0, d));
      expect(Math.abs(tries[0] - t1)).toBeLessThan(1e-5 * t1);
      expect(Math.abs(tries[1] - s0)).toBeLessThan(1e-5 * s0);
      expect(tries[2]).toBe(tries[0]);
      for (let i = 0; i < n; i++) D[i] = Math.min(D[i], dist(X, i, c1, 0, d));
      const s1 = D.reduce((p, q) => p + q, 0);
      expect(Math.abs((await engine.seedAdd(c1)) - s1)).toBeLessThan(1e-5 * s1);
      for (const frac of [0, 0.25, 0.5, 0.9, 0.999]) {
        const target = frac * s1;
        let acc = 0, want = n - 1;
        for (let i = 0; i < n; i++) if ((acc += D[i]) > target) { want = i; break; }
        expect(Math.abs((await engine.seedPick(target)) - want)).toBeLessThanOrEqual(2);
      }
      const row = await engine.row(4242);
      for (let k = 0; k < d; k++) expect(row[k]).toBe(X[4242 * d + k]);
      // k-means++ in rounds: 131 candidates (two tiles of 128, the second mostly empty) in one pass.
      const L = 131;
      const C = new Float32Array(L * d);
      for (let l = 0; l < L; l++) C.set(X.subarray(((l * 7919) % n) * d, ((l * 7919) % n + 1) * d), l * d);
      for (let i = 0; i < n; i++) for (let l = 0; l < L; l++) D[i] = Math.min(D[i], dist(X, i, C, l, d));
      const s2 = D.reduce((p, q) => p + q, 0);
      const many = await engine.seedAddMany(C);
      expect(Math.abs(many - s2)).toBeLessThan(1e-5 * s2);
      const targets = Float64Array.from([0.6, 0, 0.3, 0.999, 0.3], (f) => f * many);
      const single = [];
      for (const t of targets) single.push(await engine.seedPick(t));
      expect(Array.from(await engine.seedPickMany(targets))).toEqual(single);
      for (const [j, t] of targets.entries()) {
        let acc = 0, want = n - 1;
        for (let i = 0; i < n; i++) if ((acc += D[i]) > t) { want = i; break; }
        expect(Math.abs(single[j] - want)).toBeLessThanOrEqual(2);
      }
    } finally {
      await engine.dispose();
    }
  });

  // k-means++ rounds on an engine that screens go through the screen (seeding.ts addMany → seed_min):
  // the same sums and picks as seed_many's, round after round on one D, clustered data with exact
  // duplicates (ties), resident and in tiles, the outputs poisoned first.
  for (const [dtype, d, tileRows] of [['f16', 128, 0], ['f32', 67, 0], ['f16', 131, 65536]] as const) {
    it(`k-means++ rounds through the screen = seed_many (${dtype}, n=150001 d=${d}, m=2048${tileRows ? ', tiled' : ''})`, async () => {
      const n = 150001, m = 2048;
      const { ds, X } = randomData(n, d, dtype, 41);
      const tiles = tileRows ? { tileRows } : {};
      const screened = await createCudaBackend(0, { screen: true, ...tiles });
      const direct = await createCudaBackend(0, { screen: false, ...tiles });
      const a = (await screened.open(ds, m)) as CudaEngine;
      const b = (await direct.open(ds, m)) as CudaEngine;
      try {
        a.poisonForTests();
        b.poisonForTests();
        const c0 = Float32Array.from(X.subarray(0, d));
        expect(await a.seedBegin(c0)).toBe(await b.seedBegin(c0));
        let at = 1;
        const ms = [0, 0];
        for (const L of [131, 1000, 2048, 700, 2049]) {
          const C = new Float32Array(L * d);
          // Some candidates twice, some rows twice in the data (randomData's levels repeat every 7 rows).
          for (let l = 0; l < L; l++) C.set(X.subarray(((l % 97 === 5 ? at - 1 : at) * 7919 % n) * d, (((l % 97 === 5 ? at - 1 : at) * 7919 % n) + 1) * d), l * d), at++;
          let t = performance.now();
          const ta = await a.seedAddMany(C);
          ms[0] += performance.now() - t;
          t = performance.now();
          const tb = await b.seedAddMany(C);
          ms[1] += performance.now() - t;
          expect(ta, `L ${L}`).toBe(tb);
          const targets = Float64Array.from([0, 0.13, 0.5, 0.77, 0.999999], (f) => f * ta);
          expect(Array.from(await a.seedPickMany(targets))).toEqual(Array.from(await b.seedPickMany(targets)));
        }
        console.log(`k-means++ rounds ${dtype} d=${d}${tileRows ? ' tiled' : ''}: screened ${ms[0].toFixed(1)} ms, seed_many ${ms[1].toFixed(1)} ms`);
      } finally {
        await a.dispose();
        await b.dispose();
        await screened.close();
        await direct.close();
      }
    });
  }

  // max_abs (the engine's largest |x|, which sets every fixed-point scale): every count mod 8, starts
  // off a 16-byte boundary, the largest |x| at the first, the last or a middle element, negative or
  // not; an Inf or a NaN anywhere is the answer (the host refuses the data).
  it('max_abs: the largest |x| as f32 bits, from any start, for any count; Inf and NaN found', async () => {
    const r = rng(31);
    const { ctx } = backend;
    const bits = new Uint32Array(1), f = new Float32Array(bits.buffer);
    for (const dtype of ['f32', 'f16'] as const) {
      const eb = dtype === 'f32' ? 4 : 2;
      for (const count of [1, 2, 7, 8, 9, 15, 16, 17, 31, 1000, 4099, 100003]) {
        for (const start of [0, 1, 3, 7]) {
          for (const where of ['first', 'last', 'middle', 'inf', 'nan'] as const) {
            const v = new Float32Array(count).map(() => (r() - 0.5) * 100);
            const at = where === 'first' ? 0 : where === 'last' ? count - 1 : Math.floor(r() * count);
            v[at] = where === 'inf' ? -Infinity : where === 'nan' ? NaN : (r() < 0.5 ? -1 : 1) * 1000.25;
            const host = dtype === 'f32' ? v : Uint16Array.from(v, (x) => f32ToF16(x));
            let want = 0;
            for (let i = 0; i < count; i++) want = Math.max(want, Math.abs(dtype === 'f32' ? v[i] : f16ToF32(host[i])));
            const buf = ctx.pool.alloc('max_abs test', (count + start) * eb + 16);
            const out = ctx.pool.alloc('max_abs out', 4);
            try {
              ctx.upload(buf, new Uint8Array(host.buffer, host.byteOffset, count * eb), start * eb);
              ctx.upload(out, new Uint32Array([0]));
              launch(ctx, 'max_abs', dtype, Math.min(Math.ceil(count / 256), 64), { X: buf.ptr + BigInt(start * eb), count, out: out.ptr });
              await ctx.finish();
              ctx.download(bits, out);
              const label = `${dtype} count ${count} start ${start} ${where}`;
              if (where === 'nan') expect(Number.isNaN(f[0]), label).toBe(true);
              else expect(f[0], label).toBe(want);
            } finally {
              ctx.pool.free(buf);
              ctx.pool.free(out);
            }
          }
        }
      }
    }
  });

  it('parity with the CPU backend: test-cuda small and large', async () => {
    const cpu = createCpuBackend({});
    try {
      for (const size of ['small', 'large'] as const) {
        const r = await runParity(size, backend, cpu);
        console.log(`parity ${size}: gpu ${r.cuda!.ms.toFixed(1)} ms, cpu ${r.cpu.ms.toFixed(1)} ms, energy diff ${(r.energyRelDiff! * 100).toFixed(3)}%, agreement ${(r.agreement! * 100).toFixed(2)}%`);
        expect(r.pass).toBe(true);
      }
    } finally {
      await cpu.close();
    }
  });

  it('error paths: a bad --gpu index, an allocation larger than the card', async () => {
    await expect(createCudaBackend(probe.ok ? probe.devices.length : 0)).rejects.toThrow(/no such GPU; this machine has/);
    const before = backend.ctx.pool.count;
    const total = probe.ok ? probe.devices[0].memoryTotalBytes : 0;
    expect(() => backend.ctx.pool.alloc('too big', total * 2)).toThrow(/out of GPU memory .* needs .* free of/);
    expect(backend.ctx.pool.count).toBe(before);
    // the context still works after the failed allocation
    const { ds } = randomData(10, 3, 'f32', 1);
    const e = await backend.open(ds, 2);
    await e.setAnchors(new Float32Array(6));
    expect((await e.finalize()).changed).toBe(10);
    await e.dispose();
    expect(backend.ctx.pool.count).toBe(before);
  });
});
