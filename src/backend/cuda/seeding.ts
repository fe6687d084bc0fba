// k-means++ support on the device (Engine.seedBegin / seedAdd / seedTry / seedPick and the rounds'
// seedAddMany / seedPickMany, cuda/seed.cu). A round's candidates go through the passes' screen
// where the engine screens (pass.ts screenCandidates: the fp16 tensor-core GEMM ranks them, the
// direct chain measures the few that matter): its exact nearest distance is seed_many's to the bit,
// at a fraction of seed_many's SIMT work (docs/cuda.md).
// Each block of seed_dist owns SEED_POINTS consecutive points and writes the sum of its D values,
// in units of 1/scale, as an exact integer (fixed.ts); tiles start on block boundaries, so each
// tile's blocks write their own slots. The host keeps the block sums of the last begin/add to
// locate a sampling target, then scans that block's D values only.
import { fixedSeed, maxAbsOf, seedScale } from '../fixed.js';
import { pickIndexes } from '../seed-pick.js';
import type { EngineCore } from './core.js';
import { KERNELS } from './kernels.js';
import type { DeviceBuffer } from './pool.js';
import type { Span } from './spans.js';

/** DevicePass.screenCandidates: the rows' exact nearest of L candidates through the screen, or false where it does not pay. */
export type ScreenCandidates = (C: DeviceBuffer, L: number, after: (s: Span, d1: bigint) => void) => Promise<boolean>;

const SEED_POINTS = KERNELS.seed_dist.points.value;
/** seed_many's blocks are a fraction of a seeding block: this many make one. */
const MANY_PER_BLOCK = SEED_POINTS / KERNELS.seed_many.points.value;

export class DeviceSeeding {
  /** Units per unit of squared distance; set by seedBegin from the candidate's range. */
  scale = 1;
  readonly blocks: number;
  /** Per-block sums (units) of the last seedBegin/seedAdd: what seedPick searches. */
  private sums: Float64Array;
  /** seedTry's per-block, per-candidate sums (reused: no 100s of KB per call). */
  private tryPart = new Float64Array(0);
  /** pickMany's host copy of D (made on first use). */
  private hostD: Float32Array | undefined;
  calls = 0;
  wallMs = 0;

  constructor(private readonly e: EngineCore, private readonly screen?: ScreenCandidates) {
    this.blocks = Math.ceil(e.n / SEED_POINTS);
    this.sums = new Float64Array(this.blocks);
  }

  /** mode 0: D = dist(x, c) (seedBegin); 1: D = min(D, dist(x, c)) (seedAdd). Returns Σ D. */
  async pass(c: Float32Array, mode: 0 | 1): Promise<number> {
    const { e } = this;
    const t0 = performance.now();
    const cand = c.subarray(0, e.d);
    if (mode === 0) this.scale = seedScale(e.global.n, e.d, e.global.maxAbs, maxAbsOf(cand));
    e.ctx.upload(e.bufs.cand, cand);
    await e.spans.forEachSpan((s) => {
      // A tile starts on a seeding block boundary: its blocks' partials go to their places.
      e.run('seed_dist', Math.ceil(s.rows / SEED_POINTS), {
        X: s.x, n: s.rows, d: e.d, c: e.bufs.cand.ptr, D: e.spans.at(e.bufs.seedD, s), mode, seedScale: this.scale,
        partial: e.bufs.seedPartial.ptr + BigInt((s.p0 / SEED_POINTS) * 8),
      });
    });
    await e.sync();
    e.ctx.download(this.sums, e.bufs.seedPartial);
    this.calls++;
    this.wallMs += performance.now() - t0;
    return this.total();
  }

  /**
   * D = min(D, nearest of the L candidates) in one pass; returns Σ D. Through the passes' screen
   * where the engine screens (the screen's exact nearest distance: the same bits as seed_many's,
   * both are the direct chain), then seed_min, which writes the block sums as seed_dist does; else
   * seed_many (addManyDirect).
   */
  async addMany(cands: Float32Array): Promise<number> {
    const { e } = this;
    const t0 = performance.now();
    const L = Math.floor(cands.length / e.d);
    if (L === 0) return this.total();
    e.bufs.growCandidates(Math.max(L, MANY_PER_BLOCK), e.d, this.blocks);
    e.ctx.upload(e.bufs.cand, cands.subarray(0, L * e.d));
    const screened = this.screen && (await this.screen(e.bufs.cand, L, (s, d1) => {
      e.run('seed_min', Math.ceil(s.rows / SEED_POINTS), {
        D: e.spans.at(e.bufs.seedD, s), D1: d1, n: s.rows, seedScale: this.scale, partial: e.bufs.seedPartial.ptr + BigInt((s.p0 / SEED_POINTS) * 8),
      });
    }));
    if (screened) {
      await e.sync();
      e.ctx.download(this.sums, e.bufs.seedPartial);
    } else await this.addManyDirect(L);
    this.calls++;
    this.wallMs += performance.now() - t0;
    return this.total();
  }

  /**
   * addMany by seed_many over the L candidates uploaded. Its blocks are a quarter of a seeding
   * block: their partials (in the try buffer) add up to the block sums pick uses.
   */
  private async addManyDirect(L: number): Promise<void> {
    const { e } = this;
    const parts = this.blocks * MANY_PER_BLOCK;
    await e.spans.forEachSpan((s) => {
      e.run('seed_many', Math.ceil(s.rows / KERNELS.seed_many.points.value), {
        X: s.x, n: s.rows, d: e.d, C: e.bufs.cand.ptr, L, D: e.spans.at(e.bufs.seedD, s), seedScale: this.scale,
        partial: e.bufs.seedPartialTry.ptr + BigInt((s.p0 / SEED_POINTS) * MANY_PER_BLOCK * 8),
      });
    });
    await e.sync();
    if (this.tryPart.length < parts) this.tryPart = new Float64Array(parts);
    const part = this.tryPart.subarray(0, parts);
    // The last seeding block may hold fewer seed_many blocks than MANY_PER_BLOCK: their slots stay 0.
    part.fill(0);
    e.ctx.download(part.subarray(0, Math.ceil(e.n / KERNELS.seed_many.points.value)), e.bufs.seedPartialTry);
    for (let b = 0; b < this.blocks; b++) {
      let s = 0;
      for (let q = 0; q < MANY_PER_BLOCK; q++) s += part[b * MANY_PER_BLOCK + q];
      this.sums[b] = s;
    }
  }

  /** Σ D of the last begin/add, from the block sums. */
  private total(): number {
    let units = 0;
    for (const v of this.sums) units += v; // integers below 2^53: exact
    return units / this.scale;
  }

  /** pick() of each target against the same D: D comes down once, the walk is seed-pick.ts's. */
  async pickMany(targets: Float64Array): Promise<Int32Array> {
    if (targets.length === 0) return new Int32Array(0);
    // One host copy of D for every round (a fresh array each round paid its page faults each time).
    this.hostD ??= new Float32Array(this.e.n);
    const D = this.hostD;
    this.e.ctx.download(D, this.e.bufs.seedD);
    const scale = this.scale;
    return pickIndexes(targets, scale, this.sums, SEED_POINTS, this.e.n, (i) => fixedSeed(D[i], scale));
  }

  /** For each of L candidates, Σ_i min(D[i], dist(x_i, c_l)); D unchanged. */
  async tryCandidates(cands: Float32Array): Promise<Float64Array> {
    const { e } = this;
    const L = Math.floor(cands.length / e.d);
    e.bufs.growCandidates(L, e.d, this.blocks);
    e.ctx.upload(e.bufs.cand, cands.subarray(0, L * e.d));
    await e.spans.forEachSpan((s) => {
      e.run('seed_try', Math.ceil(s.rows / SEED_POINTS), {
        X: s.x, n: s.rows, d: e.d, C: e.bufs.cand.ptr, L, D: e.spans.at(e.bufs.seedD, s), seedScale: this.scale,
        partial: e.bufs.seedPartialTry.ptr + BigInt((s.p0 / SEED_POINTS) * L * 8),
      });
    });
    await e.sync();
    if (this.tryPart.length < this.blocks * L) this.tryPart = new Float64Array(this.blocks * L);
    const part = this.tryPart.subarray(0, this.blocks * L);
    e.ctx.download(part, e.bufs.seedPartialTry);
    const out = new Float64Array(L);
    for (let b = 0; b < this.blocks; b++) for (let l = 0; l < L; l++) out[l] += part[b * L + l];
    for (let l = 0; l < L; l++) out[l] /= this.scale;
    return out;
  }

  /**
   * The smallest i whose prefix of units exceeds floor(target·scale): the block from the block
   * sums, then a scan of that block's D; at or past the total, the last point with a share.
   */
  async pick(target: number): Promise<number> {
    const T = Math.floor(target * this.scale);
    const P = this.sums;
    let acc = 0;
    let b = 0;
    while (b < P.length && acc + P[b] <= T) acc += P[b++];
    const past = b === P.length;
    if (past) {
      b = P.length - 1;
      while (b > 0 && P[b] === 0) b--;
    }
    const first = b * SEED_POINTS;
    const D = new Float32Array(Math.min(SEED_POINTS, this.e.n - first));
    this.e.ctx.download(D, this.e.bufs.seedD, first * 4);
    let lastShare = 0;
    for (let k = 0; k < D.length; k++) {
      const q = fixedSeed(D[k], this.scale);
      if (q > 0) lastShare = k;
      acc += q;
      if (!past && acc > T) return first + k;
    }
    return first + lastShare;
  }
}
