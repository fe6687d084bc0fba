// How the shards of a sharded engine (engine.ts) talk: a few collective operations in the manner
// of MPI, each called by every participant ("rank") of a group in the same order, each resolving
// once every rank has called it. A rank is one member engine; the group may live in one process
// (inProcessGroup below: several GPUs or CPU shards of one host) or span processes (an MPI
// transport: one rank per process, MPI_Allreduce / MPI_Bcast / MPI_Gather over the same arrays).
// A transport implements Comm; nothing else in the engine changes.
//
// What crosses per iteration: one allreduce of int64 sums (m×d + 3m + 1 values: S, W, count,
// sse, changed) and one allreduce-max of m int64 (the farthest points); per k-means++ call a few
// doubles. The int64 sums are exact whatever the order (integers: ../engine.ts, fixed.ts); the
// doubles the engine sends are integers below 2^53 (seeding units, row counts) or maxima, also
// exact in any order, but a transport still sums f64 in rank order so that its results never
// depend on timing.
import { addInt64, maxInt64 } from '../fixed.js';

/** The arrays a collective reduces: int64 (exact sums) or f64. */
export type Reducible = BigInt64Array | Float64Array;

export interface Comm {
  /** This participant's index, 0 .. size − 1 (its rows follow those of the lower ranks). */
  readonly rank: number;
  readonly size: number;
  /**
   * Element-wise sum or max over every rank's `data` (same type and length on every rank); each
   * rank gets its own copy of the result. int64 sums wrap like the hardware (exact when the true
   * sum fits); f64 sums are taken in rank order. `inPlace`: the result is written over `data`,
   * which is returned (no array of the result's size made: the engine's m×d sums each iteration).
   */
  allreduce<T extends Reducible>(data: T, op: 'sum' | 'max', inPlace?: boolean): Promise<T>;
  /** Rank `root`'s bytes, to every rank (the others pass undefined). */
  broadcast(data: Uint8Array | undefined, root: number): Promise<Uint8Array>;
  /**
   * Every rank's bytes in rank order, at `root`; undefined at the other ranks. `into` (given at
   * `root` only): where each rank's bytes land, each exactly as long as that rank's (root's own
   * untouched when it is `data` itself) — the data in place, not in fresh arrays to copy from.
   */
  gather(data: Uint8Array, root: number, into?: Uint8Array[]): Promise<Uint8Array[] | undefined>;
  /**
   * Resolves once every rank has called it, without holding a CPU meanwhile: what a rank calls
   * before a collective it may wait long for (rank 0 alone choosing, encoding or writing), since
   * MPI's blocking collectives spin on a core the busy rank could use.
   */
  barrier(): Promise<void>;
  /** A failure on one rank: every pending and later collective of the group rejects with it. */
  abort(reason: Error): void;
}


type Op = { kind: 'allreduce'; op: 'sum' | 'max' } | { kind: 'broadcast'; root: number } | { kind: 'gather'; root: number } | { kind: 'barrier' };

interface Round {
  op: Op;
  inputs: Array<Reducible | Uint8Array | undefined>;
  /** A gather's destinations, from its root. */
  into?: Uint8Array[];
  /** An allreduce's ranks that take the result in place. */
  inPlace: boolean[];
  arrived: number;
  waiters: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }>;
}

/** `size` participants in this process: the k-th collective of each rank meets the k-th of the others. */
export function inProcessGroup(size: number): Comm[] {
  if (!(Number.isInteger(size) && size >= 1)) throw new Error(`a group needs at least one rank, got ${size}`);
  const rounds = new Map<number, Round>();
  const next = new Array<number>(size).fill(0); // each rank's count of collectives called
  let failed: Error | undefined;

  function join(rank: number, op: Op, input: Reducible | Uint8Array | undefined, into?: Uint8Array[], inPlace = false): Promise<unknown> {
    if (failed) return Promise.reject(failed);
    const seq = next[rank]++;
    let r = rounds.get(seq);
    if (!r) rounds.set(seq, (r = { op, inputs: new Array(size), arrived: 0, waiters: new Array(size), inPlace: new Array<boolean>(size).fill(false) }));
    if (JSON.stringify(r.op) !== JSON.stringify(op)) {
      const e = new Error(`collective ${seq}: rank ${rank} called ${JSON.stringify(op)}, another rank ${JSON.stringify(r.op)}`);
      abort(e);
      return Promise.reject(e);
    }
    const round = r;
    return new Promise((resolve, reject) => {
      round.inputs[rank] = input;
      if (into) round.into = into;
      round.inPlace[rank] = inPlace;
      round.waiters[rank] = { resolve, reject };
      if (++round.arrived < size) return;
      rounds.delete(seq);
      try {
        const out = complete(round);
        round.waiters.forEach((w, k) => w.resolve(out[k]));
      } catch (e) {
        abort(e as Error);
        round.waiters.forEach((w) => w.reject(e as Error)); // this round has left `rounds`: abort does not reach it
      }
    });
  }

  function complete(r: Round): unknown[] {
    const ranks = [...Array(size).keys()];
    switch (r.op.kind) {
      case 'allreduce': {
        const inputs = r.inputs as Reducible[];
        const acc = inputs[0].slice() as Reducible;
        for (const x of inputs.slice(1)) {
          if (x.length !== acc.length || x.constructor !== acc.constructor) throw new Error('allreduce: ranks passed different arrays');
          if (acc instanceof BigInt64Array) (r.op.op === 'sum' ? addInt64 : maxInt64)(acc, x as BigInt64Array);
          else for (let k = 0; k < acc.length; k++) acc[k] = r.op.op === 'sum' ? acc[k] + (x as Float64Array)[k] : Math.max(acc[k], (x as Float64Array)[k]);
        }
        return ranks.map((k) => (r.inPlace[k] ? (inputs[k].set(acc as never), inputs[k]) : acc.slice()));
      }
      case 'broadcast': {
        const data = r.inputs[r.op.root] as Uint8Array | undefined;
        if (!data) throw new Error(`broadcast: the root rank ${r.op.root} passed no data`);
        return ranks.map(() => data.slice());
      }
      case 'gather': {
        const root = r.op.root;
        const inputs = r.inputs as Uint8Array[];
        const { into } = r;
        if (into) inputs.forEach((x, k) => placeInto(into[k], x, k));
        return ranks.map((k) => (k !== root ? undefined : into ?? inputs.map((x) => x.slice())));
      }
      case 'barrier':
        return ranks.map(() => undefined);
    }
  }

  function abort(reason: Error): void {
    if (failed) return;
    failed = reason;
    for (const r of rounds.values()) for (const w of r.waiters) w?.reject(reason);
    rounds.clear();
  }

  return Array.from({ length: size }, (_, rank): Comm => ({
    rank,
    size,
    allreduce: <T extends Reducible>(data: T, op: 'sum' | 'max', inPlace = false) => join(rank, { kind: 'allreduce', op }, data, undefined, inPlace) as Promise<T>,
    broadcast: (data, root) => join(rank, { kind: 'broadcast', root }, data) as Promise<Uint8Array>,
    gather: (data, root, into) => join(rank, { kind: 'gather', root }, data, rank === root ? into : undefined) as Promise<Uint8Array[] | undefined>,
    barrier: async () => void (await join(rank, { kind: 'barrier' }, undefined)),
    abort,
  }));
}

/** Rank k's gathered bytes where the root asked for them (nothing to copy when they are there already). */
export function placeInto(dst: Uint8Array | undefined, src: Uint8Array, k: number): void {
  if (!dst || dst.byteLength !== src.byteLength) throw new Error(`gather: rank ${k} sent ${src.byteLength} bytes, the root has room for ${dst?.byteLength ?? 0}`);
  if (dst.buffer !== src.buffer || dst.byteOffset !== src.byteOffset) dst.set(src);
}
