// The in-process group of src/backend/sharded/comm.ts: the collectives the sharded engine uses,
// exact int64 sums (also past 2^53 and with negative terms), maxima, f64 sums in rank order,
// broadcast and gather, and a failure that reaches every rank instead of leaving one waiting.
import { describe, expect, it } from 'vitest';
import { inProcessGroup } from '../../dist/backend/sharded/comm.js';
import { addInt64, doublesFromInt64, int64FromDoubles, maxInt64, sumInt64 } from '../../dist/backend/fixed.js';

describe('in-process group', () => {
  it('allreduce sums int64 exactly, whatever the magnitudes and signs', async () => {
    const g = inProcessGroup(3);
    const parts = [
      BigInt64Array.of(2n ** 61n, -5n, 2n ** 40n + 1n, -(2n ** 62n)),
      BigInt64Array.of(2n ** 61n - 1n, 7n, 2n ** 33n, 2n ** 62n - 3n),
      BigInt64Array.of(-(2n ** 60n), -2n, 1n, 1n),
    ];
    const out = await Promise.all(g.map((c, r) => c.allreduce(parts[r], 'sum')));
    const want = parts[0].map((_, k) => parts[0][k] + parts[1][k] + parts[2][k]);
    for (const o of out) expect(Array.from(o)).toEqual(Array.from(want));
    expect(out[0]).not.toBe(out[1]); // each rank its own copy
    expect(Array.from(parts[0])).toEqual([2n ** 61n, -5n, 2n ** 40n + 1n, -(2n ** 62n)]); // inputs untouched
  });

  it('allreduce max (int64, signed) and f64 sums in rank order', async () => {
    const g = inProcessGroup(2);
    const [a] = await Promise.all([g[0].allreduce(BigInt64Array.of(-1n, 2n ** 40n, 5n), 'max'), g[1].allreduce(BigInt64Array.of(-2n, 2n ** 41n, 5n), 'max')]);
    expect(Array.from(a)).toEqual([-1n, 2n ** 41n, 5n]);
    const [f] = await Promise.all([g[0].allreduce(Float64Array.of(1e16, 3), 'sum'), g[1].allreduce(Float64Array.of(1, 4), 'sum')]);
    expect(Array.from(f)).toEqual([1e16 + 1, 7]);
  });

  it('broadcast and gather, and collectives called in sequence line up by order', async () => {
    const g = inProcessGroup(3);
    const run = async (r: number) => {
      const b = await g[r].broadcast(r === 2 ? Uint8Array.of(9, 8) : undefined, 2);
      const all = await g[r].gather(Uint8Array.of(r, r), 0);
      const s = await g[r].allreduce(Float64Array.of(r), 'sum');
      return { b: Array.from(b), all: all?.map((x) => Array.from(x)), s: s[0] };
    };
    const out = await Promise.all([run(1), run(0), run(2)]);
    for (const o of out) expect(o.b).toEqual([9, 8]);
    expect(out[1].all).toEqual([[0, 0], [1, 1], [2, 2]]);
    expect(out[0].all).toBeUndefined();
    expect(out.map((o) => o.s)).toEqual([3, 3, 3]);
  });

  it('allreduce in place: the totals written over each rank\'s own array, which is returned', async () => {
    const g = inProcessGroup(3);
    const parts = [BigInt64Array.of(1n, -(2n ** 62n)), BigInt64Array.of(2n, 2n ** 62n - 1n), BigInt64Array.of(4n, 5n)];
    const out = await Promise.all(g.map((c, r) => c.allreduce(parts[r], 'sum', r !== 1))); // rank 1 asks for a copy
    expect(out[0]).toBe(parts[0]);
    expect(out[2]).toBe(parts[2]);
    expect(out[1]).not.toBe(parts[1]);
    for (const o of out) expect(Array.from(o)).toEqual([7n, 4n]);
    expect(Array.from(parts[1])).toEqual([2n, 2n ** 62n - 1n]); // not asked: untouched
    const f = [Float64Array.of(1e16), Float64Array.of(1)];
    const h = inProcessGroup(2);
    await Promise.all(h.map((c, r) => c.allreduce(f[r], 'max', true)));
    expect([f[0][0], f[1][0]]).toEqual([1e16, 1e16]);
  });

  it('gather into the root\'s places: each rank\'s bytes where it asked, its own left where they lie', async () => {
    const g = inProcessGroup(3);
    const whole = new Uint8Array(7);
    const sent = [whole.subarray(0, 2), Uint8Array.of(5, 6, 7), new Uint8Array(0)];
    sent[0].set([1, 2]);
    const into = [whole.subarray(0, 2), whole.subarray(2, 5), whole.subarray(5, 5)];
    const got = await Promise.all(g.map((c, r) => c.gather(sent[r], 0, r === 0 ? into : undefined)));
    expect(got[0]).toBe(into);
    expect(got[1]).toBeUndefined();
    expect(Array.from(whole)).toEqual([1, 2, 5, 6, 7, 0, 0]);
    // A place of the wrong size fails every rank rather than writing past it.
    const h = inProcessGroup(2);
    const bad = h.map((c, r) => c.gather(Uint8Array.of(r, r), 0, r === 0 ? [new Uint8Array(2), new Uint8Array(1)] : undefined));
    for (const b of bad) await expect(b).rejects.toThrow(/rank 1 sent 2 bytes, the root has room for 1/);
  });

  it('barrier resolves on no rank until every rank has called it', async () => {
    const g = inProcessGroup(3);
    const arrived: number[] = [];
    const done: number[] = [];
    const run = async (r: number) => {
      arrived.push(r);
      await g[r].barrier();
      done.push(r);
      expect(arrived).toHaveLength(3); // nobody passed before the last rank arrived
    };
    const first = [run(0), run(1)];
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(done).toEqual([]);
    await Promise.all([...first, run(2)]);
    expect(done.sort()).toEqual([0, 1, 2]);
  });

  it('a failing rank aborts the group: the others reject instead of waiting forever', async () => {
    const g = inProcessGroup(2);
    const waiting = g[0].allreduce(Float64Array.of(1), 'sum');
    g[1].abort(new Error('rank 1 failed'));
    await expect(waiting).rejects.toThrow('rank 1 failed');
    await expect(g[0].broadcast(Uint8Array.of(1), 0)).rejects.toThrow('rank 1 failed');
  });

  it('ranks calling different collectives at the same step is an error', async () => {
    const g = inProcessGroup(2);
    const a = g[0].allreduce(Float64Array.of(1), 'sum');
    await expect(g[1].allreduce(Float64Array.of(1), 'max')).rejects.toThrow(/collective 0: rank 1 called/);
    await expect(a).rejects.toThrow(/collective 0/);
  });
});

describe('int64 helpers (fixed.ts)', () => {
  it('add, max, sum and the conversions agree with BigInt arithmetic', () => {
    const a = BigInt64Array.of(2n ** 62n - 1n, -(2n ** 52n) - 3n, 0n, -1n);
    const b = BigInt64Array.of(-(2n ** 61n), 2n ** 52n + 5n, -1n, 1n);
    const sum = a.slice();
    addInt64(sum, b);
    expect(Array.from(sum)).toEqual(Array.from(a).map((v, k) => v + b[k]));
    const mx = a.slice();
    maxInt64(mx, b);
    expect(Array.from(mx)).toEqual(Array.from(a).map((v, k) => (v > b[k] ? v : b[k])));
    const exact = [2 ** 53 - 1, -(2 ** 53) + 1, -1, 0, 123456789012];
    expect(Array.from(doublesFromInt64(int64FromDoubles(exact)))).toEqual(exact);
    expect(sumInt64(BigInt64Array.of(2n ** 60n, 3n, -(2n ** 60n), 4n))).toBe(7);
    expect(sumInt64(BigInt64Array.of(2n ** 61n, 1n))).toBe(Number(2n ** 61n + 1n));
  });
});
