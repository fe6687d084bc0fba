// The Engine of src/backend/engine.ts on one GPU. Everything n-sized stays on the device: the
// vectors (f16 stays f16), the top-2 of each point, the assignments and the k-means++ distances.
// Per iterate() the host receives three scalars (energy, changed, screen fallbacks); stats()
// downloads the m-sized statistics for maintenance. All buffers are allocated once, at open.
//
// The parts, each in its file: plan.ts decides whether the vectors stay resident or stream in
// tiles (spans.ts runs every loop over the data span by span), buffers.ts holds the device
// memory, seeding.ts the k-means++ calls, pass.ts the iteration (fused, or in the two steps a
// sharded engine needs), nearest.ts maintenance's nearest other anchor; numerics.ts and
// ../fixed.ts the numbers the kernels are given; kernels.ts the kernels' interface; host-rows.ts
// the rows on the host (a dataset's, or a sample's read in place through its list).
import { UsageError } from '../../errors.js';
import { log } from '../../log.js';
import { hugePageBytes, largeBuffer } from '../../vectors/huge-pages.js';
import { maxAbsOf } from '../fixed.js';
import type { AnchorStats, Engine, GlobalFigures, IterParams, IterStats, NearestAnchors, Partials } from '../types.js';
import type { CudaContext } from './context.js';
import type { EngineBuffers } from './buffers.js';
import { EngineCore, KernelTimer } from './core.js';
import type { HostRows } from './host-rows.js';
import { KERNELS } from './kernels.js';
import { DeviceNearest } from './nearest.js';
import type { CudaOptions } from './options.js';
import { DevicePass, type EngineProfile, type PassTimes } from './pass.js';
import { planMemory, type MemoryPlan } from './plan.js';
import { screens } from './screen.js';
import { memInfo, type DeviceBuffer } from './pool.js';
import { lockMilliseconds } from './pin.js';
import { DeviceSeeding } from './seeding.js';
import { VectorSpans } from './spans.js';

export type { EngineProfile, PassTimes };

const FINAL: IterParams = { temperature: 0, step: 0, huber: 0 };

/** Rows of another engine of the same context, resident on the device: its vectors and which rows. */
interface DeviceRows {
  x: DeviceBuffer;
  list: Int32Array;
}

export class CudaEngine implements Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;
  private readonly core: EngineCore;
  private pass!: DevicePass;
  private seeding!: DeviceSeeding;
  private readonly nearest: DeviceNearest;
  private localMaxAbs = 0;
  private disposed = false;
  private options!: CudaOptions;

  private constructor(private readonly ctx: CudaContext, rows: HostRows, m: number) {
    this.n = rows.n;
    this.d = rows.d;
    this.m = m;
    this.core = new EngineCore(ctx, rows, m);
    this.nearest = new DeviceNearest(this.core);
  }

  /**
   * An engine over `rows`: allocate every buffer, upload the vectors once, measure their range.
   * Listed rows (a sample) are read in place when the vectors stay resident; a streamed engine
   * copies its tiles from contiguous host memory, so it gets a host copy of them. Frees all on failure.
   */
  static async create(ctx: CudaContext, rows: HostRows, m: number, o: CudaOptions, from?: DeviceRows): Promise<CudaEngine> {
    ctx.makeCurrent();
    const [free, total] = memInfo(ctx.drv);
    const { n, d, dtype } = rows;
    const plan = planMemory({
      n, d, m, dtype, smCount: ctx.info.multiprocessors, free, total,
      maxDeviceBytes: o.maxDeviceBytes, tileRows: o.tileRows, where: ctx.where, screened: screens(n, d, m, o),
    });
    if (plan.tiledBecause === 'memory') log().warn(plan.note!);
    else if (plan.tiledBecause === 'option') log().debug(plan.note!);
    const e = new CudaEngine(ctx, plan.tileRows ? rows.contiguous() : rows, m);
    e.options = o;
    try {
      await e.init(o, plan, plan.tileRows ? undefined : from);
      return e;
    } catch (err) {
      await e.dispose().catch(() => undefined);
      throw err;
    }
  }

  private async init(o: CudaOptions, plan: MemoryPlan, from: DeviceRows | undefined): Promise<void> {
    const { n, d, m, ctx, core } = this;
    const rows = plan.tileRows ? Math.min(plan.tileRows, n) : n;
    // Its rounds screen where the passes do (pass.ts screenCandidates), once the pass exists.
    this.seeding = new DeviceSeeding(core, (C, L, after) => this.pass.screenCandidates(C, L, after));
    core.bufs.allocate({
      n, d, m, dtype: core.dtype, rows, tiled: plan.tileRows > 0,
      reduceBlocks: plan.tiles * plan.reduceGrid, seedBlocks: this.seeding.blocks, sortedReduce: o.reduce === 'sorted',
    });
    core.spans = new VectorSpans(ctx, core.rows, core.bufs.X, core.bufs.X2, plan.tileRows, o.stagingBytes);
    this.pass = new DevicePass(core, o, plan.reduceGrid, rows);
    const t0 = performance.now(), locking0 = lockMilliseconds();
    if (from) await this.gather(from);
    else await core.spans.uploadResident();
    const t1 = performance.now(), locking = lockMilliseconds() - locking0;
    // "No assignment yet": every point counts as changed in the first pass; no previous stats.
    const b = core.bufs;
    b.fill(b.assign, 0xff);
    b.fill(b.count, 0);
    b.fill(b.sse, 0);

    // The largest |x| sets the fixed-point scales (fixed.ts) and the screen's scale (screen.ts).
    const maxBits = new Uint32Array(1);
    ctx.upload(b.result, maxBits);
    const threads = KERNELS.max_abs.threads;
    await core.spans.forEachSpan((s) => {
      const blocks = Math.max(1, Math.min(Math.ceil((s.rows * d) / threads), ctx.info.multiprocessors * 16));
      core.run('max_abs', blocks, { X: s.x, count: s.rows * d, out: b.result.ptr });
    });
    await core.sync();
    ctx.download(maxBits, b.result);
    this.localMaxAbs = new Float32Array(maxBits.buffer)[0];
    // -v: where an engine's opening goes (several GPUs open theirs from one host thread).
    const bytes = plan.tileRows ? 0 : n * core.rows.rowBytes;
    if (log().isLevelEnabled('debug')) {
      const checked = performance.now() - t1; // before smaps is read for the line
      const huge = locking > 0 ? hugePageBytes(core.rows.ds.buffer) : undefined;
      const pages = huge === undefined ? '' : `, ${((100 * huge) / core.rows.ds.buffer.byteLength).toFixed(0)} % of them on 2 MiB pages`;
      log().debug(`${ctx.where}: engine over ${n} rows: ${from ? 'gathered on the device' : plan.tileRows ? 'streamed in tiles' : `${(bytes / 2 ** 30).toFixed(2)} GiB uploaded`} in ${(t1 - t0).toFixed(0)} ms${locking > 0 ? ` (${locking.toFixed(0)} ms of it page-locking the host's pages${pages})` : ''}, checked in ${checked.toFixed(0)} ms`);
    }
    if (!Number.isFinite(this.localMaxAbs)) {
      throw new UsageError('the vectors contain NaN or infinite values; fix the data or pass --drop-invalid to skip such rows');
    }
    this.setGlobal({ n, maxAbs: this.localMaxAbs, rowOffset: 0 });
  }

  get maxAbs(): number {
    return this.localMaxAbs;
  }

  setGlobal(g: GlobalFigures): void {
    this.core.global = { ...g };
    this.pass.refreshScales();
  }

  /** Tiles of the vectors (rows per tile, count), null when they are all resident. Tests read it. */
  get tiling(): { rows: number; tiles: number } | null {
    const s = this.core.spans;
    return s.tileRows ? { rows: s.tileRows, tiles: s.tiles } : null;
  }

  /** Whether the next pass screens (tests and bench read it). */
  get screening(): boolean {
    return this.pass.screen;
  }

  /** The screen kernel the passes run ('screen_h', 'screen_h90mo_k2', ...), or 'direct'. */
  get screenKernel(): string {
    return this.pass.screenKernel;
  }

  get profile(): EngineProfile {
    return { ...this.pass.profile, seedCalls: this.seeding.calls, seedWallMs: this.seeding.wallMs };
  }

  /** Time every kernel launch from now on (on) or stop (off): measurements only, it adds events to the stream. */
  timeKernels(on: boolean): void {
    this.core.timer = on ? (this.core.timer ?? new KernelTimer(this.ctx)) : undefined;
  }

  /** GPU ms and launches per kernel since timeKernels(true) (waits for the stream). */
  async kernelTimes(): Promise<Record<string, { ms: number; launches: number }>> {
    const t = this.core.timer;
    if (!t) return {};
    await this.core.sync();
    t.collect();
    return Object.fromEntries(t.totals);
  }

  get lastTimes(): PassTimes {
    return this.pass.lastTimes;
  }

  private live(): void {
    if (this.disposed) throw new Error('CUDA engine used after dispose()');
    this.ctx.makeCurrent();
  }

  // --- k-means++ seeding (seeding.ts) ---

  seedBegin(c: Float32Array): Promise<number> {
    this.live();
    return this.seeding.pass(c, 0);
  }

  seedAdd(c: Float32Array): Promise<number> {
    this.live();
    return this.seeding.pass(c, 1);
  }

  seedTry(cands: Float32Array): Promise<Float64Array> {
    this.live();
    return this.seeding.tryCandidates(cands);
  }

  seedPick(target: number): Promise<number> {
    this.live();
    return this.seeding.pick(target);
  }

  seedAddMany(cands: Float32Array): Promise<number> {
    this.live();
    return this.seeding.addMany(cands);
  }

  seedPickMany(targets: Float64Array): Promise<Int32Array> {
    this.live();
    return this.seeding.pickMany(targets);
  }

  get seedUnit(): number {
    return 1 / this.seeding.scale;
  }

  /** Served from the host's rows (identical to the device's): no transfer. */
  async row(i: number): Promise<Float32Array> {
    this.live();
    if (!(i >= 0 && i < this.n)) throw new Error(`row ${i} out of range 0..${this.n - 1}`);
    return this.core.rows.row(i);
  }

  /** Served from the host's rows, as row() is. */
  async rows(list: ArrayLike<number>, out?: Float32Array): Promise<Float32Array> {
    this.live();
    return this.core.rows.listed(list, out);
  }

  /** A second engine on the same GPU over the listed rows (read in place from the host's rows: host-rows.ts). */
  /** Resident vectors: the subset's are gathered from them on the device (no host gather, no upload). */
  async subset(rows: Int32Array): Promise<Engine> {
    this.live();
    const from = this.core.spans.tileRows ? undefined : { x: this.core.bufs.X, list: rows };
    return CudaEngine.create(this.ctx, this.core.rows.subset(rows), this.m, this.options, from);
  }

  /** This engine's rows copied from another engine's resident vectors (its rows `from.list`). */
  private async gather(from: DeviceRows): Promise<void> {
    const { ctx, core, n, d } = this;
    const list = ctx.pool.alloc('sample row list', Math.max(4, n * 4));
    try {
      ctx.upload(list, from.list);
      const blocks = Math.max(1, Math.min(Math.ceil((n * d) / KERNELS.gather_rows.threads), ctx.info.multiprocessors * 16));
      core.run('gather_rows', blocks, { src: from.x.ptr, list: list.ptr, count: n, d, dst: core.bufs.X.ptr });
      await core.sync();
    } finally {
      ctx.pool.free(list);
    }
  }

  /** Each anchor's nearest other anchor, on the device (nearest.ts). */
  nearestOther(): Promise<NearestAnchors> {
    this.live();
    return this.nearest.find();
  }

  // --- the loop (pass.ts) ---

  async setAnchors(anchors: Float32Array): Promise<void> {
    this.live();
    if (anchors.length !== this.m * this.d) throw new Error(`setAnchors: expected ${this.m}×${this.d} values, got ${anchors.length}`);
    const abs = maxAbsOf(anchors);
    if (!Number.isFinite(abs)) throw new Error('setAnchors: the anchors contain NaN or infinite values');
    this.pass.refreshScales(abs);
    this.ctx.upload(this.core.bufs.C, anchors);
  }

  async getAnchors(): Promise<Float32Array> {
    this.live();
    const out = new Float32Array(this.m * this.d);
    this.ctx.download(out, this.core.bufs.C);
    return out;
  }

  iterate(p: IterParams): Promise<IterStats> {
    this.live();
    return this.pass.iterate(p);
  }

  finalize(): Promise<IterStats> {
    return this.iterate(FINAL);
  }

  accumulate(p: IterParams): Promise<Partials> {
    this.live();
    return this.pass.accumulate(p);
  }

  applyUpdate(total: Partials, p: IterParams): Promise<IterStats> {
    this.live();
    return this.pass.applyUpdate(total, p);
  }

  stats(): Promise<AnchorStats> {
    this.live();
    return this.pass.stats();
  }

  // --- several GPUs of one process combine on the devices (peer.ts) ---

  /** The context and the buffers of a pass's sums. */
  get sums(): { ctx: CudaContext; bufs: Pick<EngineBuffers, 'S' | 'W' | 'sse' | 'far' | 'count'> } {
    return { ctx: this.ctx, bufs: this.core.bufs };
  }

  passOnDevice(p: IterParams): Promise<number> {
    this.live();
    return this.pass.passOnDevice(p);
  }

  updateCombined(p: IterParams, energy: boolean): number {
    this.live();
    return this.pass.updateCombined(p, energy);
  }

  async assignments(): Promise<Uint32Array> {
    this.live();
    // 100M ids are 400 MB: on 2 MiB pages they fault in 200 times, not 100,000 times, during the copy.
    const out = new Uint32Array(largeBuffer(this.n * 4));
    this.ctx.download(out, this.core.bufs.assign);
    return out;
  }

  /**
   * Tests only: fill every per-pass output (top-2 arrays, sums, farthest, partials) with 0xff
   * bytes — NaN distances, out-of-range indices — so a kernel that skips an element is caught.
   */
  poisonForTests(): void {
    for (const b of [...this.core.bufs.outputs(), ...this.pass.outputs(), ...this.nearest.buffers()]) this.core.bufs.fill(b, 0xff);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.ctx.makeCurrent();
    // Freeing device memory waits for the work in flight (the next tile's upload included).
    const first = this.core.bufs.freeAll();
    this.core.spans?.dispose();
    this.core.destroyEvents();
    if (first) throw first;
  }
}
