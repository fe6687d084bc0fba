// The whole data as MPI ranks hold it (api/compress-mpi.ts): each rank its rows (rank-rows.ts),
// every rank the whole data's figures (row counts, dimension, dropped rows), and rows gathered at
// rank 0 in row order: those its codec choice and quality figures read (rank-finish.ts), or every
// row for a codec encoded in one place.
import { everywhere } from '../backend/sharded/agree.js';
import type { Comm } from '../backend/sharded/comm.js';
import { UsageError } from '../errors.js';
import { allocDataset, elementBytes, gatherRows, pieceRows, rowBytes, sliceRows, type Dataset } from '../vectors/dataset.js';

export interface RankShare {
  /** This rank's rows. */
  local: Dataset;
  n: number;
  /** First global row of each rank, and n at the end. */
  starts: number[];
  dropped: number;
  /** Input row ids --drop-invalid skipped, over every rank's rows, ascending. */
  droppedRows: number[];
}

/** Every rank's row count (exact: whole numbers), hence where each rank's rows start; the same dimension and element type checked. */
export async function shareOf(comm: Comm, local: Dataset): Promise<RankShare> {
  const mine = new Float64Array(comm.size * 2 + 2);
  mine[comm.rank] = local.n;
  mine[comm.size * 2] = local.dropped;
  mine[comm.size + comm.rank] = local.d;
  mine[comm.size * 2 + 1] = local.dtype === 'f16' ? 1 : 0;
  const all = await comm.allreduce(mine, 'sum');
  const counts = Array.from(all.subarray(0, comm.size));
  const dims = Array.from(all.subarray(comm.size, comm.size * 2));
  const f16Ranks = all[comm.size * 2 + 1];
  await everywhere(comm, () => {
    if (dims.some((d) => d !== dims[0]))
      throw new UsageError(`the ranks' rows have different dimensions (${dims.join(', ')}): every file of a sharded input must have the same dimension`);
    if (f16Ranks !== 0 && f16Ranks !== comm.size)
      throw new UsageError(`some ranks read f16 vectors and others f32: every file of a sharded input must have the same element type`);
  });
  const starts = [0];
  for (const c of counts) starts.push(starts[starts.length - 1] + c);
  return { local, n: starts[comm.size], starts, dropped: all[comm.size * 2], droppedRows: await droppedIds(comm, local) };
}

/** The whole data's figures (n, dropped rows) over this rank's rows: what a rank plans with. */
export function wholeFigures(share: RankShare): Dataset {
  return { ...share.local, n: share.n, dropped: share.dropped, droppedRows: share.droppedRows };
}

/**
 * Every rank's dropped rows as input ids: a rank's rows (kept and dropped) follow all the input rows
 * of the ranks before it, so its own ids shift by their count. One allreduce places each rank's ids
 * in its slots of the whole list (ids below 2^53 add exactly).
 */
async function droppedIds(comm: Comm, local: Dataset): Promise<number[]> {
  const spans = new Float64Array(comm.size * 2);
  spans[comm.rank] = local.n + local.dropped;
  spans[comm.size + comm.rank] = local.dropped;
  const all = await comm.allreduce(spans, 'sum');
  let offset = 0;
  let slot = 0;
  for (let r = 0; r < comm.rank; r++) {
    offset += all[r];
    slot += all[comm.size + r];
  }
  let total = 0;
  for (let r = 0; r < comm.size; r++) total += all[comm.size + r];
  if (total === 0) return [];
  const ids = new Float64Array(total);
  (local.droppedRows ?? []).forEach((id, i) => (ids[slot + i] = offset + id));
  return Array.from(await comm.allreduce(ids, 'sum'));
}

/** Bytes one round of the gather moves, over all ranks: the buffers it needs beside the data. */
export const GATHER_ROUND_BYTES = 64 * 2 ** 20;

/**
 * Every rank's rows at rank 0 in row order, in the element type they are held in (f16 stays f16),
 * or only the rows `only(n)` lists (ascending; null: every row). With every row, rank 0 gets the
 * whole data (`gathered`, with the whole data's figures) and its own rows become a view of it (its
 * copy as read is let go); the other ranks keep their share. Rows cross in rounds of at most
 * `roundBytes` (at least a row from each rank), so rank 0 needs the rows and a round beside them.
 */
export async function gatherAtRankZero(
  comm: Comm, share: RankShare, only: (n: number) => readonly number[] | null = () => null, roundBytes = GATHER_ROUND_BYTES,
): Promise<{ share: RankShare; gathered?: Dataset }> {
  const { local, starts } = share;
  const rb = local.d * elementBytes(local.dtype);
  const list = only(share.n);
  // Each rank's rows to send, as its own row numbers (null: all of them), and where they land at rank 0.
  const picked = (rank: number) => list && list.filter((r) => r >= starts[rank] && r < starts[rank + 1]).map((r) => r - starts[rank]);
  const mine = picked(comm.rank);
  const counts = starts.slice(1).map((s, rank) => picked(rank)?.length ?? s - starts[rank]);
  const at = [0];
  for (const c of counts) at.push(at[at.length - 1] + c);
  const per = Math.max(1, Math.min(pieceRows(local.d, local.dtype), Math.floor(roundBytes / (comm.size * rb))));
  const gathered = comm.rank === 0
    ? { ...allocDataset(at[comm.size], local.d, local.dtype, local.format), ...pick(local), dropped: share.dropped, droppedRows: share.droppedRows }
    : undefined;
  // Listed rows are packed into one buffer, reused each round; every row of a rank is sent where it lies.
  const packed = mine && mine.length > 0 ? new Uint8Array(Math.min(per, mine.length) * rb) : undefined;
  for (let r0 = 0; r0 < Math.max(...counts); r0 += per) {
    const r1 = Math.min(counts[comm.rank], r0 + per);
    let bytes: Uint8Array = new Uint8Array(0);
    if (r1 > r0 && mine === null) bytes = rowBytes(local, r0, r1);
    else if (r1 > r0) gatherRows(local, mine!, r0, r1, (bytes = packed!.subarray(0, (r1 - r0) * rb)));
    // Each rank's rows of this round received in their place among the gathered rows.
    const into = gathered && counts.map((c, rank) => rowBytes(gathered, at[rank] + Math.min(c, r0), at[rank] + Math.min(c, r0 + per)));
    await comm.gather(bytes, 0, into);
  }
  if (!gathered || list !== null) return { share, gathered };
  return { share: { ...share, local: { ...sliceRows(gathered, 0, local.n), dropped: local.dropped, droppedRows: local.droppedRows } }, gathered };
}

/** What a reader recorded of the input beyond its rows. */
function pick(ds: Dataset): Partial<Dataset> {
  return ds.inputDtype !== undefined ? { inputDtype: ds.inputDtype } : {};
}
