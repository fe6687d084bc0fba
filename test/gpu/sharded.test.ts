// GPU suite (npm run test:gpu, on the GPU machine): a sharded engine over several CUDA engines
// (on the GPUs present, several on one GPU when there are fewer) gives exactly what one engine
// gives on all the rows, on the real device: every k-means++ sum and pick, every pass's energy,
// anchors and statistics, the assignments and a whole anneal, bit for bit (the sums are
// integers: src/backend/engine.ts); and the residual encoders split over 2 or more GPUs give one
// GPU's bytes. Skipped without a GPU (kernels.test.ts reports the reason).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCuda, createCudaBackend } from '../../dist/backend/cuda/index.js';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { anneal } from '../../dist/anneal/index.js';
import { DEFAULT_CONFIG } from '../../dist/anneal/config.js';
import type { Backend } from '../../src/backend/types.js';
import type { Backend as DistBackend } from '../../dist/backend/types.js';
import type { CudaBackend } from '../../src/backend/cuda/index.js';
import { plain, script } from '../sharded/script.js';
import { randomData } from './data.js';
import { bytes, problem } from '../cuda-host/residual-problem.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { BLOCK_ROWS } from '../../dist/codecs/scalar-rows.js';

const probe = probeCuda();
const hasGpu = probe.ok;

/** A member of a sharded backend: opens engines on `b` with options `o`; afterAll closes `b`. */
const member = (b: CudaBackend, o = {}): Backend => ({
  kind: b.kind,
  label: b.label,
  open: (data, m) => b.open(data, m, o),
  openRows: (data, rows, m) => b.openRows(data, rows, m, o),
  encodeScalar: b.encodeScalar.bind(b),
  encodeBits: b.encodeBits.bind(b),
  scalarRanges: b.scalarRanges.bind(b),
  scalarCodes: b.scalarCodes.bind(b),
  encodeScalarRows: b.encodeScalarRows.bind(b),
  encodeBitsRows: b.encodeBitsRows.bind(b),
  decodeRows: b.decodeRows.bind(b),
  smallEnginesAtOnce: b.smallEnginesAtOnce,
  exactKnn: b.exactKnn,
  close: async () => {},
});

describe.skipIf(!hasGpu)('sharded CUDA engines = one engine, on the device', () => {
  const backends: CudaBackend[] = [];
  beforeAll(async () => {
    const gpus = probe.ok ? probe.devices.length : 1;
    for (let k = 0; k < 3; k++) backends.push(await createCudaBackend(k % gpus));
  });
  afterAll(async () => {
    for (const b of backends) await b.close();
  });

  const CASES = [
    { n: 20011, d: 131, m: 301, dtype: 'f32', o: { screen: true }, splits: [[7000, 13011], [1, 10000, 10010]] },
    { n: 20011, d: 131, m: 301, dtype: 'f16', o: { screen: false }, splits: [[10005, 10006], [6000, 257, 13754]] },
    { n: 5003, d: 17, m: 64, dtype: 'f32', o: { screen: true, tileRows: 1024 }, splits: [[2500, 2503], [1000, 1000, 3003]] },
  ] as const;
  for (const c of CASES) {
    it(`n=${c.n} d=${c.d} m=${c.m} ${c.dtype} ${JSON.stringify(c.o)}: the script, N = 2 and 3`, async () => {
      const { ds } = randomData(c.n, c.d, c.dtype, c.n + c.d);
      const members = backends.map((b) => member(b, c.o));
      const single = await members[0].open(ds, c.m);
      const want = await script(single, c.m);
      await single.dispose();
      for (const split of c.splits) {
        const sharded = await shardedBackend(members.slice(0, split.length), () => [...split]).open(ds, c.m);
        try {
          expect(await script(sharded, c.m), `split ${split}`).toEqual(want);
        } finally {
          await sharded.dispose();
        }
      }
    });
  }

  it('a whole anneal (n=100003 d=64 m=256, f16): same anchors, assignments, energies', async () => {
    const { ds } = randomData(100003, 64, 'f16', 9);
    const cfg = { ...DEFAULT_CONFIG, m: 256, maxIters: 60, huber: 1 };
    const one = await backends[0].open(ds, cfg.m);
    const want = await anneal(one, cfg);
    await one.dispose();
    const three = await shardedBackend(backends.map((b) => member(b))).open(ds, cfg.m);
    const got = await anneal(three, cfg);
    await three.dispose();
    console.log(`anneal sharded over 3 engines: ${got.iterations} iterations, energy ${got.energy}; one engine ${want.iterations}, ${want.energy}`);
    expect(plain(got.anchors)).toEqual(plain(want.anchors));
    expect(plain(got.assignments)).toEqual(plain(want.assignments));
    expect(got.history.map((h) => h.energy)).toEqual(want.history.map((h) => h.energy));
  });
});

// The residual encoders split over the GPUs (each codes its own range of whole blocks under one
// plan: codecs/split.ts) = one GPU = the host. Needs 2 GPUs: with fewer the describe is skipped
// (and says so in its name).
const gpuCount = probe.ok ? probe.devices.length : 0;
describe.skipIf(gpuCount < 2)(`residuals split over ${Math.min(4, gpuCount)} GPUs = one GPU = the host (needs 2 or more GPUs; ${gpuCount} here)`, () => {
  const n = 9 * BLOCK_ROWS + 4097, d = 96;
  for (const dtype of ['f16', 'f32'] as const)
    for (const mode of ['int8', 'int4', 'bits'] as const)
      it(`${n} × ${d} ${dtype}, ${mode}`, async () => {
        const input = problem(n, d, 300, dtype, 1, n + d);
        const gpus = await Promise.all(Array.from({ length: Math.min(4, gpuCount) }, (_, k) => createCudaBackend(k)));
        try {
          const encode = (b: Pick<DistBackend, 'encodeBits' | 'encodeScalar'>) => (mode === 'bits' ? b.encodeBits(input, 45) : b.encodeScalar(mode, input));
          const split = await encode(shardedBackend(gpus)); // (not closed: the GPUs are, below)
          const one = await encode(gpus[0]);
          const host = mode === 'bits' ? await encodeBits(input, 45) : await encodeScalar(mode, input);
          const bytesOf = (r: { residuals: { payload(): Uint8Array | Uint8Array[] } }) => bytes(r.residuals.payload());
          expect(bytesOf(split).equals(bytesOf(one))).toBe(true);
          expect(bytesOf(split).equals(bytesOf(host))).toBe(true);
          expect(split.residualEnergy).toBe(one.residualEnergy);
          expect(split.residualEnergy).toBe(host.residualEnergy);
        } finally {
          for (const g of gpus) await g.close();
        }
      }, 180_000);
});
