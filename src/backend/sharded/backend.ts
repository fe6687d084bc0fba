// A Backend whose engines are sharded: the rows split into contiguous ranges, one per member
// backend (several GPUs, or several CPU engines), combined by a ShardedEngine over an in-process
// group (comm.ts); its residual encoders split the rows over the members too (codecs/split.ts). Member backends of one kind only: engines of one kind give the same bytes for
// any split (../engine.ts), two kinds would not.
import { sliceRows, type Dataset } from '../../vectors/dataset.js';
import type { Backend } from '../types.js';
import type { DeviceGroupFactory, Engine } from '../engine.js';
import { inProcessGroup } from './comm.js';
import { ShardedEngine } from './engine.js';
import { allocCodes, type Codes } from '../../vectors/codes.js';
import { prefaultShared, takeShared } from '../../io/prefault.js';

/** Rows per shard: n split into `parts` contiguous ranges whose sizes differ by at most one. */
export function evenSplit(n: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, k) => Math.floor(((k + 1) * n) / parts) - Math.floor((k * n) / parts));
}


/**
 * Zero codes for every row, filled by the members in place, taken as one GPU's encoder takes them
 * (cuda/residual.ts): int8/int4's pages touched while the GPUs trained (the codec's prewarm), bits'
 * touched on other threads from now on (io/prefault.ts).
 */
function splitCodes<T extends Int8Array | Uint8Array>(kind: 'i8' | 'u8', n: number, width: number): Codes<T> {
  if (kind === 'u8') prefaultShared(n * width);
  return allocCodes<T>(kind, n, width, true, takeShared(Math.max(1, n * width)));
}

/**
 * Engines over `members` (member k takes the k-th range of rows). `split` chooses the ranges
 * (default evenSplit); a dataset with fewer rows than members uses the first n members only.
 * `groupOf`: how the members' engines combine a pass among themselves (several GPUs: cuda/peer.ts).
 */
export function shardedBackend(
  members: Backend[], split: (n: number, parts: number) => number[] = evenSplit, groupOf?: DeviceGroupFactory,
): Backend {
  if (members.length === 0) throw new Error('a sharded backend needs at least one member');
  const kind = members[0].kind;
  if (members.some((b) => b.kind !== kind)) throw new Error('the members of a sharded backend must be of one kind');
  /** A sharded engine over n rows: member k opens rows [r0, r1) of them (openPart), all at once. */
  async function openShards(n: number, openPart: (k: number, r0: number, r1: number) => Promise<Engine>): Promise<Engine> {
    const parts = Math.max(1, Math.min(members.length, n));
    const rows = split(n, parts);
    if (rows.length !== parts || rows.some((r) => !(Number.isInteger(r) && r >= 1)) || rows.reduce((a, b) => a + b, 0) !== n) {
      throw new Error(`split: expected ${parts} positive row counts summing to ${n}, got ${rows.join(', ')}`);
    }
    let r0 = 0;
    const opened = await Promise.allSettled(rows.map((r, k) => openPart(k, r0, (r0 += r))));
    const engines = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failed = opened.find((o) => o.status === 'rejected');
    try {
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return await ShardedEngine.create(engines, inProcessGroup(parts), groupOf);
    } catch (e) {
      await Promise.allSettled(engines.map((x) => x.dispose()));
      throw e;
    }
  }

  return {
    kind,
    label: `${members.length} shards: ${members.map((b) => b.label).join(', ')}`,
    // The residual encoders split the rows over the members, each coding a contiguous range of
    // whole blocks on its own device under one plan made as one device makes it (codecs/split.ts:
    // the same bytes). The search kernels and the ec decoder run on the first member's device.
    exactKnn: members[0].exactKnn,
    // Kept locked: the members' uploads of their row ranges run side by side, and one member's
    // release would hold the others' next uploads until it is over.
    rowsUploadedOnce: () => undefined,
    // Every member's uploads are over by then: each lets go of its own.
    uploadsOver: () => members.forEach((b) => b.uploadsOver()),
    async encodeScalar(mode, input) {
      if (members.length === 1) return members[0].encodeScalar(mode, input);
      const { encodeScalarSplit } = await import('../../codecs/split.js');
      return encodeScalarSplit(mode, input, splitCodes<Int8Array>('i8', input.n, input.d), members.map((b) => (inp, scalesFrom, codes) => b.encodeScalarRows(mode, inp, scalesFrom, codes)));
    },
    async encodeBits(input, R) {
      if (members.length === 1) return members[0].encodeBits(input, R);
      const { encodeBitsSplit } = await import('../../codecs/split.js');
      return encodeBitsSplit(input, R, splitCodes<Uint8Array>('u8', input.n, R), members.map((b) => b.encodeBitsRows.bind(b)));
    },
    async encodeScalarRows(mode, input, scalesFrom, codes) {
      const { scalarRowsSplit } = await import('../../codecs/split.js');
      return scalarRowsSplit(input, scalesFrom, codes, members.map((b) => (inp, sf, c) => b.encodeScalarRows(mode, inp, sf, c)));
    },
    async encodeBitsRows(input, plan, codes) {
      const { bitsRowsSplit } = await import('../../codecs/split.js');
      return bitsRowsSplit(input, plan, codes, members.map((b) => b.encodeBitsRows.bind(b)));
    },
    scalarRanges: members[0].scalarRanges.bind(members[0]),
    scalarCodes: members[0].scalarCodes.bind(members[0]),
    decodeRows: members[0].decodeRows.bind(members[0]),
    // Its engines agree through one Comm, call by call, in the same order on every member (or rank): one at a time.
    smallEnginesAtOnce: 1,
    open(data: Dataset, m: number): Promise<Engine> {
      return openShards(data.n, (k, r0, r1) => members[k].open(sliceRows(data, r0, r1), m));
    },
    /** The listed rows split as open() splits their copy: member k takes its range of the list, read in place where it can. */
    openRows(data: Dataset, list: Int32Array, m: number): Promise<Engine> {
      return openShards(list.length, (k, r0, r1) => {
        return members[k].openRows(data, list.subarray(r0, r1), m);
      });
    },
    async close(): Promise<void> {
      const done = await Promise.allSettled(members.map((b) => b.close()));
      const failed = done.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
  };
}
