// The Engine of src/backend/types.ts on one GPU. Everything n-sized stays on the device: the
// vectors (f16 stays f16), the top-2 of each point, the assignments and the k-means++ distances.
// Per iterate() the host receives two scalars (energy sum, changed count); stats() downloads the
// m-sized statistics for maintenance. All buffers are allocated once in create() and reused.
import type { AnchorStats, Engine, IterParams, IterStats } from '../types.js';
import { rowF32, type Dataset } from '../../io/dataset.js';
import { interruptSignal } from '../../interrupt.js';
import { InterruptedError } from '../../errors.js';
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import type { CudaContext } from './context.js';
import type { DeviceBuffer } from './pool.js';
import { CudaError } from './check.js';
import { CU } from './status.js';
import { fmtBytes, memInfo } from './pool.js';
import { ptr, i32, i64, f64 } from './args.js';

const SEED_POINTS = 256; // points per block of seed.cu (SEED_POINTS there)
const SEED_THREADS = 256;
const ASSIGN_POINTS = 128; // AS_P of assign.cu
const THREADS = 256;
const UPLOAD_CHUNK = 64 * 2 ** 20; // bytes per host→device copy, so Ctrl-C is seen between chunks

/** Which build of the assign kernel to use (cuda/assign.cu): 'occ1' measured faster on the H100 (docs/cuda.md). */
export type AssignVariant = 'occ1' | 'occ2';

export interface CudaEngineOptions {
  assignVariant?: AssignVariant;
  /**
   * Points per thread of the tiled kernels (cuda/tile.cuh): 8 (128 points per block, one block
   * per SM) or 4 (64 points per block, two blocks per SM; the default: prod measured 20.7 vs
   * 22.6 ms per iteration on the H100, mnemo equal). VLC_CUDA_TILE=p8|p4 overrides.
   */
  tile?: 'p8' | 'p4';
  /**
   * Screen with the f32 expansion, then decide exactly (cuda/screen.cu). Default: on when the
   * pass is large enough to gain (n·m·d >= 2^24) and m >= 3; VLC_CUDA_SCREEN=0|1 overrides.
   * Either way the assignments are those of the direct pass.
   */
  screen?: boolean;
}

/** Host-side profile of an engine (bench and test-cuda report it). */
export interface EngineProfile {
  passes: number;
  passGpuMs: number;
  passWallMs: number;
  seedCalls: number;
  seedWallMs: number;
  screenPasses: number;
  /** Points the screen could not decide, summed over the screened passes. */
  screenFallbacks: number;
}

/** Timings of the last pass, for `vlc bench` (CUDA events). */
export interface PassTimes {
  passMs: number;
  assignMs: number;
}

/** Device bytes one engine needs for n×d vectors and m anchors (all of it resident). */
export function engineBytes(n: number, d: number, m: number, dtype: 'f32' | 'f16', smCount: number): number {
  const vectors = n * d * (dtype === 'f16' ? 2 : 4);
  const perPoint = n * 4 * 9; // j1, d1, j2, d2, assign, seed D, ‖x‖², screen's 3rd candidate, fallback list
  const anchors = m * d * (4 + 8) + m * (8 + 4 + 8 + 8 + 8 + 4); // C, S; W, count, sse, far, H, ‖c‖²
  const partials = Math.ceil(n / SEED_POINTS) * 8 * 8 + reduceGrid(n, smCount) * 16 + 64;
  return vectors + perPoint + anchors + partials + d * 4 * 9;
}

function reduceGrid(n: number, smCount: number): number {
  return Math.max(1, Math.min(Math.ceil(n / 8), smCount * 8));
}

/**
 * Fixed-point scales of the reduce step's 64-bit integer sums (cuda/reduce.cu): a sum of at most
 * n terms |w·x| <= maxAbs must stay below 2^61 after scaling, so sums never overflow and carry as
 * many fractional bits as that allows (with n = 10^6 and |x| <= 10: 2^37, i.e. ~1e-11 absolute).
 */
export function fixedScales(n: number, maxAbs: number): { sScale: number; wScale: number } {
  const bound = (v: number) => 2 ** Math.floor(61 - Math.log2(Math.max(1, v)));
  return { sScale: bound(n * maxAbs), wScale: bound(n) };
}

export class CudaEngine implements Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;
  private readonly sfx: string;
  private readonly assignFn: string;
  private readonly screenFn: string;
  /** Points per block of assignFn / screenFn. */
  private readonly tilePoints: number;
  private bufs: DeviceBuffer[] = [];
  private X!: DeviceBuffer;
  private C!: DeviceBuffer;
  private J1!: DeviceBuffer;
  private D1!: DeviceBuffer;
  private J2!: DeviceBuffer;
  private D2!: DeviceBuffer;
  private assign!: DeviceBuffer;
  private seedD!: DeviceBuffer;
  private S!: DeviceBuffer;
  private W!: DeviceBuffer;
  private count!: DeviceBuffer;
  private sse!: DeviceBuffer;
  private far!: DeviceBuffer;
  private H!: DeviceBuffer;
  private partial!: DeviceBuffer;
  private seedPartial!: DeviceBuffer;
  private result!: DeviceBuffer;
  private cand!: DeviceBuffer;
  private candRows = 0;
  private readonly seedBlocks: number;
  private readonly rGrid: number;
  private scales = { sScale: 1, wScale: 1 };
  private hasPrev = false;
  private seedSums: Float64Array;
  private screen: boolean;
  private xx!: DeviceBuffer;
  private cc!: DeviceBuffer;
  private screenScalars!: DeviceBuffer;
  private fallbackList!: DeviceBuffer;
  private J3!: DeviceBuffer;
  profile: EngineProfile = { passes: 0, passGpuMs: 0, passWallMs: 0, seedCalls: 0, seedWallMs: 0, screenPasses: 0, screenFallbacks: 0 };
  private disposed = false;
  private ev: { start: bigint; a0: bigint; a1: bigint; end: bigint };
  lastTimes: PassTimes = { passMs: 0, assignMs: 0 };

  /** Whether the next pass screens (tests and bench read it). */
  get screening(): boolean {
    return this.screen;
  }

  private constructor(private readonly ctx: CudaContext, private readonly data: Dataset, m: number, o: CudaEngineOptions) {
    this.n = data.n;
    this.d = data.d;
    this.m = m;
    this.sfx = data.dtype === 'f16' ? '_f16' : '_f32';
    const envTile = process.env.VLC_CUDA_TILE;
    const p4 = (o.tile ?? (envTile === 'p8' ? 'p8' : 'p4')) === 'p4';
    this.tilePoints = p4 ? 64 : ASSIGN_POINTS;
    this.assignFn = `assign_top2${this.sfx}${p4 ? '_p4' : (o.assignVariant ?? defaultVariant()) === 'occ2' ? '_occ2' : ''}`;
    this.screenFn = `screen_top2${this.sfx}${p4 ? '_p4' : ''}`;
    const env = process.env.VLC_CUDA_SCREEN;
    this.screen = m >= 3 && (o.screen ?? (env === '1' ? true : env === '0' ? false : this.n * m * this.d >= 2 ** 24));
    this.seedBlocks = Math.ceil(this.n / SEED_POINTS);
    this.rGrid = reduceGrid(this.n, ctx.info.multiprocessors);
    this.seedSums = new Float64Array(this.seedBlocks);
    this.ev = { start: ctx.event(), a0: ctx.event(), a1: ctx.event(), end: ctx.event() };
  }

  /** Allocate every buffer, upload the vectors once, measure their range. Frees all on failure. */
  static async create(ctx: CudaContext, data: Dataset, m: number, o: CudaEngineOptions = {}): Promise<CudaEngine> {
    const e = new CudaEngine(ctx, data, m, o);
    try {
      await e.init();
      return e;
    } catch (err) {
      await e.dispose().catch(() => undefined);
      throw err;
    }
  }

  private alloc(name: string, bytes: number): DeviceBuffer {
    const b = this.ctx.pool.alloc(name, bytes);
    this.bufs.push(b);
    return b;
  }

  private async init(): Promise<void> {
    const { n, d, m, ctx } = this;
    ctx.makeCurrent();
    const need = engineBytes(n, d, m, this.data.dtype, ctx.info.multiprocessors);
    const [free, total] = memInfo(ctx.drv);
    if (total > 0 && need > free) {
      throw new CudaError(
        `the data do not fit on ${ctx.where}: ${n}×${d} ${this.data.dtype} vectors with ${m} anchors need ` +
          `${fmtBytes(need)} of GPU memory, ${fmtBytes(free)} free of ${fmtBytes(total)}; ` +
          `use fewer vectors (or f16 input), another GPU (--gpu), or --device cpu`,
        CU.OUT_OF_MEMORY,
      );
    }
    const elem = this.data.dtype === 'f16' ? 2 : 4;
    this.X = this.alloc('vectors', n * d * elem);
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
    this.partial = this.alloc('reduce partials', this.rGrid * 16);
    this.seedPartial = this.alloc('seeding partials', this.seedBlocks * 8);
    this.result = this.alloc('pass result', 64);
    this.xx = this.alloc('point norms', n * 4);
    this.cc = this.alloc('anchor norms', m * 4);
    this.screenScalars = this.alloc('screen scalars', 16);
    this.fallbackList = this.alloc('screen fallback list', n * 4);
    this.J3 = this.alloc('screen third candidate', n * 4);
    this.growCandidates(8);

    await this.uploadVectors();
    // "No assignment yet": every point counts as changed in the first pass; no previous stats.
    this.fill(this.assign, 0xff);
    this.fill(this.count, 0);
    this.fill(this.sse, 0);

    // The largest |x| sets the fixed-point scale of the sums (reduce.cu).
    const maxBits = new Uint32Array(1);
    this.ctx.upload(this.result, maxBits);
    const blocks = Math.max(1, Math.min(Math.ceil((n * d) / THREADS), ctx.info.multiprocessors * 16));
    ctx.launch('seed', `max_abs${this.sfx}`, blocks, THREADS, [ptr(this.X.ptr), i64(n * d), ptr(this.result.ptr)]);
    await this.sync();
    ctx.download(maxBits, this.result);
    const maxAbs = new Float32Array(maxBits.buffer)[0];
    if (!Number.isFinite(maxAbs)) throw new CudaError('the vectors contain NaN or infinite values; use --drop-invalid', 0);
    this.scales = fixedScales(n, maxAbs);
    ctx.launch('screen', `point_norms${this.sfx}`, Math.ceil(n / THREADS), THREADS, [ptr(this.X.ptr), i32(n), i32(d), ptr(this.xx.ptr)]);
    await this.sync();
  }

  /** memset through a host buffer (only at open: never in the loop). */
  private fill(buf: DeviceBuffer, byte: number): void {
    this.ctx.upload(buf, new Uint8Array(buf.bytes).fill(byte));
  }

  private async uploadVectors(): Promise<void> {
    const src = this.data.data;
    const bytes = new Uint8Array(src.buffer, src.byteOffset, this.n * this.d * (this.data.dtype === 'f16' ? 2 : 4));
    for (let off = 0; off < bytes.length; off += UPLOAD_CHUNK) {
      this.ctx.upload(this.X, bytes.subarray(off, Math.min(bytes.length, off + UPLOAD_CHUNK)), off);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (off + UPLOAD_CHUNK < bytes.length) await yieldImmediate();
    }
  }

  private growCandidates(rows: number): void {
    if (rows <= this.candRows) return;
    if (this.cand) {
      this.ctx.pool.free(this.cand);
      this.ctx.pool.free(this.seedPartialTry);
      this.bufs = this.bufs.filter((b) => b !== this.cand && b !== this.seedPartialTry);
    }
    this.cand = this.alloc('seeding candidates', rows * this.d * 4);
    this.seedPartialTry = this.alloc('seeding try partials', rows * this.seedBlocks * 8);
    this.candRows = rows;
  }
  private seedPartialTry!: DeviceBuffer;
  private tryPart = new Float64Array(0);

  private async sync(): Promise<void> {
    this.ctx.record(this.ev.end);
    await this.ctx.wait(this.ev.end);
  }

  private live(): void {
    if (this.disposed) throw new Error('CUDA engine used after dispose()');
    this.ctx.makeCurrent();
  }

  // --- k-means++ seeding ---

  private async seedPass(c: Float32Array, mode: 0 | 1): Promise<number> {
    this.live();
    const t0 = performance.now();
    this.ctx.upload(this.cand, c.subarray(0, this.d));
    this.ctx.launch('seed', `seed_dist${this.sfx}`, this.seedBlocks, SEED_THREADS, [
      ptr(this.X.ptr), i32(this.n), i32(this.d), ptr(this.cand.ptr), ptr(this.seedD.ptr), i32(mode), ptr(this.seedPartial.ptr),
    ]);
    await this.sync();
    this.ctx.download(this.seedSums, this.seedPartial);
    let s = 0;
    for (const v of this.seedSums) s += v;
    this.profile.seedCalls++;
    this.profile.seedWallMs += performance.now() - t0;
    return s;
  }

  seedBegin(c: Float32Array): Promise<number> {
    return this.seedPass(c, 0);
  }

  seedAdd(c: Float32Array): Promise<number> {
    return this.seedPass(c, 1);
  }

  async seedTry(cands: Float32Array): Promise<Float64Array> {
    this.live();
    const L = Math.floor(cands.length / this.d);
    this.growCandidates(L);
    this.ctx.upload(this.cand, cands.subarray(0, L * this.d));
    this.ctx.launch('seed', `seed_try${this.sfx}`, this.seedBlocks, SEED_THREADS, [
      ptr(this.X.ptr), i32(this.n), i32(this.d), ptr(this.cand.ptr), i32(L), ptr(this.seedD.ptr), ptr(this.seedPartialTry.ptr),
    ]);
    await this.sync();
    if (this.tryPart.length < this.seedBlocks * L) this.tryPart = new Float64Array(this.seedBlocks * L);
    const part = this.tryPart.subarray(0, this.seedBlocks * L); // reused: no 100s of KB per call
    this.ctx.download(part, this.seedPartialTry);
    const out = new Float64Array(L);
    for (let b = 0; b < this.seedBlocks; b++) for (let l = 0; l < L; l++) out[l] += part[b * L + l];
    return out;
  }

  async seedPick(target: number): Promise<number> {
    this.live();
    // Locate the block from the per-block sums of the last seedBegin/seedAdd, then scan its D.
    const P = this.seedSums;
    let acc = 0;
    let b = 0;
    while (b < P.length && acc + P[b] <= target) acc += P[b++];
    if (b === P.length) {
      // target at the very top (rounding): the last block with any mass
      b = P.length - 1;
      while (b > 0 && P[b] === 0) b--;
      acc = 0;
      for (let k = 0; k < b; k++) acc += P[k];
    }
    const first = b * SEED_POINTS;
    const len = Math.min(SEED_POINTS, this.n - first);
    const D = new Float32Array(len);
    this.ctx.download(D, this.seedD, first * 4);
    let lastPositive = 0;
    for (let k = 0; k < len; k++) {
      if (D[k] > 0) lastPositive = k;
      acc += D[k];
      if (acc > target) return first + k;
    }
    return first + lastPositive;
  }

  /** Served from the host copy of the vectors (identical to the device's): no transfer. */
  async row(i: number): Promise<Float32Array> {
    this.live();
    if (!(i >= 0 && i < this.n)) throw new Error(`row ${i} out of range 0..${this.n - 1}`);
    return rowF32(this.data, i);
  }

  // --- the loop ---

  async setAnchors(anchors: Float32Array): Promise<void> {
    this.live();
    if (anchors.length !== this.m * this.d) throw new Error(`setAnchors: expected ${this.m}×${this.d} values, got ${anchors.length}`);
    this.ctx.upload(this.C, anchors);
  }

  async getAnchors(): Promise<Float32Array> {
    this.live();
    const out = new Float32Array(this.m * this.d);
    this.ctx.download(out, this.C);
    return out;
  }

  iterate(p: IterParams): Promise<IterStats> {
    return this.pass(p.temperature, p.step, p.huber);
  }

  finalize(): Promise<IterStats> {
    return this.pass(0, 0, 0);
  }

  /** One assign → reduce → (update) pass, all on the stream; two scalars come back. */
  private async pass(temperature: number, step: number, huber: number): Promise<IterStats> {
    this.live();
    const { ctx, n, d, m } = this;
    const { sScale, wScale } = this.scales;
    const accumulate = step > 0 ? 1 : 0;
    const tStart = performance.now();
    ctx.record(this.ev.start);
    ctx.launch('update', 'pass_begin', Math.ceil(Math.max(m * d, m) / THREADS), THREADS, [
      i32(m), i32(d), f64(huber), i32(this.hasPrev ? 1 : 0),
      ptr(this.count.ptr), ptr(this.sse.ptr), ptr(this.far.ptr), ptr(this.W.ptr), ptr(this.S.ptr), ptr(this.H.ptr),
    ]);
    ctx.record(this.ev.a0);
    const screened = this.screen;
    const top2 = [ptr(this.J1.ptr), ptr(this.D1.ptr), ptr(this.J2.ptr), ptr(this.D2.ptr)];
    if (screened) {
      const ccMax = this.screenScalars.ptr;
      const count = this.screenScalars.ptr + 4n;
      ctx.launch('screen', 'anchor_norms', 1, 1024, [ptr(this.C.ptr), i32(m), i32(d), ptr(this.cc.ptr), ptr(ccMax), ptr(count)]);
      ctx.launch('screen', this.screenFn, Math.ceil(n / this.tilePoints), THREADS, [
        ptr(this.X.ptr), ptr(this.C.ptr), ptr(this.xx.ptr), ptr(this.cc.ptr), i32(n), i32(d), i32(m),
        ptr(this.J1.ptr), ptr(this.J2.ptr), ptr(this.J3.ptr), ptr(this.D1.ptr), ptr(this.D2.ptr),
      ]);
      ctx.launch('screen', `screen_exact${this.sfx}`, this.rGrid * 2, THREADS, [
        ptr(this.X.ptr), ptr(this.C.ptr), ptr(this.xx.ptr), ptr(ccMax), i32(n), i32(d), ...top2, ptr(this.J3.ptr),
        ptr(this.fallbackList.ptr), ptr(count),
      ]);
      ctx.launch('assign', `assign_list${this.sfx}`, Math.ceil(n / ASSIGN_POINTS), THREADS, [
        ptr(this.X.ptr), ptr(this.C.ptr), i32(n), i32(d), i32(m), ...top2, ptr(this.fallbackList.ptr), ptr(count),
      ]);
    } else {
      ctx.launch('assign', this.assignFn, Math.ceil(n / this.tilePoints), THREADS, [
        ptr(this.X.ptr), ptr(this.C.ptr), i32(n), i32(d), i32(m), ...top2,
      ]);
    }
    ctx.record(this.ev.a1);
    ctx.launch('reduce', `reduce_points${this.sfx}`, this.rGrid, THREADS, [
      ptr(this.X.ptr), i32(n), i32(d),
      ptr(this.J1.ptr), ptr(this.D1.ptr), ptr(this.J2.ptr), ptr(this.D2.ptr),
      ptr(this.assign.ptr), ptr(this.H.ptr),
      f64(Math.max(0, temperature)), i32(accumulate), f64(sScale), f64(wScale),
      ptr(this.S.ptr), ptr(this.W.ptr), ptr(this.count.ptr), ptr(this.sse.ptr), ptr(this.far.ptr), ptr(this.partial.ptr),
    ]);
    ctx.launch('reduce', 'pass_end', 1, THREADS, [
      ptr(this.partial.ptr), i32(this.rGrid), ptr(screened ? this.screenScalars.ptr + 4n : 0n), ptr(this.result.ptr),
    ]);
    if (step > 0) {
      ctx.launch('update', 'update_anchors', Math.ceil((m * d) / THREADS), THREADS, [
        ptr(this.C.ptr), ptr(this.S.ptr), ptr(this.W.ptr), i32(m), i32(d), f64(step), f64(sScale), f64(wScale),
      ]);
    }
    ctx.record(this.ev.end);
    await ctx.wait(this.ev.end, this.lastTimes.passMs);
    const res = new Float64Array(3);
    ctx.download(res, this.result);
    this.hasPrev = true;
    const ms = ctx.elapsedMs(this.ev.start, this.ev.end);
    this.lastTimes = { passMs: ms, assignMs: ctx.elapsedMs(this.ev.a0, this.ev.a1) };
    const p = this.profile;
    p.passes++;
    p.passGpuMs += ms;
    p.passWallMs += performance.now() - tStart;
    if (screened) {
      p.screenPasses++;
      p.screenFallbacks += res[2];
      // Data the screen cannot decide (far from the origin, e.g. test-cuda's): stop screening.
      if (res[2] > 0.25 * n) this.screen = false;
    }
    return { energy: res[0] / n, changed: Math.round(res[1]), ms };
  }

  /**
   * Tests only: fill every per-pass output (top-2 arrays, sums, farthest, partials) with 0xff
   * bytes — NaN distances, out-of-range indices — so a kernel that skips an element is caught.
   */
  poisonForTests(): void {
    for (const b of [this.J1, this.D1, this.J2, this.D2, this.S, this.W, this.far, this.partial, this.result, this.seedD, this.seedPartial, this.cc, this.screenScalars, this.fallbackList]) {
      this.fill(b, 0xff);
    }
  }

  async stats(): Promise<AnchorStats> {
    this.live();
    const m = this.m;
    const cnt = new Uint32Array(m);
    const sse = new Float64Array(m);
    const far = new BigUint64Array(m);
    this.ctx.download(cnt, this.count);
    this.ctx.download(sse, this.sse);
    this.ctx.download(far, this.far);
    const out: AnchorStats = {
      count: Float64Array.from(cnt),
      sse,
      far: new Int32Array(m),
      farDist: new Float64Array(m),
    };
    const bits = new Uint32Array(1);
    const asFloat = new Float32Array(bits.buffer);
    for (let j = 0; j < m; j++) {
      if (cnt[j] === 0) {
        out.far[j] = -1;
        continue;
      }
      const packed = far[j];
      out.far[j] = 0xffffffff - Number(packed & 0xffffffffn);
      bits[0] = Number(packed >> 32n);
      out.farDist[j] = asFloat[0];
    }
    return out;
  }

  async assignments(): Promise<Uint32Array> {
    this.live();
    const out = new Uint32Array(this.n);
    this.ctx.download(out, this.assign);
    return out;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    let first: unknown;
    for (const b of this.bufs) {
      try {
        this.ctx.pool.free(b);
      } catch (e) {
        first ??= e;
      }
    }
    this.bufs = [];
    for (const ev of Object.values(this.ev)) this.ctx.destroyEvent(ev);
    if (first) throw first;
  }
}

function defaultVariant(): AssignVariant {
  const v = process.env.VLC_CUDA_ASSIGN;
  return v === 'occ1' || v === 'occ2' ? v : 'occ1';
}
