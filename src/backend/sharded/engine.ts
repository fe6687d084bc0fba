// An Engine over N member engines, each holding a contiguous range of the rows (rank 0 the first
// rows, then rank 1...), as one engine to the algorithm: src/anneal does not know it is sharded.
// Each iteration: accumulate on every member, combine the partial sums through the group's Comm
// (comm.ts: one allreduce of int64 sums, one of maxima), applyUpdate on every member with the
// total, so the anchors, the statistics and the Huber thresholds stay identical on every member.
// Every sum is an integer (../engine.ts, fixed.ts), so the result is the one engine of that kind would
// give on all the rows, byte for byte. The anchors are replicated: getAnchors, stats and
// nearestOther ask the first member; row, seedPick and assignments find the rows' owners.
//
// Every method runs the same program on each member ("rank") concurrently, talking only through
// the Comm (spmd below). An MPI rank (api/compress-mpi.ts) holds one member and an MPI Comm
// (mpi.ts): every rank runs the same deterministic program in lockstep, so remote rows, seedPick
// and the gathered assignments all go through the Comm.
import type { AnchorStats, DeviceGroup, DeviceGroupFactory, Engine, GlobalFigures, IterParams, IterStats, NearestAnchors, Partials } from '../types.js';
import type { Comm } from './comm.js';

const FINAL: IterParams = { temperature: 0, step: 0, huber: 0 };

export class ShardedEngine implements Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;
  readonly maxAbs: number;
  /** Rows of each rank and the first row of each, in the whole data. */
  private readonly counts: Float64Array;
  private readonly offsets: number[];
  /** Each rank's Σ D of the last seedBegin / seedAdd (exact multiples of seedUnit). */
  private seedTotals: Float64Array;

  /** The members' own combine, when they have one (several GPUs of one process); else the Comms'. */
  private readonly group: DeviceGroup | undefined;

  private constructor(
    private readonly members: Engine[],
    private readonly comms: Comm[],
    counts: Float64Array,
    maxAbs: number,
    private readonly groupOf: DeviceGroupFactory | undefined,
  ) {
    const e = members[0];
    this.group = groupOf?.(members);
    this.d = e.d;
    this.m = e.m;
    this.counts = counts;
    this.offsets = [];
    let acc = 0;
    for (const c of counts) {
      this.offsets.push(acc);
      acc += c;
    }
    this.n = acc;
    this.maxAbs = maxAbs;
    this.seedTotals = new Float64Array(counts.length);
  }

  /**
   * Members and their Comms (one each; comms[k].rank is member k's rank), already opened on their
   * rows. The ranks learn each other's row counts and the largest |x| (exact: a sum of integers,
   * a max), then each member its global figures. `groupOf`: members that can combine their passes
   * without the host (../engine.ts DeviceGroup) do so in iterate().
   */
  static async create(members: Engine[], comms: Comm[], groupOf?: DeviceGroupFactory): Promise<ShardedEngine> {
    if (members.length === 0 || members.length !== comms.length) throw new Error('a sharded engine needs one Comm per member');
    const figures = await Promise.all(
      members.map(async (e, k) => {
        const c = comms[k];
        const counts = await c.allreduce(oneHot(c.size, c.rank, e.n), 'sum');
        const maxAbs = (await c.allreduce(Float64Array.of(e.maxAbs), 'max'))[0];
        return { counts, maxAbs };
      }),
    );
    const { counts, maxAbs } = figures[0];
    const s = new ShardedEngine(members, comms, counts, maxAbs, groupOf);
    s.setGlobal({ n: s.n, maxAbs, rowOffset: 0 });
    return s;
  }

  /** Nested in a larger group: this engine's rows start at g.rowOffset of the whole data. */
  setGlobal(g: GlobalFigures): void {
    this.members.forEach((e, k) => e.setGlobal({ n: g.n, maxAbs: g.maxAbs, rowOffset: g.rowOffset + this.offsets[this.comms[k].rank] }));
  }

  /** f on every member with its Comm, concurrently; the first member's result. A failure aborts the group. */
  private async spmd<T>(f: (e: Engine, c: Comm) => Promise<T>): Promise<T> {
    const runs = await Promise.allSettled(
      this.members.map(async (e, k) => {
        try {
          return await f(e, this.comms[k]);
        } catch (err) {
          this.comms[k].abort(err instanceof Error ? err : new Error(String(err)));
          throw err;
        }
      }),
    );
    const failed = runs.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return (runs[0] as PromiseFulfilledResult<T>).value;
  }

  /** The rank holding global row i, and i's index among its rows. */
  private owner(i: number): { rank: number; local: number } {
    if (!(i >= 0 && i < this.n)) throw new Error(`row ${i} out of range 0..${this.n - 1}`);
    let rank = 0;
    while (i >= this.offsets[rank] + this.counts[rank]) rank++;
    return { rank, local: i - this.offsets[rank] };
  }

  // --- k-means++ seeding ---

  private async seedTotal(step: (e: Engine) => Promise<number>): Promise<number> {
    this.seedTotals = await this.spmd(async (e, c) => c.allreduce(oneHot(c.size, c.rank, await step(e)), 'sum'));
    let total = 0;
    for (const t of this.seedTotals) total += t; // whole units below 2^53: exact in any order
    return total;
  }

  seedBegin(c: Float32Array): Promise<number> {
    return this.seedTotal((e) => e.seedBegin(c));
  }

  seedAdd(c: Float32Array): Promise<number> {
    return this.seedTotal((e) => e.seedAdd(c));
  }

  seedAddMany(cands: Float32Array): Promise<number> {
    return this.seedTotal((e) => e.seedAddMany(cands));
  }

  seedTry(cands: Float32Array): Promise<Float64Array> {
    return this.spmd(async (e, c) => c.allreduce(await e.seedTry(cands), 'sum'));
  }

  get seedUnit(): number {
    return this.members[0].seedUnit;
  }

  /**
   * The rank whose units contain the target (in whole units, as every engine counts them), then
   * that rank's own pick for what is left; past the total, the last rank with a share.
   */
  async seedPick(target: number): Promise<number> {
    const { rank: at, local } = this.seedOwner(target);
    return this.spmd(async (e, c) => {
      const mine = c.rank === at ? Float64Array.of(this.offsets[at] + (await e.seedPick(local))) : undefined;
      return new Float64Array((await c.broadcast(mine && bytes(mine), at)).buffer)[0];
    });
  }

  /** The rank whose units contain the target (in whole units), and what is left of it there. */
  private seedOwner(target: number): { rank: number; local: number } {
    const unit = this.seedUnit;
    const q = Math.floor(target / unit) * unit;
    const totals = this.seedTotals;
    let before = 0;
    for (let r = 0; r < totals.length; r++) {
      if (before + totals[r] > q) return { rank: r, local: q - before }; // whole units: exact
      before += totals[r];
    }
    let r = totals.length - 1;
    while (r > 0 && !(totals[r] > 0)) r--;
    return { rank: r, local: totals[r] }; // at its total: its last point with a share
  }

  /** Each rank picks the targets its units contain; one sum over the ranks puts them together. */
  async seedPickMany(targets: Float64Array): Promise<Int32Array> {
    const owners = Array.from(targets, (t) => this.seedOwner(t));
    const picked = await this.spmd(async (e, c) => {
      const mine = owners.flatMap((o, j) => (o.rank === c.rank ? [j] : []));
      const local = await e.seedPickMany(Float64Array.from(mine, (j) => owners[j].local));
      const out = new Float64Array(targets.length); // 0 where another rank owns the target
      mine.forEach((j, k) => (out[j] = this.offsets[c.rank] + local[k]));
      return c.allreduce(out, 'sum');
    });
    return Int32Array.from(picked);
  }

  row(i: number): Promise<Float32Array> {
    return this.rows([i]);
  }

  /** Each rank's rows of the list in one broadcast from it (not one broadcast a row). */
  rows(list: ArrayLike<number>, into?: Float32Array): Promise<Float32Array> {
    const { d } = this;
    const owners = Array.from(list, (i) => this.owner(i));
    return this.spmd(async (e, c) => {
      // Every member fills its own array (members share a process): `into` is the first member's.
      const out = c === this.comms[0] && into ? into : new Float32Array(owners.length * d);
      for (let rank = 0; rank < this.offsets.length; rank++) {
        const at = owners.flatMap((o, k) => (o.rank === rank ? [k] : []));
        if (at.length === 0) continue; // every member sees the same owners: all skip it
        const mine = c.rank === rank ? bytes(await e.rows(at.map((k) => owners[k].local))) : undefined;
        const got = await c.broadcast(mine, rank);
        const sent = new Float32Array(got.buffer, got.byteOffset, got.byteLength / 4);
        at.forEach((k, j) => out.set(sent.subarray(j * d, (j + 1) * d), k * d));
      }
      return out;
    });
  }

  /**
   * The listed rows (global, ascending) as a sharded engine over the same group: each member
   * takes its own rows (a member may hold none of them).
   */
  async subset(rows: Int32Array): Promise<Engine> {
    for (let i = 1; i < rows.length; i++) if (!(rows[i] > rows[i - 1])) throw new Error('subset: the rows must be distinct and ascending');
    // Each member's rows are one run of the ascending list, found by bisection: a filter over the
    // whole list per member took seconds for a 16.8M-row sample on four GPUs.
    const parts = this.members.map((_, k) => {
      const rank = this.comms[k].rank;
      const r0 = this.offsets[rank], r1 = r0 + this.counts[rank];
      const a = firstAtLeast(rows, r0), b = firstAtLeast(rows, r1);
      const part = new Int32Array(b - a);
      for (let i = a; i < b; i++) part[i - a] = rows[i] - r0;
      return part;
    });
    const opened = await Promise.allSettled(this.members.map((e, k) => e.subset(parts[k])));
    const subs = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o) => o.status === 'rejected');
    try {
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return await ShardedEngine.create(subs, this.comms, this.groupOf);
    } catch (e) {
      await Promise.allSettled(subs.map((x) => x.dispose()));
      throw e;
    }
  }

  // --- the loop ---

  async setAnchors(anchors: Float32Array): Promise<void> {
    await this.spmd((e) => e.setAnchors(anchors));
  }

  getAnchors(): Promise<Float32Array> {
    return this.members[0].getAnchors(); // identical on every member
  }

  async iterate(p: IterParams): Promise<IterStats> {
    const t0 = performance.now();
    const s = this.group
      ? await this.group.iterate(p)
      : await this.spmd(async (e, c) => e.applyUpdate(await combine(c, await e.accumulate(p)), p));
    return { ...s, ms: performance.now() - t0 };
  }

  finalize(): Promise<IterStats> {
    return this.iterate(FINAL);
  }

  /** The whole group's partials (every member's, combined). */
  accumulate(p: IterParams): Promise<Partials> {
    return this.spmd(async (e, c) => combine(c, await e.accumulate(p)));
  }

  applyUpdate(total: Partials, p: IterParams): Promise<IterStats> {
    return this.spmd((e) => e.applyUpdate(total, p));
  }

  stats(): Promise<AnchorStats> {
    return this.members[0].stats(); // the whole data's, installed on every member by applyUpdate
  }

  nearestOther(): Promise<NearestAnchors> {
    return this.members[0].nearestOther(); // the anchors are the same on every member
  }

  /**
   * Every rank's assignments gathered at rank 0, in row order. In a process that holds no rank 0
   * (an MPI rank > 0: mpi.ts), an empty array: only rank 0 writes the file.
   */
  async assignments(): Promise<Uint32Array> {
    const all = await this.spmd(async (e, c) => c.gather(bytes(await e.assignments()), 0));
    if (!all) return new Uint32Array(0);
    const out = new Uint32Array(this.n);
    all.forEach((b, r) => out.set(new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4), this.offsets[r]));
    return out;
  }

  async dispose(): Promise<void> {
    const done = await Promise.allSettled([...(this.group ? [this.group.dispose()] : []), ...this.members.map((e) => e.dispose())]);
    const failed = done.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }
}

/**
 * The members' partials summed (S, W, count, sse, changed) and maxed (far) across the group, in
 * place: the member's own arrays become the totals (m×d int64 a pass, no new array of them).
 */
async function combine(c: Comm, part: Partials): Promise<Partials> {
  return { sums: await c.allreduce(part.sums, 'sum', true), far: await c.allreduce(part.far, 'max', true) };
}

/** A vector of `size` zeros but `value` at `rank`: summed over the ranks, every rank's value. */
function oneHot(size: number, rank: number, value: number): Float64Array {
  const v = new Float64Array(size);
  v[rank] = value;
  return v;
}

function bytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** The first index of ascending `rows` whose value is at least `v` (rows.length if none). */
export function firstAtLeast(rows: Int32Array, v: number): number {
  let lo = 0, hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
