// The residual encoders with their rows split over devices (codecs/split.ts; a sharded backend's
// encodeScalar / encodeBits, backend/sharded/backend.ts): each member codes a range of whole blocks
// under one plan, and the payload and error are the one-device encoder's, bit for bit — on odd
// sizes (a short last block), more members than blocks, f16 rows, nested splits (a sharded
// backend's rows encoders split again), and a member that fails (the others stop, the error is its).
import { describe, expect, it } from 'vitest';
import { shardedBackend } from '../../dist/backend/sharded/backend.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { encodeScalar, scalesOf } from '../../dist/codecs/scalar.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { BLOCK_ROWS, blocksOf } from '../../dist/codecs/scalar-rows.js';
import { encodeScalarSplit, splitByBlocks, type ScalarRowsOn } from '../../dist/codecs/split.js';
import { allocCodes } from '../../dist/vectors/codes.js';
import type { CodedResiduals } from '../../dist/codecs/types.js';
import type { Backend } from '../../dist/backend/types.js';
import { problem } from '../cuda-host/residual-problem.js';

const bytesOf = (res: CodedResiduals) => {
  const p = res.payload();
  return Buffer.concat((Array.isArray(p) ? p : [p]).map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
};

describe('splitByBlocks', () => {
  it('ranges of whole blocks, in order, covering every row; at most one range a block', () => {
    const B = BLOCK_ROWS;
    expect(splitByBlocks(3 * B + 5, 2)).toEqual([[0, 2 * B], [2 * B, 3 * B + 5]]);
    expect(splitByBlocks(3 * B + 5, 3)).toEqual([[0, B], [B, 2 * B], [2 * B, 3 * B + 5]]);
    expect(splitByBlocks(3 * B + 5, 4)).toEqual([[0, B], [B, 2 * B], [2 * B, 3 * B], [3 * B, 3 * B + 5]]);
    expect(splitByBlocks(2 * B + 1, 9)).toEqual([[0, B], [B, 2 * B], [2 * B, 2 * B + 1]]);
    expect(splitByBlocks(7, 3)).toEqual([[0, 7]]);
    expect(splitByBlocks(0, 3)).toEqual([[0, 0]]);
  });
});

describe('a sharded backend over CPU members encodes = one device', () => {
  const n = 3 * BLOCK_ROWS + 4321; // four blocks, the last one short
  const cases = [
    { d: 7, m: 5, dtype: 'f32', members: 2 },
    { d: 5, m: 11, dtype: 'f16', members: 3 },
    { d: 3, m: 4, dtype: 'f32', members: 6 }, // more members than blocks
  ] as const;
  for (const c of cases) {
    const input = problem(n, c.d, c.m, c.dtype, 0, c.d * 31 + c.members);
    const members = (): Backend[] => Array.from({ length: c.members }, () => createCpuBackend({ threads: 1 }));
    for (const mode of ['int8', 'int4'] as const)
      it(`${mode}, d ${c.d} ${c.dtype}, ${c.members} members`, async () => {
        const sharded = shardedBackend(members());
        const got = await sharded.encodeScalar(mode, input);
        const want = await encodeScalar(mode, input, 1);
        expect(Array.from((got.residuals as typeof want.residuals).scales)).toEqual(Array.from(want.residuals.scales));
        expect(bytesOf(got.residuals).equals(bytesOf(want.residuals))).toBe(true);
        expect(got.residualEnergy).toBe(want.residualEnergy);
        await sharded.close();
      });
    it(`bits 3B, d ${c.d} ${c.dtype}, ${c.members} members`, async () => {
      const sharded = shardedBackend(members());
      const got = await sharded.encodeBits(input, 3);
      const want = await encodeBits(input, 3, 1);
      expect(bytesOf(got.residuals).equals(bytesOf(want.residuals))).toBe(true);
      expect(got.residualEnergy).toBe(want.residualEnergy);
      await sharded.close();
    });
  }

  it('vectors given as one plain array (a library caller): the same bytes', async () => {
    const given = problem(n, 5, 7, 'f32', 0, 3);
    const x = Float32Array.from(new Float32Array(given.x.buffer, given.x.byteOffset, n * 5));
    const input = { ...given, x };
    const sharded = shardedBackend([createCpuBackend({ threads: 1 }), createCpuBackend({ threads: 1 })]);
    for (const mode of ['int8', 'int4'] as const) {
      const got = await sharded.encodeScalar(mode, input);
      expect(bytesOf(got.residuals).equals(bytesOf((await encodeScalar(mode, given, 1)).residuals))).toBe(true);
    }
    expect(bytesOf((await sharded.encodeBits(input, 2)).residuals).equals(bytesOf((await encodeBits(given, 2, 1)).residuals))).toBe(true);
    await sharded.close();
  });

  it('nested: a sharded member of a sharded backend splits its range again (int4, bits)', async () => {
    const input = problem(n, 6, 9, 'f32', 2, 77);
    const inner = shardedBackend([createCpuBackend({ threads: 1 }), createCpuBackend({ threads: 1 })]);
    const outer = shardedBackend([createCpuBackend({ threads: 1 }), inner]);
    const int4 = await outer.encodeScalar('int4', input);
    expect(bytesOf(int4.residuals).equals(bytesOf((await encodeScalar('int4', input, 1)).residuals))).toBe(true);
    const bits = await outer.encodeBits(input, 2);
    expect(bytesOf(bits.residuals).equals(bytesOf((await encodeBits(input, 2, 1)).residuals))).toBe(true);
    await outer.close();
  });

  it('a member that fails: the encode fails with its error, and no member waits for its ranges forever', async () => {
    const input = problem(n, 4, 3, 'f32', 0, 5);
    const cpu = createCpuBackend({ threads: 1 });
    const broken = new Error('member 2 is out of memory');
    const good: ScalarRowsOn = (i, s, c) => cpu.encodeScalarRows('int8', i, s, c);
    const codes = allocCodes<Int8Array>('i8', n, 4);
    await expect(encodeScalarSplit('int8', input, codes, [good, good, async () => Promise.reject(broken)])).rejects.toBe(broken);
    // The same after the scales: a member that fails while coding.
    let calls = 0;
    const late = async (...a: Parameters<typeof cpu.encodeScalarRows>) => {
      const [, inp, scalesFrom] = a;
      await scalesFrom(new Float64Array(blocksOf(inp.n) * 4), new Float64Array(blocksOf(inp.n) * 4));
      calls++;
      throw broken;
    };
    await expect(encodeScalarSplit('int8', input, codes, [(i, s, c) => cpu.encodeScalarRows('int8', i, s, c), (i, s, c) => late('int8', i, s, c)])).rejects.toBe(broken);
    expect(calls).toBe(1);
    await cpu.close();
  });

  it('scalesOf sees every block once, in block order (the split gathers them where one device would have them)', async () => {
    const input = problem(n, 3, 4, 'f32', 0, 9);
    const seen: Float64Array[] = [];
    const cpu = createCpuBackend({ threads: 1 });
    const codes = allocCodes<Int8Array>('i8', n, 3);
    const one = allocCodes<Int8Array>('i8', n, 3);
    const blocks = blocksOf(n);
    const grab = async (maxAbs: Float64Array, sumSq: Float64Array) => (seen.push(Float64Array.from(maxAbs), Float64Array.from(sumSq)), scalesOf('int8', n, 3, blocks, maxAbs, sumSq));
    const { scalarRowsSplit } = await import('../../dist/codecs/split.js');
    await scalarRowsSplit(input, grab, codes, [0, 1, 2].map(() => (i, s, c) => cpu.encodeScalarRows('int8', i, s, c)));
    await cpu.encodeScalarRows('int8', input, grab, one);
    expect(seen).toHaveLength(4);
    expect(Array.from(seen[0])).toEqual(Array.from(seen[2]));
    expect(Array.from(seen[1])).toEqual(Array.from(seen[3]));
    expect(Buffer.concat(codes.bytePieces()).equals(Buffer.concat(one.bytePieces()))).toBe(true);
    await cpu.close();
  });
});
