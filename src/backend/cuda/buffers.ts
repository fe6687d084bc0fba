// Every device buffer of one engine, allocated once (when it opens; the screen's, at its first
// screened pass: pass.ts) and reused by every call (no
// allocation in the loop), named for the out-of-memory message and freed together. Sizes in
// bytes; "per point" arrays hold the engine's n rows, whatever the tiling.
import type { CudaContext } from './context.js';
import type { DeviceBuffer } from './pool.js';
import { CONTRIBUTION_BYTES } from './plan.js';

export interface BufferShape {
  n: number;
  d: number;
  m: number;
  dtype: 'f32' | 'f16';
  /** Rows of vectors on the device at once (n resident, the tile's rows when tiled). */
  rows: number;
  tiled: boolean;
  /** Blocks of the reduce over all tiles (plan.ts reduceGrid), and k-means++ blocks. */
  reduceBlocks: number;
  /** Whether the passes add up through the sorted reduce (its lists: reduce.cu). */
  sortedReduce: boolean;
  seedBlocks: number;
}

export class EngineBuffers {
  private held: DeviceBuffer[] = [];
  // the vectors (all, or one tile) and the anchors
  X!: DeviceBuffer;
  /** Streamed: the second tile buffer (one is uploaded while the kernels read the other: spans.ts). */
  X2: DeviceBuffer | undefined;
  C!: DeviceBuffer;
  // per point: the top-2, the assignment, k-means++ D (the screen's own buffers: screen.ts)
  J1!: DeviceBuffer;
  D1!: DeviceBuffer;
  J2!: DeviceBuffer;
  D2!: DeviceBuffer;
  assign!: DeviceBuffer;
  seedD!: DeviceBuffer;
  // per anchor: the sums of a pass (fixed point), its statistics, the Huber thresholds
  S!: DeviceBuffer;
  W!: DeviceBuffer;
  count!: DeviceBuffer;
  sse!: DeviceBuffer;
  far!: DeviceBuffer;
  H!: DeviceBuffer;
  /**
   * The sorted reduce's lists (reduce.cu; absent with CudaOptions.reduce 'atomic'), named as the
   * kernels' arguments: per anchor its bucket's count (zero between spans) and offset, per row on
   * the device a rank pair and two contributions.
   */
  lists: { fill: DeviceBuffer; off: DeviceBuffer; rank: DeviceBuffer; list: DeviceBuffer } | undefined;
  // partials and scalars: reduce blocks (energy, changed), k-means++ blocks, the pass's result
  // (3 int64; at open, max |x|)
  partial!: DeviceBuffer;
  seedPartial!: DeviceBuffer;
  result!: DeviceBuffer;
  // k-means++ candidates and their per-block sums: grown on demand (grow())
  cand!: DeviceBuffer;
  seedPartialTry!: DeviceBuffer;
  candRows = 0;

  constructor(private readonly ctx: CudaContext) {}

  /** Allocate everything for `s` (on failure the ones already taken stay held: freeAll()). */
  allocate(s: BufferShape): void {
    const { n, d, m } = s;
    this.X = this.alloc(s.tiled ? 'vector tile' : 'vectors', s.rows * d * (s.dtype === 'f16' ? 2 : 4));
    if (s.tiled) this.X2 = this.alloc('second vector tile', s.rows * d * (s.dtype === 'f16' ? 2 : 4));
    this.C = this.alloc('anchors', m * d * 4);
    this.J1 = this.alloc('nearest', n * 4);
    this.D1 = this.alloc('nearest distance', n * 4);
    this.J2 = this.alloc('runner-up', n * 4);
    this.D2 = this.alloc('runner-up distance', n * 4);
    this.assign = this.alloc('assignments', n * 4);
    this.seedD = this.alloc('seeding distances', n * 4);
    this.S = this.alloc('anchor sums', m * d * 8);
    this.W = this.alloc('anchor weights', m * 8);
    this.count = this.alloc('anchor counts', m * 4);
    this.sse = this.alloc('anchor sse', m * 8);
    this.far = this.alloc('anchor farthest', m * 8);
    this.H = this.alloc('huber thresholds', m * 8);
    if (s.sortedReduce) {
      this.lists = {
        fill: this.alloc('reduce bucket counts', m * 4),
        off: this.alloc('reduce bucket offsets', (m + 1) * 4),
        rank: this.alloc('reduce ranks', s.rows * 8),
        list: this.alloc('reduce contributions', s.rows * 2 * CONTRIBUTION_BYTES),
      };
      this.fill(this.lists.fill, 0);
    }
    this.partial = this.alloc('reduce partials', s.reduceBlocks * 16);
    this.seedPartial = this.alloc('seeding partials', s.seedBlocks * 8);
    this.result = this.alloc('pass result', 64);
    this.growCandidates(8, d, s.seedBlocks);
  }

  alloc(name: string, bytes: number): DeviceBuffer {
    const b = this.ctx.pool.alloc(name, bytes);
    this.held.push(b);
    return b;
  }

  /** Room for `rows` k-means++ candidates (the buffers only grow). */
  growCandidates(rows: number, d: number, seedBlocks: number): void {
    if (rows <= this.candRows) return;
    if (this.cand) {
      this.free(this.cand);
      this.free(this.seedPartialTry);
    }
    this.cand = this.alloc('seeding candidates', rows * d * 4);
    this.seedPartialTry = this.alloc('seeding try partials', rows * seedBlocks * 8);
    this.candRows = rows;
  }

  /** memset on the device (at open and in tests: never in the loop). */
  fill(buf: DeviceBuffer, byte: number): void {
    this.ctx.fill(buf, byte);
  }

  private free(b: DeviceBuffer): void {
    this.ctx.pool.free(b);
    this.held = this.held.filter((x) => x !== b);
  }

  /** Every buffer a pass, a k-means++ call or nearestOther writes (tests poison them). */
  outputs(): DeviceBuffer[] {
    const lists = this.lists ? [this.lists.off, this.lists.rank, this.lists.list] : []; // not the bucket counts: zero between spans
    return [this.J1, this.D1, this.J2, this.D2, this.S, this.W, this.far, this.partial, this.result, this.seedD, this.seedPartial, ...lists];
  }

  /** Free every buffer; keeps going past failures and returns the first. */
  freeAll(): unknown {
    let first: unknown;
    for (const b of this.held) {
      try {
        this.ctx.pool.free(b);
      } catch (e) {
        first ??= e;
      }
    }
    this.held = [];
    return first;
  }
}
