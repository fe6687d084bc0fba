// How ranks fail together (src/backend/sharded/agree.ts), over the in-process group: a step that
// fails on one rank makes rank 0 throw that rank's reason (named, with its exit code) and the
// others throw ReportedElsewhere (same code, nothing to print); a step that fails alike on every
// rank is reported by rank 0 alone.
import { describe, expect, it } from 'vitest';
import { agree, everywhere, failedTogether } from '../../dist/backend/sharded/agree.js';
import { inProcessGroup } from '../../dist/backend/sharded/comm.js';
import { ReportedElsewhere, UsageError } from '../../dist/errors.js';

describe('agree', () => {
  it('passes every rank its own value when no rank fails', async () => {
    const g = inProcessGroup(3);
    expect(await Promise.all(g.map((c) => agree(c, async () => c.rank * 10)))).toEqual([0, 10, 20]);
  });

  it("one rank's failure: rank 0 names it with its code, the others stay quiet with the same code", async () => {
    const g = inProcessGroup(3);
    const runs = await Promise.allSettled(
      g.map((c) => agree(c, async () => {
        if (c.rank === 2) throw new UsageError('part-3.npy: truncated');
        return c.rank;
      })),
    );
    const [r0, r1, r2] = runs.map((r) => (r as PromiseRejectedResult).reason);
    expect(runs.every((r) => r.status === 'rejected')).toBe(true);
    expect(r0.message).toBe('rank 2: part-3.npy: truncated');
    expect(r0.exitCode).toBe(2);
    expect(r0).not.toBeInstanceOf(ReportedElsewhere);
    for (const r of [r1, r2]) {
      expect(r).toBeInstanceOf(ReportedElsewhere);
      expect(r.exitCode).toBe(2);
    }
    expect(runs.every((r) => failedTogether((r as PromiseRejectedResult).reason))).toBe(true);
  });

  it('several failures: the lowest rank is reported, with a count of the others; rank 0 without a prefix when alone', async () => {
    const g = inProcessGroup(3);
    const runs = await Promise.allSettled(g.map((c) => agree(c, async () => { if (c.rank > 0) throw new Error(`bad ${c.rank}`); })));
    expect((runs[0] as PromiseRejectedResult).reason.message).toBe('rank 1 (and 1 other rank): bad 1');
    const alone = await Promise.allSettled(inProcessGroup(2).map((c) => agree(c, async () => { if (c.rank === 0) throw new Error('out.vlc exists'); })));
    expect((alone[0] as PromiseRejectedResult).reason.message).toBe('out.vlc exists');
  });
});

describe('everywhere', () => {
  it('rank 0 throws the error itself, the other ranks ReportedElsewhere', async () => {
    const g = inProcessGroup(2);
    const runs = await Promise.allSettled(g.map((c) => everywhere(c, () => { throw new UsageError('--anchors 5000 is more than the 3000 vectors'); })));
    const [r0, r1] = runs.map((r) => (r as PromiseRejectedResult).reason);
    expect(r0).toBeInstanceOf(UsageError);
    expect(r1).toBeInstanceOf(ReportedElsewhere);
    expect(r1.exitCode).toBe(2);
    expect(failedTogether(r0) && failedTogether(r1)).toBe(true);
  });
});
