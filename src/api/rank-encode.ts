// The residuals of an MPI compress (compress-mpi.ts) encoded where the rows are: every rank codes
// its own rows with the codec rank 0 chose, and rank 0 gathers only the codes (d or fewer bytes a
// row), never the rows. The codec's spread encoder (Codec.spread: int8, int4, bits) makes the one
// process's parameters, codes and error from per-block figures added over the ranks; a codec
// without one (pq, ec: sums over every row in row order) is encoded at rank 0 on every row gathered
// there (rank-share.ts), as before.
//
// The encoders work in fixed blocks of BLOCK_ROWS rows. A rank's rows need not start or end on a
// block's edge (a sharded input's files, or an even split of n), so each block is coded by the rank
// that holds its first row: the rows of a block that cross into the next ranks are sent to it
// (at most a block's worth a rank), and the rows before a rank's first block are coded by an
// earlier rank.
import type { Comm } from '../backend/sharded/comm.js';
import { spreadEncoderOf, type CodecPlan, type EncodeContext } from '../codec-registry/index.js';
import type { EncodedResiduals, SpreadPart, SpreadPeers } from '../codecs/index.js';
import { BLOCK_ROWS } from '../codecs/scalar-rows.js';
import { allocCodes, type CodeKind, type Codes } from '../vectors/codes.js';
import { allocDataset, elementBytes, forEachF32Rows, rowBytes, rows as rowsOf, sliceRows, type Dataset, type Rows } from '../vectors/dataset.js';
import { GATHER_ROUND_BYTES, type RankShare } from './rank-share.js';

/**
 * The rows a rank codes: [begin, end), the blocks whose first row it holds; [begin, whole) are
 * its own rows, [whole, end) the one block that runs past its last row into the next ranks' (empty
 * when none does). A rank that holds no block's first row has begin = whole = end.
 */
export interface BlockSpan {
  begin: number;
  whole: number;
  end: number;
}

/** Each rank's BlockSpan, from where each rank's rows start (`starts`, n at the end). */
export function blockSpans(starts: readonly number[], blockRows = BLOCK_ROWS): BlockSpan[] {
  const n = starts[starts.length - 1];
  return starts.slice(0, -1).map((s, r) => {
    const e = starts[r + 1];
    const begin = Math.ceil(s / blockRows) * blockRows;
    if (begin >= e) return { begin: e, whole: e, end: e };
    const lastStart = Math.floor((e - 1) / blockRows) * blockRows; // the block holding the rank's last row
    const end = Math.min(n, lastStart + blockRows);
    return { begin, whole: end <= e ? end : lastStart, end };
  });
}

/** Whether the ranks can encode `codec` each on its own rows (its codec has a spread encoder); else rank 0 encodes it on every row. */
export function encodesOnRanks(codec: CodecPlan): boolean {
  return spreadEncoderOf(codec) !== undefined;
}

/**
 * Encode every rank's rows with `codec` (the same on every rank; encodesOnRanks), each rank its
 * own; resolves at rank 0 to the residuals of all n rows and their error, elsewhere to undefined.
 * `assignments`: every row's anchor at rank 0 (training gathers them there), empty elsewhere;
 * `anchors` as stored; `ctx`: this rank's device (a codec's kernel runs on its GPU when it has one).
 */
export async function encodeOnRanks(
  comm: Comm, share: RankShare, codec: CodecPlan, anchors: Float32Array, assignments: Uint32Array, ctx: EncodeContext,
): Promise<Partial<EncodedResiduals> | undefined> {
  const spread = spreadEncoderOf(codec);
  if (!spread) throw new Error(`encodeOnRanks: ${codec.mode} has no spread encoder`);
  const { n, local } = share;
  // Every rank gets every row's anchor: 4 bytes a row, against the d elements of a row each gathered.
  const got = await comm.broadcast(comm.rank === 0 ? new Uint8Array(assignments.buffer, assignments.byteOffset, n * 4) : undefined, 0);
  const assign = comm.rank === 0 ? assignments : got.byteOffset % 4 === 0 ? new Uint32Array(got.buffer, got.byteOffset, n) : new Uint32Array(got.slice().buffer);
  const spans = blockSpans(share.starts);
  // Rank 0 codes its rows straight into every row's codes (its rows come first), the others into their own.
  let out: Codes | undefined;
  const place = (kind: CodeKind, width: number, rows: number) =>
    comm.rank === 0 ? (out = allocCodes(kind, n, width)).rowsView(spans[0].begin, spans[0].begin + rows) : allocCodes(kind, rows, width);
  const part: SpreadPart = { n, d: local.d, anchors, assign, runs: await blockRuns(comm, share, spans), place };
  const enc = await spread(part, peersOf(comm, share), ctx);
  await gatherCodes(comm, spans, enc.codes, out);
  return out && { residuals: enc.residuals(out), residualEnergy: enc.residualEnergy };
}

/** This rank's runs: its own rows of whole blocks viewed in place, and the block it shares with the next ranks assembled (their rows sent here). */
async function blockRuns(comm: Comm, share: RankShare, spans: BlockSpan[]): Promise<Array<{ x: Rows; r0: number }>> {
  const { local, starts } = share;
  const rb = local.d * elementBytes(local.dtype);
  const s = starts[comm.rank];
  let tail: Dataset | undefined;
  // For each rank whose last block runs on, the ranks after it send their rows of that block (a gather at that rank).
  for (const [root, span] of spans.entries()) {
    const e = starts[root + 1];
    if (span.end <= e) continue;
    const lo = Math.max(e, s), hi = Math.min(span.end, starts[comm.rank + 1]);
    const parts = await comm.gather(hi > lo && comm.rank > root ? rowBytes(local, lo - s, hi - s) : new Uint8Array(0), root);
    if (!parts) continue;
    tail = { ...allocDataset(span.end - span.whole, local.d, local.dtype, 'block'), dropped: 0 };
    rowBytes(tail, 0, e - span.whole).set(rowBytes(local, span.whole - s, e - s));
    let at = e - span.whole;
    for (const p of parts) {
      if (p.byteLength === 0) continue;
      rowBytes(tail, at, at + p.byteLength / rb).set(p);
      at += p.byteLength / rb;
    }
  }
  const mine = spans[comm.rank];
  const runs: Array<{ x: Rows; r0: number }> = [];
  if (mine.whole > mine.begin) runs.push({ x: sliceRows(local, mine.begin - s, mine.whole - s), r0: mine.begin });
  if (tail) runs.push({ x: tail, r0: mine.whole });
  return runs;
}

/** The collectives a spread encoder asks for, over `comm`. */
function peersOf(comm: Comm, share: RankShare): SpreadPeers {
  const { local, starts } = share;
  const d = local.d;
  return {
    sum: (a) => comm.allreduce(a, 'sum'),
    // Each listed row filled by its rank, zero at the others: the sum is the row, exactly (f32 values in f64).
    async rows(list) {
      const mine = new Float64Array(list.length * d);
      const s = starts[comm.rank], e = starts[comm.rank + 1];
      list.forEach((i, j) => {
        if (i >= s && i < e) forEachF32Rows(local, i - s, i - s + 1, (v) => mine.set(v, j * d));
      });
      const all = await comm.allreduce(mine, 'sum');
      const out = allocDataset(list.length, d, 'f32', 'rows');
      for (let j = 0; j < list.length; j++) (rowsOf(out, j, j + 1) as Float32Array).set(all.subarray(j * d, (j + 1) * d));
      return out;
    },
  };
}

/**
 * Every rank's codes at rank 0 in row order, each rank's rows received in their place among `out`
 * (rank 0's own are there already), in rounds of at most GATHER_ROUND_BYTES in all: `mine`, this
 * rank's codes (its span's rows); `out` every row's at rank 0, undefined elsewhere.
 */
async function gatherCodes(comm: Comm, spans: BlockSpan[], mine: Codes, out: Codes | undefined): Promise<void> {
  const { width } = mine;
  const counts = spans.map((s) => s.end - s.begin);
  if (mine.rows !== counts[comm.rank]) throw new Error(`gatherCodes: rank ${comm.rank} coded ${mine.rows} rows of its ${counts[comm.rank]}`);
  const per = Math.max(1, Math.floor(GATHER_ROUND_BYTES / (comm.size * Math.max(1, width))));
  const round = (c: Codes, r0: number, r1: number) => c.bytesOfRows(Math.min(r0, c.rows), Math.min(r1, c.rows));
  for (let r0 = 0; r0 < Math.max(...counts); r0 += per) {
    const into = out && spans.map((s) => round(out.rowsView(s.begin, s.end), r0, r0 + per));
    await comm.gather(round(mine, r0, r0 + per), 0, into);
  }
}
