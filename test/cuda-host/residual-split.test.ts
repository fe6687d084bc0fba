// The residual encoders with their rows split over GPUs (codecs/split.ts through a sharded backend
// of CUDA members, cuda/residual.ts through the fake driver's emulation), and an MPI rank's rows on
// its GPU (CodecDevice.encodeScalarRows / encodeBitsRows through api/rank-encode.ts): the host
// encoder's payload and error, bit for bit, every GPU running the kernels on its own range, and
// nothing left allocated.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { inProcessGroup } from '../../dist/backend/sharded/comm.js';
import { encodeOnRanks } from '../../dist/api/rank-encode.js';
import { shareOf } from '../../dist/api/rank-share.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { BLOCK_ROWS } from '../../dist/codecs/scalar-rows.js';
import { selectRows } from '../../dist/vectors/dataset.js';
import type { CodecPlan } from '../../dist/codec-registry/index.js';
import { FakeCuda } from './fake-driver.js';
import { bytes, problem } from './residual-problem.js';

afterEach(() => setDriverForTests(undefined));

const GPU = { name: 'Fake GPU', cc: [9, 0] as [number, number], sms: 4, memBytes: 2 ** 34 };
const n = 2 * BLOCK_ROWS + 3001; // three blocks, the last one short

describe('residuals split over GPUs (fake driver, 3 GPUs) = on the host', () => {
  for (const [d, dtype] of [[9, 'f32'], [6, 'f16']] as const) {
    const input = problem(n, d, 7, dtype, 50, d);
    for (const mode of ['int8', 'int4', 'bits'] as const)
      it(`${mode}, d ${d} ${dtype}: every GPU codes its own blocks`, async () => {
        const fake = new FakeCuda({ devices: [GPU, GPU, GPU] });
        setDriverForTests(fake.api);
        const members = [await createCudaBackend(0, {}), await createCudaBackend(1, {}), await createCudaBackend(2, {})];
        const sharded = shardedBackend(members);
        const got = mode === 'bits' ? await sharded.encodeBits(input, 4) : await sharded.encodeScalar(mode, input);
        await sharded.close();
        const want = mode === 'bits' ? await encodeBits(input, 4, 1) : await encodeScalar(mode, input, 1);
        expect(bytes(got.residuals.payload()).equals(bytes(want.residuals.payload()))).toBe(true);
        expect(got.residualEnergy).toBe(want.residualEnergy);
        const kernel = mode === 'bits' ? 'residual_bits_rows' : 'residual_rows';
        expect(fake.launches.filter((k) => k.startsWith(kernel))).toHaveLength(3); // one launch a GPU, each over its range
        expect(fake.live).toBe(0);
      });
  }
});

describe("an MPI rank's rows on its GPU (fake driver) = one process on the host", () => {
  const d = 5;
  const input = problem(n, d, 6, 'f32', 0, 17);
  const counts = [BLOCK_ROWS + 100, 900, n - BLOCK_ROWS - 1000]; // edges inside blocks; rank 1 within one block
  for (const [name, codec] of [['int8', { mode: 'int8' }], ['int4', { mode: 'int4' }], ['bits 2B', { mode: 'bits', codeBytes: 2 }]] as const)
    it(`${name}: the ranks' kernels, the one-process payload and error`, async () => {
      const fake = new FakeCuda();
      setDriverForTests(fake.api);
      const backend = await createCudaBackend(0, {});
      const group = inProcessGroup(counts.length);
      const starts = counts.map((_, r) => counts.slice(0, r).reduce((a, b) => a + b, 0));
      const locals = counts.map((c, r) => selectRows(input.x, Array.from({ length: c }, (_, i) => starts[r] + i)));
      const got = await Promise.all(group.map(async (comm, rank) =>
        encodeOnRanks(comm, await shareOf(comm, locals[rank]), codec as CodecPlan, input.anchors, rank === 0 ? input.assign : new Uint32Array(0), { backend, seed: 0, hooks: {} })));
      await backend.close();
      const alone = codec.mode === 'bits' ? await encodeBits(input, 2, 1) : await encodeScalar(codec.mode, input, 1);
      expect(bytes(got[0]!.residuals!.payload()).equals(bytes(alone.residuals.payload()))).toBe(true);
      expect(got[0]!.residualEnergy).toBe(alone.residualEnergy);
      expect(got.slice(1)).toEqual([undefined, undefined]);
      // Rank 0 codes its whole block and the block it shares with ranks 1 and 2; rank 2 its last block: three runs, each a launch.
      expect(fake.launches.filter((k) => k.startsWith(codec.mode === 'bits' ? 'residual_bits_rows' : 'residual_rows'))).toHaveLength(3);
      expect(fake.live).toBe(0);
    });
});
