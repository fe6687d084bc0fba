// The residuals of an MPI compress coded where the rows are (api/rank-encode.ts), over an
// in-process group: every rank codes the blocks whose first row it holds, the blocks cut by a
// rank's edge assembled from the next ranks' rows, and rank 0 gathers the codes. The payload and
// the error are the one-process encoder's, bit for bit, for int8, int4 and bits, whatever the
// ranks' shares: one rank; edges inside blocks; a rank whose rows all lie inside one block (it codes
// nothing); an empty rank; f16 rows; codes gathered in many rounds.
import { describe, expect, it } from 'vitest';
import { inProcessGroup } from '../../dist/backend/sharded/comm.js';
import { blockSpans, encodeOnRanks } from '../../dist/api/rank-encode.js';
import { shareOf } from '../../dist/api/rank-share.js';
import { createCpuBackend } from '../../dist/backend/cpu/index.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { BLOCK_ROWS } from '../../dist/codecs/scalar-rows.js';
import type { CodedResiduals } from '../../dist/codecs/types.js';
import { allocDataset, datasetFromF32, f32ToF16, selectRows, type Dataset } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

const d = 5;
const m = 7;
const n = 2 * BLOCK_ROWS + 7000; // three blocks, the last one short

const r = rng(23);
// Residuals of different sizes per dimension (int4's clip and bits' allocation have something to choose).
const f32 = datasetFromF32(Float32Array.from({ length: n * d }, (_, i) => (r() - 0.5) * (1 + (i % d) * 3) + (r() < 0.001 ? 40 : 0)), n, d);
const f16: Dataset = { ...allocDataset(n, d, 'f16', 'f16'), inputDtype: 'f16' };
{
  const h = new Uint16Array(f16.buffer, f16.byteOffset, n * d);
  const v = new Float32Array(f32.buffer, f32.byteOffset, n * d);
  for (let i = 0; i < n * d; i++) h[i] = f32ToF16(v[i]);
}
const anchors = Float32Array.from({ length: m * d }, () => r() - 0.5);
const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * m));

/** Each rank's rows: consecutive rows of `all`, copied. */
function parts(all: Dataset, counts: number[]): Dataset[] {
  const starts = counts.map((_, r) => counts.slice(0, r).reduce((a, b) => a + b, 0));
  return counts.map((c, r) => selectRows(all, Array.from({ length: c }, (_, i) => starts[r] + i)));
}

const bytesOf = (res: CodedResiduals) => {
  const p = res.payload();
  return Buffer.concat((Array.isArray(p) ? p : [p]).map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
};

describe('blockSpans', () => {
  it('tiles the rows in rank order, each block coded by the rank that holds its first row', () => {
    const B = 10;
    // Ranks: 0..23, 23..25 (inside block 2), 25..25 (empty), 25..40, 40..47 (ends at n)
    const spans = blockSpans([0, 23, 25, 25, 40, 47], B);
    expect(spans).toEqual([
      { begin: 0, whole: 20, end: 30 }, // block 2 starts at 20 and runs into ranks 1 and 3
      { begin: 25, whole: 25, end: 25 },
      { begin: 25, whole: 25, end: 25 },
      { begin: 30, whole: 40, end: 40 }, // its rows 25..30 are in rank 0's block
      { begin: 40, whole: 47, end: 47 },
    ]);
  });
});

describe('encodeOnRanks', () => {
  const codecs = [
    ['int8', { mode: 'int8' }, (x: Dataset) => encodeScalar('int8', { x, n, d, anchors, assign })],
    ['int4', { mode: 'int4' }, (x: Dataset) => encodeScalar('int4', { x, n, d, anchors, assign })],
    ['bits 3B', { mode: 'bits', codeBytes: 3 }, (x: Dataset) => encodeBits({ x, n, d, anchors, assign }, 3)],
  ] as const;
  const splits: Array<[string, number[], Dataset]> = [
    ['one rank', [n], f32],
    ['edges inside blocks, a rank within one block', [BLOCK_ROWS + 100, 900, n - BLOCK_ROWS - 1000], f32],
    ['an empty rank, f16 rows', [20000, 0, n - 20000], f16],
  ];
  for (const [name, codec, alone] of codecs)
    it.each(splits)(`${name}: %s: the one-process payload and error`, async (_what, counts, all) => {
      const want = await alone(all);
      const group = inProcessGroup(counts.length);
      const locals = parts(all, counts);
      const backend = createCpuBackend();
      const got = await Promise.all(group.map(async (comm, rank) =>
        encodeOnRanks(comm, await shareOf(comm, locals[rank]), codec, anchors, rank === 0 ? assign : new Uint32Array(0), { backend, seed: 0, hooks: {} })));
      await backend.close();
      expect(got.slice(1).every((g) => g === undefined)).toBe(true);
      expect(got[0]!.residualEnergy).toBe(want.residualEnergy);
      expect(bytesOf(got[0]!.residuals!).equals(bytesOf(want.residuals))).toBe(true);
    });
});
