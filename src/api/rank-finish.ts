// What an MPI compress (compress-mpi.ts) does after training: rank 0 runs compress's own finishing
// steps (compress-steps.ts finishCompress) and the other ranks take part in the collectives those
// steps need, in the same order:
//   1. rank 0 gathers the rows the chooser and the quality figures read (quality/measure.ts
//      measuredRows: at most 165,536; every row of a small input) — not every row;
//   2. rank 0 chooses the codec on them and tells every rank (a broadcast; or that it failed);
//   3. every rank encodes its own rows with it and rank 0 gathers the codes (rank-encode.ts) — or,
//      for a codec without a spread encoder (pq, ec), rank 0 gathers every row and encodes there;
//   4. rank 0 measures, writes and reports; every rank learns its verdict (agree.ts).
// The other ranks wait for rank 0's steps 2 and 4 in Comm.barrier, asleep: a blocking MPI
// collective spins on its core, a core that rank 0's own threads may need (CPU ranks, or several
// ranks on one machine).
// A failure at rank 0 while it chooses or writes ends every rank with its one line and exit code;
// one in the middle of a collective (gathering, encoding) ends the job through Comm.abort.
import { agree } from '../backend/sharded/agree.js';
import { widenCores } from '../backend/sharded/cores.js';
import type { Comm } from '../backend/sharded/comm.js';
import { isCoded, type CodecPlan, type EncodeContext } from '../codec-registry/index.js';
import type { EncodedResiduals } from '../codecs/index.js';
import { storedAnchors } from '../io/vlc/format.js';
import { log } from '../log.js';
import { measuredRows } from '../quality/measure.js';
import type { CompressResult } from './compress.js';
import { encodeAll } from './compress-codec.js';
import type { Finish } from './compress-steps.js';
import { encodeOnRanks, encodesOnRanks } from './rank-encode.js';
import { gatherAtRankZero, type RankShare } from './rank-share.js';
import type { TrainResult } from './train.js';

/** What rank 0's finishing steps are given to reach the other ranks. */
export type RankHooks = Required<Pick<Finish, 'gather' | 'encode'>>;

/** The broadcast that tells the other ranks that rank 0 failed before it chose a codec (a codec is a JSON object). */
const FAILED = 'failed';

/**
 * Rank 0: `finish(hooks)` (finishCompress with the hooks); the other ranks: their part of its
 * collectives. Every rank then agrees on the outcome: rank 0 resolves to the result, the others to
 * undefined. `ctx`: this rank's backend (rank 0's is finish's, which closes it; the others close
 * theirs once they have encoded). `anchorDtype`: the anchors' storage, decided on every rank.
 */
export async function finishRanks(
  comm: Comm, share: RankShare, result: TrainResult, anchorDtype: 'f16' | 'f32', ctx: EncodeContext,
  finish: (hooks: RankHooks) => Promise<CompressResult>,
): Promise<CompressResult | undefined> {
  const rows = measuredRows(share.n); // null: every row is measured (small inputs)
  const everyRow = async () => (await gatherAtRankZero(comm, share)).gathered;
  if (comm.rank !== 0) {
    // This rank's backend codes its rows (its GPU, for a codec with a kernel), then closes.
    try {
      await gatherAtRankZero(comm, share, () => rows);
      await comm.barrier(); // asleep while rank 0 chooses (see the top of the file)
      const said = new TextDecoder().decode(await comm.broadcast(undefined, 0));
      if (said !== FAILED) {
        const codec = JSON.parse(said) as CodecPlan;
        if (encodesOnRanks(codec)) await encodeOnRanks(comm, share, codec, storedAnchors(result.anchors, anchorDtype), new Uint32Array(0), ctx);
        else if (isCoded(codec) && rows !== null) await everyRow();
      }
    } finally {
      await ctx.backend.close();
    }
    await comm.barrier(); // asleep while rank 0 encodes, measures and writes
    return agree(comm, async () => undefined);
  }
  let stage: 'gathering' | 'choosing' | 'encoding' | 'after' = 'gathering';
  let outcome: { result: CompressResult } | { error: unknown };
  try {
    outcome = {
      result: await finish({
        gather: async () => {
          const t = performance.now();
          const x = (await gatherAtRankZero(comm, share, () => rows)).gathered!;
          widenCores(0, true); // the other ranks wait for its choice asleep: its threads may take every core
          log().debug(`rank 0 gathered ${x.n} of the ${share.n} rows (${rows ? 'the rows the codec choice and the quality figures read' : 'every row: all are measured'}) in ${((performance.now() - t) / 1000).toFixed(2)} s`);
          stage = 'choosing';
          return { x, rows };
        },
        encode: async (codec, t) => {
          stage = 'encoding';
          await comm.barrier();
          await comm.broadcast(new TextEncoder().encode(JSON.stringify(codec)), 0);
          let out: Partial<EncodedResiduals> = {};
          // Every rank encodes now: rank 0's threads back on its share of the cores, then on all of them again.
          if (encodesOnRanks(codec)) {
            widenCores(0, false);
            out = (await encodeOnRanks(comm, share, codec, t.anchors, t.assignments, ctx))!;
            widenCores(0, true);
          }
          else if (isCoded(codec)) {
            if (rows !== null) log().debug(`rank 0 gathers every row: ${codec.mode} residuals are encoded in one place`);
            out = await encodeAll(codec, rows === null ? t : { ...t, x: (await everyRow())! }, ctx.backend, ctx.seed, ctx.hooks);
          }
          stage = 'after';
          return out;
        },
      }),
    };
  } catch (e) {
    if (stage === 'gathering' || stage === 'encoding') throw e; // inside a collective: the caller ends the job (Comm.abort)
    if (stage === 'choosing') {
      await comm.barrier();
      await comm.broadcast(new TextEncoder().encode(FAILED), 0);
    }
    outcome = { error: e };
  }
  await comm.barrier();
  return agree(comm, async () => {
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  });
}
