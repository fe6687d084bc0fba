// The MPI ranks' rows gathered at rank 0 (api/rank-share.ts), over an in-process group: the whole
// data in row order, in the dtype the rows are held in, with the whole data's dropped rows — in
// one round and in many (a round of a few rows per rank), whatever the ranks' shares (one rank's
// share may be empty of later rounds, or hold more rows than the others).
import { describe, expect, it } from 'vitest';
import { inProcessGroup } from '../../dist/backend/sharded/comm.js';
import { gatherAtRankZero, shareOf } from '../../dist/api/rank-share.js';
import { allocDataset, datasetFromF32, rowBytes, type Dataset } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

const d = 7;

/** Each rank's rows: a slice of `all` (f32 or raw f16 bits), `dropped` of them skipped on reading. */
function parts(all: Dataset, counts: number[]): Dataset[] {
  let at = 0;
  return counts.map((c, rank) => {
    const ds = allocDataset(c, d, all.dtype, `part ${rank}`);
    if (c > 0) rowBytes(ds, 0, c).set(rowBytes(all, at, at + c));
    at += c;
    return rank === 1 ? { ...ds, dropped: 2, droppedRows: [0, 3] } : ds;
  });
}

async function gathered(all: Dataset, counts: number[], roundBytes?: number, only: (n: number) => number[] | null = () => null) {
  const group = inProcessGroup(counts.length);
  const locals = parts(all, counts);
  return Promise.all(group.map(async (comm, rank) => gatherAtRankZero(comm, await shareOf(comm, locals[rank]), only, roundBytes)));
}

describe('gatherAtRankZero', () => {
  const r = rng(17);
  const n = 101;
  const f32 = datasetFromF32(Float32Array.from({ length: n * d }, () => r() - 0.5), n, d);
  const f16 = { ...allocDataset(n, d, 'f16', 'f16'), inputDtype: 'f16' as const };
  new Uint16Array(f16.buffer).forEach((_, i, a) => (a[i] = Math.floor(r() * 0x7bff)));

  it.each([
    ['f32, one round', f32, [40, 33, 28], undefined],
    ['f32, rounds of 2 rows per rank, uneven shares', f32, [60, 1, 40], 3 * 2 * d * 4],
    ['f16, rounds of 1 row per rank', f16, [50, 51], 1],
  ])('%s: rank 0 holds every row in order; its own rows a view of them', async (_what, all, counts, roundBytes) => {
    const got = await gathered(all as Dataset, counts as number[], roundBytes as number | undefined);
    const whole = got[0].gathered!;
    expect(whole.n).toBe(n);
    expect(whole.dtype).toBe((all as Dataset).dtype);
    expect(Buffer.from(rowBytes(whole, 0, n)).equals(Buffer.from(rowBytes(all as Dataset, 0, n)))).toBe(true);
    expect(got[0].share.local.buffer).toBe(whole.buffer); // rank 0's rows as read are let go
    expect(got[0].share.local.n).toBe((counts as number[])[0]);
    // Rank 1 dropped its input rows 0 and 3, which follow rank 0's rows in the input.
    const first = (counts as number[])[0];
    expect(whole.dropped).toBe(2);
    expect(whole.droppedRows).toEqual([first, first + 3]);
    for (const g of got.slice(1)) expect(g.gathered).toBeUndefined();
  });

  it.each([
    ['one round', undefined],
    ['rounds of 1 row per rank', 1],
  ])('only some rows (%s): those rows at rank 0, in order; every rank keeps its rows as read', async (_what, roundBytes) => {
    const list = [0, 5, 39, 40, 41, 72, 73, 100];
    const counts = [40, 33, 28];
    const got = await gathered(f32, counts, roundBytes, (total) => (total === n ? list : null));
    const rows = got[0].gathered!;
    expect(rows.n).toBe(list.length);
    const want = Buffer.concat(list.map((r) => Buffer.from(rowBytes(f32, r, r + 1))));
    expect(Buffer.from(rowBytes(rows, 0, rows.n)).equals(want)).toBe(true);
    got.forEach((g, rank) => expect(g.share.local.n).toBe(counts[rank]));
    expect(got[0].share.local.buffer).not.toBe(rows.buffer);
  });
});
