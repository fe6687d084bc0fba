// The Engine of src/backend/types.ts on one GPU. Everything n-sized stays on the device: the
// vectors (f16 stays f16), the top-2 of each point, the assignments and the k-means++ distances.
// Per iterate() the host receives two scalars (energy sum, changed count); stats() downloads the
// m-sized statistics for maintenance. All buffers are allocated once in create() and reused.
//
// When the vectors do not fit (but everything else does), they stay on the host and stream
// through one device buffer of `tileRows` rows: every pass, seeding call and the setup run the same
// kernels tile by tile, with the per-point pointers offset to the tile, and wait for each tile
// before the next upload overwrites the buffer. Slower (the vectors cross the bus on every pass),
// but the same results: each point's work does not depend on its tile, S and W are integer sums,
// and the tile rows are a multiple of the seeding blocks' 256 points, so every per-block partial
// covers the same points as in the resident layout and is summed in the same fixed order.
import type { AnchorStats, Engine, IterParams, IterStats, NearestAnchors } from '../types.js';
import { nearestOtherFromTop2, noNearestAnchors } from '../nearest-other.js';
import { rowF32, type Dataset } from '../../io/dataset.js';
import { interruptSignal } from '../../interrupt.js';
import { InterruptedError, UsageError } from '../../errors.js';
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import type { CudaContext } from './context.js';
import type { DeviceBuffer } from './pool.js';
import { CudaError } from './check.js';
import { CU } from './status.js';
import { fmtBytes, memInfo } from './pool.js';
import { ptr, i32, i64, f32, f64 } from './args.js';
import { log } from '../../log.js';

const SEED_POINTS = 256; // points per block of seed.cu (SEED_POINTS there)
const SEED_THREADS = 256;
const ASSIGN_POINTS = 128; // AS_P of assign.cu
const TC_POINTS = 128; // TC_P of screen_tc.cu
const THREADS = 256;
const UPLOAD_CHUNK = 64 * 2 ** 20; // bytes per host→device copy, so Ctrl-C is seen between chunks
// Tiled mode. Tile rows are a multiple of SEED_POINTS so that each seeding block lies inside one
// tile (its partial sum is then the resident layout's). A tile larger than TILE_MAX_BYTES gains
// nothing (one copy and one wait per tile) and would take memory that other processes may want;
// TILE_MARGIN stays free when the tile is sized from the free memory (allocation granularity, the
// driver's own needs, the seeding candidates that grow later).
const TILE_ALIGN = SEED_POINTS;
const TILE_MAX_BYTES = 2 ** 30;
const TILE_MARGIN = 64 * 2 ** 20;

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
  /**
   * Screen on tensor cores (cuda/screen_tc.cu, 3xTF32 dot products) instead of f32 FMAs; still
   * exact, as the bound that decides which points fall back grows to match. Default on;
   * VLC_CUDA_TC=0|1 overrides.
   */
  tensorCores?: boolean;
  /**
   * Use at most this many bytes of GPU memory (default: whatever is free). When the engine needs
   * more, the vectors are streamed from host memory in tiles (see engineBytes). The environment
   * variable VLC_CUDA_MAX_BYTES sets it too (bytes, or with a K/M/G/T suffix: 6G).
   */
  maxDeviceBytes?: number;
  /** Tests and measurements: stream the vectors in tiles of this many rows (a multiple of 256) even when they fit. */
  tileRows?: number;
}

/** Rows [p0, p0 + rows) of the data, on the device at x (the resident vectors, or the tile buffer). */
interface Span {
  p0: number;
  rows: number;
  x: bigint;
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

/**
 * The screens' rounding bound (cuda/screen.cu, cuda/screen_tc.cu): every approximate distance is
 * within B = coef·(‖x‖ + max‖c‖)² of the f32 direct distance that decides. With u = 2^-24 and
 * γ = d·u/(1 − d·u): the f32 screen's dot product, norms and direct distance are each off by at
 * most γ·(‖x‖ + ‖c‖)², plus a few roundings: coef = 2γ + 8u. The tensor-core screen's 3xTF32 dot
 * product is off by at most (γtc + 16u)·‖x‖‖c‖, where 16u covers the dropped lo·lo terms and the
 * split's remainders, and γtc allows each of its 3·⌈d/8⌉ mma steps an error of 18u times the
 * magnitudes it sums (tensor cores truncate when they align the products); −2·dot doubles it and
 * 2‖x‖‖c‖ <= (‖x‖ + ‖c‖)²/2. Rounded up to an f32 so the kernel never uses less.
 */
export function screenBound(d: number, tensorCores: boolean): number {
  const u = 2 ** -24;
  const gamma = (d * u) / (1 - d * u);
  let coef = 2 * gamma + 8 * u;
  if (tensorCores) coef += (3 * Math.ceil(d / 8) * 18 * u + 16 * u) / 2;
  const f = Math.fround(coef);
  return f >= coef ? f : f * (1 + 2 ** -23);
}

/**
 * Device bytes one engine needs for n×d vectors and m anchors: with all the vectors on the GPU
 * (tileRows 0), or streamed through a buffer of tileRows rows. Only the vectors and the screen's
 * fallback list (it holds one launch's points) shrink with the tile; every per-point and per-anchor
 * array stays whole, and the reduce partials grow by one grid per tile.
 */
export function engineBytes(n: number, d: number, m: number, dtype: 'f32' | 'f16', smCount: number, tileRows = 0): number {
  const rows = Math.max(1, tileRows > 0 ? Math.min(tileRows, n) : n); // rows on the device at once
  const vectors = rows * d * (dtype === 'f16' ? 2 : 4);
  const perPoint = n * 4 * 8 + rows * 4; // j1, d1, j2, d2, assign, seed D, ‖x‖², screen's 3rd candidate; fallback list
  const anchors = m * d * (4 + 8) + m * (8 + 4 + 8 + 8 + 8 + 4 + 16); // C, S; W, count, sse, far, H, ‖c‖², nearestOther's top-2
  const partials = Math.ceil(n / SEED_POINTS) * 8 * 8 + Math.ceil(n / rows) * reduceGrid(rows, smCount) * 16 + 64;
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
  /** Points per block of assignFn. */
  private readonly tilePoints: number;
  /** Module and points per block of screenFn, and its rounding bound coefficient (screenBound). */
  private readonly screenModule: 'screen' | 'screen_tc';
  private readonly screenPoints: number;
  private readonly screenBcoef: number;
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
  /** Blocks of reduce_points per launch (per tile when tiled: the partials hold tiles × rGrid). */
  private rGrid: number;
  /** Rows per tile, 0 when all the vectors are resident (then X holds them all). */
  private tileRows = 0;
  private tiles = 1;
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

  /** Tiles of the vectors (rows per tile, count), null when they are all resident. Tests read it. */
  get tiling(): { rows: number; tiles: number } | null {
    return this.tileRows ? { rows: this.tileRows, tiles: this.tiles } : null;
  }

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
    const tc = o.tensorCores ?? process.env.VLC_CUDA_TC !== '0';
    this.screenModule = tc ? 'screen_tc' : 'screen';
    this.screenFn = tc ? `screen_tc${this.sfx}` : `screen_top2${this.sfx}${p4 ? '_p4' : ''}`;
    this.screenPoints = tc ? TC_POINTS : this.tilePoints;
    this.screenBcoef = screenBound(this.d, tc);
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
      await e.init(o);
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

  private async init(o: CudaEngineOptions): Promise<void> {
    const { n, d, m, ctx } = this;
    ctx.makeCurrent();
    this.planMemory(o);
    const rows = this.tileRows ? Math.min(this.tileRows, n) : n; // rows of vectors on the device at once
    const elem = this.data.dtype === 'f16' ? 2 : 4;
    this.X = this.alloc(this.tileRows ? 'vector tile' : 'vectors', rows * d * elem);
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
    this.partial = this.alloc('reduce partials', this.tiles * this.rGrid * 16);
    this.seedPartial = this.alloc('seeding partials', this.seedBlocks * 8);
    this.result = this.alloc('pass result', 64);
    this.xx = this.alloc('point norms', n * 4);
    this.cc = this.alloc('anchor norms', m * 4);
    this.screenScalars = this.alloc('screen scalars', 16);
    this.fallbackList = this.alloc('screen fallback list', rows * 4); // indexes within one launch's rows
    this.J3 = this.alloc('screen third candidate', n * 4);
    this.growCandidates(8);

    if (!this.tileRows) await this.uploadRows(0, n); // tiled: every use uploads its tiles
    // "No assignment yet": every point counts as changed in the first pass; no previous stats.
    this.fill(this.assign, 0xff);
    this.fill(this.count, 0);
    this.fill(this.sse, 0);

    // The largest |x| sets the fixed-point scale of the sums (reduce.cu); ‖x‖² is the screen's.
    const maxBits = new Uint32Array(1);
    this.ctx.upload(this.result, maxBits);
    for (let t = 0; t < this.tiles; t++) {
      const s = await this.stage(t);
      const blocks = Math.max(1, Math.min(Math.ceil((s.rows * d) / THREADS), ctx.info.multiprocessors * 16));
      ctx.launch('seed', `max_abs${this.sfx}`, blocks, THREADS, [ptr(s.x), i64(s.rows * d), ptr(this.result.ptr)]);
      ctx.launch('screen', `point_norms${this.sfx}`, Math.ceil(s.rows / THREADS), THREADS, [ptr(s.x), i32(s.rows), i32(d), this.at(this.xx, s)]);
    }
    await this.sync();
    ctx.download(maxBits, this.result);
    const maxAbs = new Float32Array(maxBits.buffer)[0];
    if (!Number.isFinite(maxAbs)) throw new CudaError('the vectors contain NaN or infinite values; use --drop-invalid', 0);
    this.scales = fixedScales(n, maxAbs);
  }

  /**
   * Resident (tileRows 0) when everything fits in the free memory, or in maxDeviceBytes /
   * VLC_CUDA_MAX_BYTES when that is lower: exactly the engine of before tiling. Otherwise the
   * vectors stream through a tile buffer as large as the memory left allows (less a margin, at
   * most TILE_MAX_BYTES), and the user is told once, since every pass is then slower. When even
   * the per-point and per-anchor state with a tile of TILE_ALIGN rows does not fit: a CudaError
   * (exit 3) with the bytes needed and free.
   */
  private planMemory(o: CudaEngineOptions): void {
    const { n, d, m, ctx } = this;
    const { dtype } = this.data;
    const sms = ctx.info.multiprocessors;
    const [free, total] = memInfo(ctx.drv);
    const limit = o.maxDeviceBytes ?? maxBytesFromEnv();
    // A driver that cannot say (total 0) constrains nothing; a limit the user gave still does.
    const budget = Math.min(total > 0 ? free : Infinity, limit ?? Infinity);
    const room =
      (limit !== undefined && limit < free ? `${fmtBytes(budget)} allowed (VLC_CUDA_MAX_BYTES), ` : '') +
      `${fmtBytes(free)} free of ${fmtBytes(total)}`;
    const resident = engineBytes(n, d, m, dtype, sms);
    const rowBytes = d * (dtype === 'f16' ? 2 : 4);
    let rows: number;
    if (o.tileRows !== undefined) {
      if (!(Number.isInteger(o.tileRows) && o.tileRows > 0 && o.tileRows % TILE_ALIGN === 0)) {
        throw new Error(`tileRows must be a positive multiple of ${TILE_ALIGN}, got ${o.tileRows}`);
      }
      rows = o.tileRows;
    } else {
      if (resident <= budget) return;
      const minimal = engineBytes(n, d, m, dtype, sms, TILE_ALIGN);
      if (minimal > budget) {
        throw new CudaError(
          `the data do not fit on ${ctx.where}: ${n}×${d} ${dtype} vectors with ${m} anchors need ${fmtBytes(minimal)} ` +
            `of GPU memory even with the vectors streamed from host memory in tiles of ${TILE_ALIGN} rows ` +
            `(${fmtBytes(resident)} with all of them on the GPU), ${room}; ` +
            `use fewer vectors or anchors, another GPU (--gpu), or --device cpu`,
          CU.OUT_OF_MEMORY,
        );
      }
      // The largest tile (in units of TILE_ALIGN rows, at most TILE_MAX_BYTES) that fits beside
      // the rest with the margin: a binary search, engineBytes growing with the rows. One unit
      // always goes (minimal fits), even where the margin does not.
      const margin = Math.min(TILE_MARGIN, budget / 16);
      let lo = 1;
      let hi = Math.max(1, Math.min(Math.floor(TILE_MAX_BYTES / rowBytes / TILE_ALIGN), Math.ceil(n / TILE_ALIGN)));
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (engineBytes(n, d, m, dtype, sms, mid * TILE_ALIGN) + margin <= budget) lo = mid;
        else hi = mid - 1;
      }
      rows = lo * TILE_ALIGN;
    }
    this.tileRows = Math.min(rows, Math.ceil(n / TILE_ALIGN) * TILE_ALIGN);
    this.tiles = Math.ceil(n / this.tileRows);
    this.rGrid = reduceGrid(Math.min(this.tileRows, n), sms);
    const how = `streaming the vectors from host memory in ${this.tiles} tiles of ${this.tileRows} rows`;
    if (o.tileRows !== undefined) log().debug(`${ctx.where}: ${how} (tileRows option)`);
    else {
      log().warn(
        `${n}×${d} ${dtype} vectors with ${m} anchors need ${fmtBytes(resident)} of GPU memory on ${ctx.where}, ${room}: ` +
          `${how}, which is slower (each pass and each k-means++ step copies the ${fmtBytes(n * rowBytes)} of vectors to the GPU again)`,
      );
    }
  }

  /** memset through a host buffer (only at open: never in the loop). */
  private fill(buf: DeviceBuffer, byte: number): void {
    this.ctx.upload(buf, new Uint8Array(buf.bytes).fill(byte));
  }

  /** Copy rows [p0, p0 + rows) of the host's vectors to the start of X, in chunks so that Ctrl-C is seen. */
  private async uploadRows(p0: number, rows: number): Promise<void> {
    const src = this.data.data;
    const rowBytes = this.d * (this.data.dtype === 'f16' ? 2 : 4);
    const bytes = new Uint8Array(src.buffer, src.byteOffset + p0 * rowBytes, rows * rowBytes);
    for (let off = 0; off < bytes.length; off += UPLOAD_CHUNK) {
      this.ctx.upload(this.X, bytes.subarray(off, Math.min(bytes.length, off + UPLOAD_CHUNK)), off);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (off + UPLOAD_CHUNK < bytes.length) await yieldImmediate();
    }
  }

  /**
   * Tile t of the vectors, ready on the device. Resident: all of them, already there (t = 0).
   * Tiled: first wait until the kernels queued for tile t − 1 are done with the buffer (the
   * wait also sees Ctrl-C), then upload the tile's rows.
   */
  private async stage(t: number): Promise<Span> {
    if (!this.tileRows) return { p0: 0, rows: this.n, x: this.X.ptr };
    if (t > 0) await this.sync();
    const p0 = t * this.tileRows;
    const rows = Math.min(this.tileRows, this.n - p0);
    await this.uploadRows(p0, rows);
    return { p0, rows, x: this.X.ptr };
  }

  /** Kernel argument: a per-point array (4-byte elements) from the span's first row on. */
  private at(buf: DeviceBuffer, s: Span): ArrayBufferView {
    return ptr(buf.ptr + BigInt(s.p0 * 4));
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
    for (let t = 0; t < this.tiles; t++) {
      const s = await this.stage(t);
      // A tile starts on a seeding block boundary: its blocks' partials go to their places.
      this.ctx.launch('seed', `seed_dist${this.sfx}`, Math.ceil(s.rows / SEED_POINTS), SEED_THREADS, [
        ptr(s.x), i32(s.rows), i32(this.d), ptr(this.cand.ptr), this.at(this.seedD, s), i32(mode),
        ptr(this.seedPartial.ptr + BigInt((s.p0 / SEED_POINTS) * 8)),
      ]);
    }
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
    for (let t = 0; t < this.tiles; t++) {
      const s = await this.stage(t);
      this.ctx.launch('seed', `seed_try${this.sfx}`, Math.ceil(s.rows / SEED_POINTS), SEED_THREADS, [
        ptr(s.x), i32(s.rows), i32(this.d), ptr(this.cand.ptr), i32(L), this.at(this.seedD, s),
        ptr(this.seedPartialTry.ptr + BigInt((s.p0 / SEED_POINTS) * L * 8)),
      ]);
    }
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

  // --- maintenance: each anchor's nearest other anchor (types.ts nearestOther) ---

  /** Points per block of assign_top2_f32_p4 (tile.cuh with 4 points per thread). */
  private static readonly NN_POINTS = 64;
  /** The anchors' own top-2 (m-sized), allocated at the first call. */
  private nn?: { J1: DeviceBuffer; D1: DeviceBuffer; J2: DeviceBuffer; D2: DeviceBuffer };

  /**
   * The anchors on the device assigned against themselves by the direct assign kernel (X = C): the
   * passes' f32 distances and lowest-index ties, m²·d work on the GPU instead of the host's single
   * thread, then one sync and four m-sized downloads. Always the f32 p4 build: the anchors are f32
   * whatever the data, and m "points" fill few blocks, so the smaller blocks keep more SMs busy.
   */
  async nearestOther(): Promise<NearestAnchors> {
    this.live();
    const { ctx, m, d } = this;
    const out = noNearestAnchors(m);
    if (m < 2) return out;
    this.nn ??= {
      J1: this.alloc('anchor nearest', m * 4),
      D1: this.alloc('anchor nearest distance', m * 4),
      J2: this.alloc('anchor runner-up', m * 4),
      D2: this.alloc('anchor runner-up distance', m * 4),
    };
    const { J1, D1, J2, D2 } = this.nn;
    ctx.launch('assign', 'assign_top2_f32_p4', Math.ceil(m / CudaEngine.NN_POINTS), THREADS, [
      ptr(this.C.ptr), ptr(this.C.ptr), i32(m), i32(d), i32(m), ptr(J1.ptr), ptr(D1.ptr), ptr(J2.ptr), ptr(D2.ptr),
    ]);
    await this.sync();
    const j1 = new Int32Array(m), d1 = new Float32Array(m), j2 = new Int32Array(m), d2 = new Float32Array(m);
    ctx.download(j1, J1);
    ctx.download(d1, D1);
    ctx.download(j2, J2);
    ctx.download(d2, D2);
    nearestOtherFromTop2(out, 0, m, { j1, d1, j2, d2 });
    return out;
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

  /**
   * One assign → reduce → (update) pass, all on the stream; two scalars come back. Tiled, the
   * assign and the reduce run once per tile (stage() waits for each tile before uploading the
   * next), each tile's reduce writing its own slice of the partials, which pass_end then sums in
   * one fixed order; the screen's fallback list holds one tile's points, so it is counted and
   * emptied between tiles.
   */
  private async pass(temperature: number, step: number, huber: number): Promise<IterStats> {
    this.live();
    const { ctx, d, m } = this;
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
    const ccMax = this.screenScalars.ptr;
    const count = this.screenScalars.ptr + 4n;
    // Once per pass: the anchors' norms (it also empties the fallback list).
    if (screened) ctx.launch('screen', 'anchor_norms', 1, 1024, [ptr(this.C.ptr), i32(m), i32(d), ptr(this.cc.ptr), ptr(ccMax), ptr(count)]);
    let assignMs = 0;
    let tileFallbacks = 0;
    for (let t = 0; t < this.tiles; t++) {
      const s = await this.stage(t);
      if (t > 0) {
        // Tile t − 1 is done (stage() waited for it): its assign time and its fallbacks.
        assignMs += ctx.elapsedMs(this.ev.a0, this.ev.a1);
        if (screened) tileFallbacks += this.takeFallbacks();
        ctx.record(this.ev.a0);
      }
      const n = s.rows;
      const top2 = [this.at(this.J1, s), this.at(this.D1, s), this.at(this.J2, s), this.at(this.D2, s)];
      if (screened) {
        ctx.launch(this.screenModule, this.screenFn, Math.ceil(n / this.screenPoints), THREADS, [
          ptr(s.x), ptr(this.C.ptr), this.at(this.xx, s), ptr(this.cc.ptr), i32(n), i32(d), i32(m),
          this.at(this.J1, s), this.at(this.J2, s), this.at(this.J3, s), this.at(this.D1, s), this.at(this.D2, s),
        ]);
        ctx.launch('screen', `screen_exact${this.sfx}`, this.rGrid * 2, THREADS, [
          ptr(s.x), ptr(this.C.ptr), this.at(this.xx, s), ptr(ccMax), f32(this.screenBcoef), i32(n), i32(d), ...top2, this.at(this.J3, s),
          ptr(this.fallbackList.ptr), ptr(count),
        ]);
        const listP4 = process.env.VLC_CUDA_LIST !== 'p8'; // p4: twice the blocks for the short list (assign.cu)
        ctx.launch('assign', `assign_list${this.sfx}${listP4 ? '_p4' : ''}`, Math.ceil(n / (listP4 ? 64 : ASSIGN_POINTS)), THREADS, [
          ptr(s.x), ptr(this.C.ptr), i32(n), i32(d), i32(m), ...top2, ptr(this.fallbackList.ptr), ptr(count),
        ]);
      } else {
        ctx.launch('assign', this.assignFn, Math.ceil(n / this.tilePoints), THREADS, [
          ptr(s.x), ptr(this.C.ptr), i32(n), i32(d), i32(m), ...top2,
        ]);
      }
      ctx.record(this.ev.a1);
      ctx.launch('reduce', `reduce_points${this.sfx}`, this.rGrid, THREADS, [
        ptr(s.x), i32(n), i32(d),
        ...top2,
        this.at(this.assign, s), ptr(this.H.ptr),
        f64(Math.max(0, temperature)), i32(accumulate), f64(sScale), f64(wScale),
        ptr(this.S.ptr), ptr(this.W.ptr), ptr(this.count.ptr), ptr(this.sse.ptr), ptr(this.far.ptr),
        ptr(this.partial.ptr + BigInt(t * this.rGrid * 16)), i32(s.p0),
      ]);
    }
    // Resident, pass_end reads the fallback count; tiled, the host counts it tile by tile.
    ctx.launch('reduce', 'pass_end', 1, THREADS, [
      ptr(this.partial.ptr), i32(this.tiles * this.rGrid), ptr(screened && !this.tileRows ? count : 0n), ptr(this.result.ptr),
    ]);
    if (step > 0) {
      ctx.launch('update', 'update_anchors', Math.ceil((m * d) / THREADS), THREADS, [
        ptr(this.C.ptr), ptr(this.S.ptr), ptr(this.W.ptr), i32(m), i32(d), f64(step), f64(sScale), f64(wScale),
      ]);
    }
    ctx.record(this.ev.end);
    await ctx.wait(this.ev.end, this.lastTimes.passMs / this.tiles);
    const res = new Float64Array(3);
    ctx.download(res, this.result);
    this.hasPrev = true;
    const ms = ctx.elapsedMs(this.ev.start, this.ev.end);
    this.lastTimes = { passMs: ms, assignMs: assignMs + ctx.elapsedMs(this.ev.a0, this.ev.a1) };
    const p = this.profile;
    p.passes++;
    p.passGpuMs += ms;
    p.passWallMs += performance.now() - tStart;
    if (screened) {
      const fallbacks = this.tileRows ? tileFallbacks + this.takeFallbacks() : res[2];
      p.screenPasses++;
      p.screenFallbacks += fallbacks;
      // Data the screen cannot decide (far from the origin, e.g. test-cuda's): stop screening.
      if (fallbacks > 0.25 * this.n) this.screen = false;
    }
    return { energy: res[0] / this.n, changed: Math.round(res[1]), ms };
  }

  /** Tiled screen: the fallback list's length for the tile just done, then 0 for the next tile. */
  private takeFallbacks(): number {
    const c = new Uint32Array(1);
    this.ctx.download(c, this.screenScalars, 4);
    this.ctx.upload(this.screenScalars, new Uint32Array(1), 4);
    return c[0];
  }

  /**
   * Tests only: fill every per-pass output (top-2 arrays, sums, farthest, partials) with 0xff
   * bytes — NaN distances, out-of-range indices — so a kernel that skips an element is caught.
   */
  poisonForTests(): void {
    for (const b of [this.J1, this.D1, this.J2, this.D2, this.S, this.W, this.far, this.partial, this.result, this.seedD, this.seedPartial, this.cc, this.screenScalars, this.fallbackList, ...Object.values(this.nn ?? {})]) {
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

/** VLC_CUDA_MAX_BYTES: the most GPU memory to use, in bytes, optionally with K, M, G or T (binary: 6G). */
function maxBytesFromEnv(): number | undefined {
  const v = process.env.VLC_CUDA_MAX_BYTES;
  if (v === undefined || v.trim() === '') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(v);
  if (!m) throw new UsageError(`VLC_CUDA_MAX_BYTES=${v}: expected a number of bytes, optionally with K, M, G or T (e.g. 6G)`);
  return Math.floor(Number(m[1]) * 1024 ** (m[2] ? 'KMGT'.indexOf(m[2].toUpperCase()) + 1 : 0));
}
