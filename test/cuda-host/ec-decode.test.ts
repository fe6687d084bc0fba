// The ec section decoded on the GPU (src/backend/cuda/ec.ts; cuda/ec.cu through the fake driver's
// lane-by-lane emulation, fake-ec.ts) = the host's reconstruction bit for bit: both layouts, odd n
// and d (d < 32 too: a warp's lanes span several rows), escapes, uncoded dimensions, ranges that
// start and end inside blocks, several precisions; the backend's CodecDevice.decodeRows (cosine norms
// included) = the host's; the k-NN over an ec base decoded on the device = the CPU's over the host
// decode; a block the GPU cannot decode is an error, not rows; nothing stays allocated.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { rng } from '../rng.js';
import { damagedEc, ecProblem, escapedCodes, expectDecodeRowsAsHost, expectEcRowsEqualHost, type EcLayoutKind } from './ec-problem.js';
import { FakeCuda } from './fake-driver.js';
import { expectSameNeighbours } from './knn-problem.js';

afterEach(() => setDriverForTests(undefined));

async function onFake() {
  const fake = new FakeCuda({ poison: true });
  setDriverForTests(fake.api);
  return { fake, backend: await createCudaBackend(0) };
}

const CASES: Array<[EcLayoutKind, number, number, number, { blockRows?: number; scaleBits?: number }]> = [
  ['axis', 1237, 37, 13, { blockRows: 200 }],
  ['axis', 901, 7, 5, { blockRows: 64, scaleBits: 9 }],
  ['axis', 333, 45, 3, { scaleBits: 16 }],
  ['rotated', 1111, 29, 11, { blockRows: 150 }],
  ['rotated', 517, 40, 7, { blockRows: 97, scaleBits: 14 }],
];

describe('ec decode on the GPU (fake driver) = the host, bit for bit', () => {
  for (const [layout, n, d, m, o] of CASES) {
    it(`${layout}: n ${n}, d ${d}, m ${m}, ${JSON.stringify(o)}`, async () => {
      const file = await ecProblem(layout, n, d, m, n + d, o);
      expect(escapedCodes(file)).toBeGreaterThan(0);
      const br = file.residuals.layout.blockRows;
      const { fake, backend } = await onFake();
      try {
        for (const [r0, r1] of [[0, n], [0, 1], [Math.min(br, n) - 1, Math.min(n, 3 * br + 5)], [n - 3, n]]) {
          await expectEcRowsEqualHost(backend.ctx, file, n, r0, r1);
          // Blocks decoded a few per launch (as when the codes do not fit the GPU at once).
          await expectEcRowsEqualHost(backend.ctx, file, n, r0, r1, { ecSpanBlocks: 2 });
        }
        // One launch per range, and more where two blocks a launch split [0, n).
        const launches = fake.launches.filter((l) => l === 'ec_decode').length;
        expect(launches).toBe(8 + (file.residuals.blockCount > 2 ? Math.ceil(file.residuals.blockCount / 2) - 1 : 0) + (br < n ? 1 : 0));
        expect(fake.launches).toContain(layout === 'axis' ? 'ec_axis' : 'ec_rotated');
      } finally {
        await backend.close();
      }
      expect(fake.live).toBe(0);
    });
  }

  it('CodecDevice.decodeRows (a cosine file: norms applied) = the host device, outputs prefilled with NaN', async () => {
    for (const layout of ['axis', 'rotated'] as const) {
      const file = await ecProblem(layout, 700, 23, 9, 5, { blockRows: 128, norms: true });
      const { fake, backend } = await onFake();
      try {
        await expectDecodeRowsAsHost(backend, file, [[0, 700], [130, 390]]);
        expect(fake.launches).toContain('ec_decode');
      } finally {
        await backend.close();
      }
      expect(fake.live).toBe(0);
    }
  });

  it('the k-NN over an ec base decoded on the device = the CPU over the host decode', async () => {
    const [n, d, m, nq, k] = [1003, 19, 9, 29, 9];
    const file = await ecProblem('axis', n, d, m, 3, { blockRows: 256 });
    const r = rng(8);
    const queries = Float32Array.from({ length: nq * d }, () => (r() - 0.5) * 4);
    const { fake, backend } = await onFake();
    let got;
    try {
      got = await backend.gpuKnn.knnDecoded(file, n, queries, nq, k);
    } finally {
      await backend.close();
    }
    expect(got).toBeDefined();
    expect(fake.launches).toContain('ec_decode');
    expect(fake.live).toBe(0);
    const decoded = reconstructRange(file, 0, n, new Float32Array(n * d));
    expectSameNeighbours(got!, await cpuKnn(decoded, n, queries, nq, d, k, 2), nq, k);
  });

  it('a block the device finds damaged is an error naming it (the host held the good codes)', async () => {
    const file = damagedEc(await ecProblem('axis', 600, 11, 5, 9, { blockRows: 200 }), 1);
    const { fake, backend } = await onFake();
    try {
      await expect(expectEcRowsEqualHost(backend.ctx, file, 600, 0, 600)).rejects.toThrow(/block 1 did not decode/);
    } finally {
      await backend.close();
    }
    expect(fake.live).toBe(0);
  });
});
