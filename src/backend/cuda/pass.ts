// One pass on the device: pass_begin → (the screen's assign: screen.ts) or assign_top2 → the
// reduce (the sorted one's four kernels, or reduce_points), per span of the vectors → pass_end,
// all queued on the stream. Then either the fused step of a single engine (update_anchors queued
// too, one wait, 24 bytes back: the hot path), or the two steps of a shard: accumulate (wait,
// download the partial sums) and applyUpdate (upload the combined sums, update_anchors). Every
// sum is fixed point (reduce.cu).
import { passRuns } from './pin.js';
import { doublesFromInt64, int64FromDoubles, sumInt64, unpackFar, type PassScales } from '../fixed.js';
import { partialLayout, type AnchorStats, type IterParams, type IterStats, type Partials } from '../types.js';
import type { EngineCore } from './core.js';
import { KERNELS } from './kernels.js';
import { gpuPassScales } from './numerics.js';
import type { CudaOptions } from './options.js';
import { DeviceScreen, screens, type AnchorSet, type Top2 } from './screen.js';
import type { DeviceBuffer } from './pool.js';
import type { Span } from './spans.js';
import { CudaError } from './check.js';
import { CU } from './status.js';
import { log } from '../../log.js';

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

const THREADS = KERNELS.update_anchors.threads; // the elementwise per-anchor kernels
/**
 * Screening stops for the rest of a run once more than this share of the points took the direct
 * pass (data far from the origin, around their mean too: test-cuda's); below it the screen plus the
 * fallback still costs less than the direct pass alone.
 */
const SCREEN_GIVE_UP = 0.5;

export class DevicePass {
  /** Whether the next pass screens (tests and bench read it). */
  screen: boolean;
  profile: EngineProfile = { passes: 0, passGpuMs: 0, passWallMs: 0, seedCalls: 0, seedWallMs: 0, screenPasses: 0, screenFallbacks: 0 };
  lastTimes: PassTimes = { passMs: 0, assignMs: 0 };
  /**
   * The screen's buffers and kernels (when screening can be on: m >= 3 and the option allows),
   * made at the first pass that screens, not when the engine opens: they hold a padded fp16 copy
   * of the rows, and an engine over every row opened first only waits while a sample's engine
   * trains beside it (api/train.ts). Made at open, they left a 100M-row sample no room on an
   * 80 GB GPU: it streamed from host memory (bench/results/2026-11-28-h100x4-r3i.json).
   */
  private made: DeviceScreen | undefined;
  /** The fixed-point scales of the next pass, and of the last one (its sse is on the device). */
  private scales: PassScales = { s: 1, w: 1, e: 1 };
  private last: PassScales = { s: 1, w: 1, e: 1 };
  private anchorAbs = 0;
  private hasPrev = false;
  /** accumulate's host arrays, made on its first call (a shard's partial sums: Engine.accumulate). */
  private partials: { sums: BigInt64Array; far: BigInt64Array } | undefined;

  constructor(private readonly e: EngineCore, private readonly o: CudaOptions, private readonly rGrid: number, private readonly rows: number) {
    this.screen = screens(e.n, e.d, e.m, o);
  }

  /** The screen, made on first use; none (and no more screening) when its buffers no longer fit. */
  private get screener(): DeviceScreen | undefined {
    if (!this.screen || this.made) return this.made;
    try {
      this.made = new DeviceScreen(this.e, this.o, this.rows);
    } catch (err) {
      if (!(err instanceof CudaError && err.status === CU.OUT_OF_MEMORY)) throw err;
      this.screen = false; // the direct pass needs no more memory: the same assignments, slower
      log().warn(`${this.e.ctx.where}: no room left for the screened assign's buffers (${err.message}); assigning without the screen, which is slower`);
    }
    return this.made;
  }

  /**
   * k-means++'s rounds (seeding.ts addMany): every row's exact nearest of the L candidates in `C`
   * through the screen, the distance in D1 (the top-2 buffers are scratch between passes);
   * `after(span, d1)` queues what follows on each span. False, doing nothing, where the passes do
   * not screen, L is more than the screen's buffers hold (m), or too few to repay it: seed_many then.
   */
  async screenCandidates(C: DeviceBuffer, L: number, after: (s: Span, d1: bigint) => void): Promise<boolean> {
    const { e } = this;
    if (!this.screen || L > e.m || !screens(e.n, e.d, L, this.o)) return false;
    const screen = this.screener;
    if (!screen) return false;
    this.beginScreen(screen, screen.anchorSet(C, L));
    await e.spans.forEachSpan((s) => {
      const top2 = this.top2At(s);
      screen.span(s, e.spans.tileRows > 0, top2);
      after(s, top2.d1);
    });
    return true;
  }

  /** The screen's begin over this engine's rows (resident: one span of them all), against `set` (default: the anchors). */
  private beginScreen(screen: DeviceScreen, set?: AnchorSet): void {
    const { e } = this;
    screen.begin(e.global.maxAbs, e.spans.tileRows > 0 ? undefined : { p0: 0, rows: e.n, x: e.bufs.X.ptr }, set);
  }

  /** Where span s's top-2 go: the engine's J1, D1, J2, D2 at its rows. */
  private top2At(s: Span): Top2 {
    const { spans, bufs: b } = this.e;
    return { j1: spans.at(b.J1, s), d1: spans.at(b.D1, s), j2: spans.at(b.J2, s), d2: spans.at(b.D2, s) };
  }

  /** Which screen kernel the passes use (bench and tests read it), or 'direct'. */
  get screenKernel(): string {
    return this.screen && this.screener ? this.screener.kernel : 'direct';
  }

  /** Buffers a pass writes besides the engine's own (tests poison them). */
  outputs() {
    return this.screener?.outputs() ?? [];
  }

  /** The scales follow the whole data's figures and the anchors' range (fixed.ts passScales). */
  refreshScales(anchorAbs = this.anchorAbs): void {
    this.anchorAbs = anchorAbs;
    this.scales = gpuPassScales(this.e.global.n, this.e.d, this.e.global.maxAbs, anchorAbs);
  }

  /** Queue a pass up to pass_end; returns what the host must add up tile by tile. */
  private async queue(p: IterParams): Promise<{ assignMs: number; tileFallbacks: number }> {
    const { e, rGrid } = this;
    const { ctx, bufs: b, d, m, spans } = e;
    const prevE = this.last.e; // the scale of the sse on the device, which the Huber thresholds read
    const sc = (this.last = this.scales);
    ctx.record(e.ev.start);
    e.run('pass_begin', Math.ceil(Math.max(m * d, m) / THREADS), {
      m, d, huber: p.huber, hasPrev: this.hasPrev ? 1 : 0, eScale: prevE,
      count: b.count.ptr, sse: b.sse.ptr, far: b.far.ptr, W: b.W.ptr, S: b.S.ptr, H: b.H.ptr,
    });
    ctx.record(e.ev.a0);
    const screened = this.screen && this.screener !== undefined;
    const tiled = spans.tileRows > 0;
    if (screened) this.beginScreen(this.screener!);
    let assignMs = 0;
    let tileFallbacks = 0;
    await spans.forEachSpan((s, t) => {
      if (t > 0) {
        // Tile t − 1 is done (forEachSpan waited for it): its assign time and its fallbacks.
        assignMs += ctx.elapsedMs(e.ev.a0, e.ev.a1);
        if (screened) tileFallbacks += this.takeFallbacks();
        ctx.record(e.ev.a0);
      }
      const n = s.rows;
      const top2 = this.top2At(s);
      if (screened) this.screener!.span(s, tiled, top2);
      else e.run('assign_top2', Math.ceil(n / KERNELS.assign_top2.points.value), { X: s.x, C: b.C.ptr, n, d, m, ...top2 });
      ctx.record(e.ev.a1);
      this.reduce(s.x, n, top2, spans.at(b.assign, s), p, sc, b.partial.ptr + BigInt(t * rGrid * 16), e.global.rowOffset + s.p0);
    });
    // Resident, pass_end reads the fallback count; tiled, the host counts it tile by tile.
    e.run('pass_end', 1, {
      partial: b.partial.ptr, blocks: spans.tiles * rGrid, fallback: screened && !tiled ? this.screener!.fallbackCount : 0n, out: b.result.ptr,
    });
    return { assignMs, tileFallbacks };
  }

  /**
   * The statistics of one span's points from their top-2 (reduce.cu): sorted, four kernels that sum
   * each anchor's contributions in registers (a pass that does not accumulate only tallies); atomic,
   * reduce_points alone. The same bits.
   */
  private reduce(x: bigint, n: number, top2: Top2, assign: bigint, p: IterParams, sc: PassScales, partial: bigint, first: number): void {
    const { e, rGrid } = this;
    const { bufs: b, d, m } = e;
    const temperature = Math.max(0, p.temperature);
    const accumulate = p.step > 0 ? 1 : 0;
    const J = { J1: top2.j1, D1: top2.d1, J2: top2.j2, D2: top2.d2 };
    const perAnchor = { count: b.count.ptr, sse: b.sse.ptr, far: b.far.ptr, W: b.W.ptr };
    const L = b.lists;
    if (!L) {
      e.run('reduce_points', rGrid, {
        X: x, n, d, ...J, assign, H: b.H.ptr, temperature, accumulate, sScale: sc.s, wScale: sc.w, eScale: sc.e,
        S: b.S.ptr, ...perAnchor, partial, first,
      });
      return;
    }
    e.run('reduce_tally', rGrid, {
      n, ...J, assign, H: b.H.ptr, temperature, accumulate, eScale: sc.e, count: b.count.ptr, sse: b.sse.ptr, far: b.far.ptr,
      fill: L.fill.ptr, rank: L.rank.ptr, partial, first,
    });
    if (!accumulate) return;
    e.run('reduce_offsets', 1, { fill: L.fill.ptr, m, off: L.off.ptr });
    e.run('reduce_scatter', rGrid, { n, ...J, H: b.H.ptr, temperature, rank: L.rank.ptr, off: L.off.ptr, list: L.list.ptr });
    e.run('reduce_sums', rGrid, {
      X: x, d, list: L.list.ptr, off: L.off.ptr, m, sScale: sc.s, wScale: sc.w, eScale: sc.e, S: b.S.ptr, ...perAnchor, first,
    });
  }

  private queueUpdate(step: number): void {
    const { e } = this;
    const { bufs: b, m, d } = e;
    if (step > 0) {
      e.run('update_anchors', Math.ceil((m * d) / THREADS), {
        C: b.C.ptr, S: b.S.ptr, W: b.W.ptr, m, d, step, sScale: this.last.s, wScale: this.last.w,
      });
    }
  }

  /** Wait for the pass, read its three scalars, keep the books. Returns [energy units, changed]. */
  private async finish(q: { assignMs: number; tileFallbacks: number }, tStart: number): Promise<[number, number]> {
    const { ctx, ev, bufs, spans } = this.e;
    ctx.record(ev.end);
    await ctx.wait(ev.end, this.lastTimes.passMs / spans.tiles);
    const res = new BigInt64Array(3);
    ctx.download(res, bufs.result);
    const [energy, changed, fallbackCount] = doublesFromInt64(res);
    this.hasPrev = true;
    const ms = ctx.elapsedMs(ev.start, ev.end);
    this.lastTimes = { passMs: ms, assignMs: q.assignMs + ctx.elapsedMs(ev.a0, ev.a1) };
    const p = this.profile;
    p.passes++;
    p.passGpuMs += ms;
    p.passWallMs += performance.now() - tStart;
    if (this.screen) {
      const fallbacks = spans.tileRows ? q.tileFallbacks + this.takeFallbacks() : fallbackCount;
      p.screenPasses++;
      p.screenFallbacks += fallbacks;
      // Data the screen cannot decide (far from the origin, e.g. test-cuda's): stop screening.
      if (fallbacks > SCREEN_GIVE_UP * this.e.n) this.screen = false;
    }
    return [energy, changed];
  }

  /** The fused pass of a single engine: accumulate and update on the device, two scalars back. */
  async iterate(p: IterParams): Promise<IterStats> {
    passRuns(); // released page locks may go in this pass's waits (pin.ts)
    const tStart = performance.now();
    const q = await this.queue(p);
    this.queueUpdate(p.step);
    const [energy, changed] = await this.finish(q, tStart);
    return { energy: energy / (this.last.e * this.e.global.n), changed, ms: this.lastTimes.passMs };
  }

  /** A shard's pass: the sums over its rows, downloaded, nothing applied. */
  async accumulate(p: IterParams): Promise<Partials> {
    const tStart = performance.now();
    const q = await this.queue(p);
    const [, changed] = await this.finish(q, tStart);
    const { ctx, bufs: b, m, d } = this.e;
    const L = partialLayout(m, d);
    // The same host arrays each pass: fresh ones of m×d int64 cost their page faults every iteration.
    const { sums, far } = (this.partials ??= { sums: new BigInt64Array(L.length), far: new BigInt64Array(m) });
    const count = new Uint32Array(m);
    ctx.download(sums.subarray(L.S, L.S + m * d), b.S);
    ctx.download(sums.subarray(L.W, L.W + m), b.W);
    ctx.download(count, b.count);
    int64FromDoubles(count, sums.subarray(L.count, L.count + m));
    ctx.download(sums.subarray(L.sse, L.sse + m), b.sse);
    sums[L.changed] = BigInt(changed);
    ctx.download(far, b.far);
    return { sums, far };
  }

  /** A shard's pass whose sums stay on the device for peer.ts to combine: its count of changed points. */
  async passOnDevice(p: IterParams): Promise<number> {
    const q = await this.queue(p);
    return (await this.finish(q, performance.now()))[1];
  }

  /**
   * After peer.ts has put the whole group's sums in this engine's buffers: the anchors move, as
   * applyUpdate would move them; the energy (read from the combined sse) when `energy` is set.
   */
  updateCombined(p: IterParams, energy: boolean): number {
    let units = 0;
    if (energy) {
      const sse = new BigInt64Array(this.e.m);
      this.e.ctx.download(sse, this.e.bufs.sse); // the legacy stream's copy waits for the combine
      units = sumInt64(sse);
    }
    this.queueUpdate(p.step);
    return units / (this.last.e * this.e.global.n);
  }

  /** A shard's update: the combined sums become the pass's statistics; the anchors move. */
  async applyUpdate(total: Partials, p: IterParams): Promise<IterStats> {
    const { ctx, bufs: b, m, d } = this.e;
    const L = partialLayout(m, d);
    const { sums } = total;
    ctx.upload(b.S, sums.subarray(L.S, L.S + m * d));
    ctx.upload(b.W, sums.subarray(L.W, L.W + m));
    ctx.upload(b.count, Uint32Array.from(doublesFromInt64(sums.subarray(L.count, L.count + m))));
    ctx.upload(b.sse, sums.subarray(L.sse, L.sse + m));
    ctx.upload(b.far, total.far);
    this.queueUpdate(p.step);
    const energy = sumInt64(sums.subarray(L.sse, L.sse + m));
    return { energy: energy / (this.last.e * this.e.global.n), changed: Number(sums[L.changed]), ms: this.lastTimes.passMs };
  }

  /** Statistics of the last pass (m-sized downloads). */
  async stats(): Promise<AnchorStats> {
    const { ctx, bufs: b, m } = this.e;
    const count = new Uint32Array(m);
    const sse = new BigInt64Array(m);
    const far = new BigInt64Array(m);
    ctx.download(count, b.count);
    ctx.download(sse, b.sse);
    ctx.download(far, b.far);
    const out: AnchorStats = { count: Float64Array.from(count), sse: doublesFromInt64(sse), far: new Int32Array(m), farDist: new Float64Array(m) };
    for (let j = 0; j < m; j++) {
      out.sse[j] /= this.last.e;
      const f = count[j] === 0 ? { index: -1, dist: 0 } : unpackFar(far[j]);
      out.far[j] = f.index;
      out.farDist[j] = f.dist;
    }
    return out;
  }

  /** Tiled screen: the fallback list's length for the tile just done (the next tile's reset zeroes it). */
  private takeFallbacks(): number {
    return this.screener!.tileFallbacks();
  }
}
