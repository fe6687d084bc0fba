// The assign of a pass through the exact fp16 tensor-core screen (cuda/screen_h.cu, and on Hopper
// cuda/screen_h90.cu): one fp16 GEMM ranks the anchors of every point, keeping its 8 smallest keys
// (approximate distance and index); exact_h measures the few candidates that can matter with the
// direct f32 chain of the direct kernels and certifies with the bound of numerics.ts that no other
// anchor can reach the top-2. The points it cannot certify (more than 8 anchors nearly as close as
// the runner-up) are listed with a threshold under which every anchor that can matter lies:
// collect_h runs the GEMM again over them alone, gathering those anchors (up to 64 a point), and
// exact_collect measures them. What is left (more candidates, an anchor outside fp16) takes the
// direct pass, split over anchor slices (fallback_split / fallback_merge; past `cap` listed points,
// assign_list). The outputs are the direct pass's bit for bit: J1, D1, J2, D2 of every point.
//
// The points' fp16 copy is made once at open when the vectors are resident (again only if the
// scale changes), per tile and pass when they stream; the anchors' copy once per pass. μ, the
// centre the copies are taken around, is the mean of a fixed sample of the engine's rows: any μ
// gives the same results (only the count of fallbacks depends on it), and data far from the
// origin screen well around their mean.
import type { EngineCore } from './core.js';
import type { DeviceBuffer } from './pool.js';
import type { Span } from './spans.js';
import { KERNELS } from './kernels.js';
import { halfScale, keyMasks, screenHalfBound, type HalfBound } from './numerics.js';
import type { CudaOptions } from './options.js';

/** Points per block of the screens (SH_P, W9_P), anchors per tile (SH_A, W9_A), dimensions per step. */
const BLOCK_POINTS = KERNELS.screen_h.points.value;
const ANCHOR_TILE = 128;
const DIM_STEP = 64;
/**
 * Keys per point a screen writes, plus the smallest one left out: SH_ROW + 1 of keys.cuh, or
 * SH_ROW_WIDE + 1 for screen_h90 and screen_h90m (8 keys a lane, 16 a row): with tens of anchors
 * per cluster (m20k) 9–16 anchors lie about as close as the runner-up for 16–30 % of the points,
 * which 8 keys cannot certify and 16 nearly always can (bench/kernels/NOTES.md, session 9).
 */
const KEYS = 9;
const KEYS_WIDE = 17;
const keysOf = (k: ScreenKernel): number => (k === 'screen_h90' || k === 'screen_h90m' ? KEYS_WIDE : KEYS);
/** Anchor slices of the fallback: enough blocks for a short list; at most FALLBACK_SLICES. */
const FALLBACK_SLICES = 16;
const SLICE_MIN = 256;
/** Listed points fallback_split takes (more go to assign_list): the list is short when the screen works. */
const CAP_MIN = 65536;
/**
 * Candidates collect_h gathers per listed point, and the share of the rows it can list (the rest of
 * the uncertain points take the slow direct pass). Wide rows get more of both: with tens of anchors
 * per cluster (m20k-768) about 30 % of the points stay uncertain after exact_h, and a list of a
 * quarter of the rows left 5.5 % to the direct pass, which then cost as much as the screen
 * (bench/results/2026-11-23-h100-run4.json); there the list (rows/2 × 258 words) is small beside
 * the vectors. Short rows keep a quarter and 64: the list would rival the vectors' size.
 */
export const collectFor = (d: number): { ncand: number; share: number } => (d >= 256 ? { ncand: 256, share: 2 } : { ncand: 64, share: 4 });
/** Words of the screen's scalars (SH_SCALARS): [2] exact_h's list length, [4] list2's, [5] list2 past cap. */
const SCALARS = 8;
/** Rows of the sample μ is the mean of. */
const MEAN_SAMPLE = 65536;
/** Resident points (screen_h90m) up to this padded dimension (WM_MAX_DP): 128 rows × dp fp16 in shared memory. */
const RESIDENT_MAX_DP = 256;
/** screen_h90mo (the halves' epilogue overlapped) up to this one (WMO_MAX_DP): a tile's stages and the next's fit. */
const OVERLAP_MAX_DP = 192;
/**
 * Keys per lane of screen_h90mo where the pass's choice is 'auto': 2 on short rows with few anchors
 * (the epilogue's integer work is the bottleneck there; the more uncertain points cost less than
 * it saves), else 8. bench/kernels/NOTES.md, session 9.
 */
const FEW_KEYS_MAX_DP = 128;
const FEW_KEYS_MAX_M = 8192;
/** Bytes of one stage's points or anchors (W9_HALF): 128 rows × 64 fp16 dimensions. */
const W9_STAGE_HALF = 128 * 128;
/** Dynamic shared memory of screen_h90 and collect_h90 (W9_SMEM), the others (WM_SMEM(dp)) in screen_h90.cu. */
const sharedOf = (k: ScreenKernel, dp: number): number =>
  k === 'screen_h' ? 0 : k === 'screen_h90' ? 3 * 2 * W9_STAGE_HALF + 1024 : 128 * dp * 2 + (dp <= 192 ? 4 : 3) * W9_STAGE_HALF + 1024;

/** Where a span's top-2 go: the per-point arrays J1, D1, J2, D2 at the span's first row. */
export interface Top2 {
  j1: bigint;
  d1: bigint;
  j2: bigint;
  d2: bigint;
}

type ScreenKernel = 'screen_h' | 'screen_h90' | 'screen_h90m' | 'screen_h90mo' | 'screen_h90mo_k3' | 'screen_h90mo_k2';
const TILED_KERNELS: readonly ScreenKernel[] = ['screen_h90m', 'screen_h90mo', 'screen_h90mo_k3', 'screen_h90mo_k2'];

/** The screen kernel of a pass: Hopper's wgmma kernels where loaded, points resident where dp allows. */
export function screenKernel(dp: number, m: number, o: CudaOptions, hopper: boolean): ScreenKernel {
  if (!hopper) return 'screen_h';
  if (dp > RESIDENT_MAX_DP) return 'screen_h90';
  if (dp > OVERLAP_MAX_DP) return 'screen_h90m';
  const keys = o.screenKeys !== 'auto' ? o.screenKeys : dp <= FEW_KEYS_MAX_DP && m < FEW_KEYS_MAX_M ? 2 : 8;
  return keys === 2 ? 'screen_h90mo_k2' : keys === 3 ? 'screen_h90mo_k3' : 'screen_h90mo';
}

/**
 * Whether an engine's passes screen: m >= 3, and for 'auto' a pass large enough to repay the
 * screen's dozen launches: seed-large (10000 × 128, m 256: n·m·d = 2^28.3) ran 0.35 ms per
 * iteration screened against 0.11 direct, mnemo (2^35.2) 0.75 against 3.4
 * (bench/results/2026-11-23-h100-gpu-screen-h-run2.json, bench/results/2026-11-22-h100-gpu-final.json).
 */
export const SCREEN_MIN_WORK = 2 ** 31;
export function screens(n: number, d: number, m: number, o: CudaOptions): boolean {
  return m >= 3 && (o.screen === 'auto' ? n * m * d >= SCREEN_MIN_WORK : o.screen);
}

/** The screen's geometry for n points of which `rows` are on the device at once, m anchors. */
export function screenShape(d: number, m: number, rows: number) {
  const dp = Math.ceil(d / DIM_STEP) * DIM_STEP;
  const mpad = Math.ceil(m / ANCHOR_TILE) * ANCHOR_TILE;
  const rowsPad = Math.ceil(rows / BLOCK_POINTS) * BLOCK_POINTS;
  const wanted = Math.max(1, Math.min(FALLBACK_SLICES, Math.floor(m / SLICE_MIN)));
  const slice = Math.ceil(Math.ceil(m / wanted) / ANCHOR_TILE) * ANCHOR_TILE;
  const slices = Math.ceil(m / slice); // every slice holds anchors (rounding the width up can leave the last ones empty)
  const cap = Math.min(rows, Math.max(CAP_MIN, Math.ceil(rows / 16)));
  const { ncand, share } = collectFor(d);
  const collectCap = Math.min(rows, Math.max(CAP_MIN, Math.ceil(rows / share)));
  return { dp, mpad, rowsPad, slices, slice, cap, collectCap, ncand };
}

/** Device bytes of the screen's buffers (plan.ts counts them). */
export function screenBytes(d: number, m: number, rows: number): number {
  const g = screenShape(d, m, rows);
  // Keys: the wide rows' count on every GPU. Anchors: fp16 copy, its tiled copy (screen_h90m*), norms.
  return (
    g.rowsPad * (g.dp * 2 + 4) + rows * 4 * (KEYS_WIDE + 2) + g.mpad * (g.dp * 4 + 4) + d * 4 + SCALARS * 4 + g.slices * g.cap * 16 +
    g.collectCap * 4 * (g.ncand + 2)
  );
}

/**
 * The anchors a pass screens against: the engine's own, or k-means++'s candidates of a round
 * (seeding.ts) in a buffer of their own, at most the engine's m of them (the buffers are sized for m).
 */
export interface AnchorSet {
  C: DeviceBuffer;
  m: number;
  mpad: number;
  slice: number;
  slices: number;
  masks: { imask: number; hmask: number };
}

export class DeviceScreen {
  readonly kernel: ScreenKernel;
  /** collect_h, or its wgmma form where the screen runs on Hopper's kernels. */
  private readonly collectKernel: 'collect_h' | 'collect_h90';
  private readonly g: ReturnType<typeof screenShape>;
  private readonly bound: HalfBound;
  /** The engine's anchors, and the set begin() was last given (what span() screens against). */
  private readonly own: AnchorSet;
  private set: AnchorSet;
  private readonly shared: number;
  private readonly bufs: Record<'Xh' | 'xn' | 'keys' | 'list' | 'list2' | 'thr' | 'ccount' | 'cand' | 'Ch' | 'cn' | 'mu' | 'scalars' | 'part', DeviceBuffer>;
  /** screen_h90m's tiled copy of the anchors (tile_anchors), or none. */
  private readonly Ct: DeviceBuffer | undefined;
  /** The scale the resident points were prepared with (0: not yet). */
  private preparedScale = 0;
  private scale = 1;

  constructor(private readonly e: EngineCore, o: CudaOptions, private readonly rows: number) {
    const { d, m, ctx } = e;
    this.g = screenShape(d, m, rows);
    const { dp } = this.g;
    this.kernel = screenKernel(dp, m, o, o.wgmma && ctx.hasModule('screen_h90'));
    this.collectKernel = this.kernel === 'screen_h' ? 'collect_h' : 'collect_h90';
    this.shared = sharedOf(this.kernel, dp);
    this.bound = screenHalfBound(d, dp);
    this.own = this.set = this.anchorSet(e.bufs.C, m);
    const b = e.bufs;
    const { rowsPad, mpad, slices, cap, collectCap } = this.g;
    this.bufs = {
      Xh: b.alloc('screen points (fp16)', rowsPad * dp * 2),
      xn: b.alloc('screen point norms', rowsPad * 4),
      keys: b.alloc('screen keys', rows * 4 * keysOf(this.kernel)),
      list: b.alloc('screen uncertain points', rows * 4),
      list2: b.alloc('screen fallback list', rows * 4),
      thr: b.alloc('screen thresholds', collectCap * 4),
      ccount: b.alloc('screen candidate counts', collectCap * 4),
      cand: b.alloc('screen candidates', collectCap * this.g.ncand * 4),
      Ch: b.alloc('screen anchors (fp16)', mpad * dp * 2),
      cn: b.alloc('screen anchor norms', mpad * 4),
      mu: b.alloc('screen centre', d * 4),
      scalars: b.alloc('screen scalars', SCALARS * 4),
      part: b.alloc('screen fallback partials', slices * cap * 16),
    };
    this.Ct = TILED_KERNELS.includes(this.kernel) ? b.alloc('screen anchors (fp16, tiled)', mpad * dp * 2) : undefined;
    this.e.ctx.upload(this.bufs.mu, sampleMean(e));
  }

  /** Points the last pass (resident) or tile (tiled) left to the direct pass: list2's length, on the device. */
  get fallbackCount(): bigint {
    return this.bufs.scalars.ptr + 16n;
  }

  /** Tiled: the list's length of the tile just done (its wait is over; the next tile resets it). */
  tileFallbacks(): number {
    const c = new Uint32Array(1);
    this.e.ctx.download(c, this.bufs.scalars, 16);
    return c[0];
  }

  /** Buffers a pass writes (tests poison them). */
  outputs(): DeviceBuffer[] {
    const b = this.bufs;
    return [b.keys, b.list, b.list2, b.thr, b.ccount, b.cand, b.Ch, b.cn, b.scalars, b.part, ...(this.Ct ? [this.Ct] : [])];
  }

  /** L anchors in C (L at most the engine's m) as a set to screen against. */
  anchorSet(C: DeviceBuffer, L: number): AnchorSet {
    if (L > this.e.m) throw new Error(`a screen sized for ${this.e.m} anchors cannot take ${L}`);
    const { mpad, slice, slices } = screenShape(this.e.d, L, this.rows);
    return { C, m: L, mpad, slice, slices, masks: keyMasks(mpad) };
  }

  /** Before a pass's spans: the scale for the whole data's range, the anchors' fp16 copy (the engine's, or `set`). */
  begin(maxAbs: number, resident: Span | undefined, set = this.own): void {
    const { e, g, bufs: b } = this;
    this.set = set;
    this.scale = halfScale(maxAbs);
    if (resident && this.preparedScale !== this.scale) {
      this.preparePoints(resident);
      this.preparedScale = this.scale;
    }
    e.run('screen_reset', 1, { scalars: b.scalars.ptr, first: 0 });
    e.run('prep_anchors', Math.min(Math.ceil(set.mpad / 8), e.ctx.info.multiprocessors * 16), {
      C: set.C.ptr, mu: b.mu.ptr, s: this.scale, m: set.m, d: e.d, dp: g.dp, mpad: set.mpad, Ch: b.Ch.ptr, cn: b.cn.ptr, scalars: b.scalars.ptr,
    });
    if (this.Ct) {
      e.run('tile_anchors', Math.min(Math.ceil((set.mpad * g.dp) / 8 / 256), e.ctx.info.multiprocessors * 8), {
        Ch: b.Ch.ptr, dp: g.dp, mpad: set.mpad, Ct: this.Ct.ptr,
      });
    }
  }

  /** The assign of one span against begin()'s set: J1, D1, J2, D2 (at the span's rows) exact. */
  span(s: Span, tiled: boolean, top2: Top2): void {
    const { e, g, bufs: b, bound } = this;
    const { d } = e;
    const { C, m, mpad, masks } = this.set;
    const n = s.rows;
    if (tiled) {
      e.run('screen_reset', 1, { scalars: b.scalars.ptr, first: 2 });
      this.preparePoints(s);
    }
    e.run(this.kernel, Math.ceil(n / BLOCK_POINTS), {
      Xh: b.Xh.ptr, Ch: (this.Ct ?? b.Ch).ptr, xn: b.xn.ptr, cn: b.cn.ptr, scalars: b.scalars.ptr, n, dp: g.dp, mpad,
      hmask: masks.hmask, keys: b.keys.ptr,
    }, { sharedBytes: this.shared });
    e.run(keysOf(this.kernel) === KEYS_WIDE ? 'exact_h16' : 'exact_h', Math.ceil(n / KERNELS.exact_h.points.value), {
      X: s.x, C: C.ptr, xn: b.xn.ptr, keys: b.keys.ptr, scalars: b.scalars.ptr, ...bound, s2: this.scale * this.scale,
      imask: masks.imask, n, d, m, J1: top2.j1, D1: top2.d1, J2: top2.j2, D2: top2.d2, list: b.list.ptr,
      thr: b.thr.ptr, ccount: b.ccount.ptr, cap: g.collectCap,
    });
    // The grids below are sized for their longest list; blocks past its length leave at once.
    const collect = Math.min(g.collectCap, n);
    e.run(this.collectKernel, Math.ceil(collect / BLOCK_POINTS), {
      Xh: b.Xh.ptr, Ch: b.Ch.ptr, xn: b.xn.ptr, cn: b.cn.ptr, list: b.list.ptr, scalars: b.scalars.ptr, thr: b.thr.ptr,
      cap: collect, dp: g.dp, mpad, cand: b.cand.ptr, ccount: b.ccount.ptr, ncand: g.ncand,
    }, { sharedBytes: this.collectKernel === 'collect_h90' ? sharedOf('screen_h90', g.dp) : 0 });
    e.run('exact_collect', Math.ceil(n / KERNELS.exact_collect.points.value), {
      X: s.x, C: C.ptr, list: b.list.ptr, scalars: b.scalars.ptr, thr: b.thr.ptr, cap: collect, cand: b.cand.ptr,
      ccount: b.ccount.ptr, ncand: g.ncand, d, J1: top2.j1, D1: top2.d1, J2: top2.j2, D2: top2.d2, list2: b.list2.ptr,
    });
    const cap = Math.min(g.cap, n);
    const count = b.scalars.ptr + 16n;
    e.run('fallback_split', Math.min(Math.ceil(cap / KERNELS.fallback_split.points.value), 256), {
      X: s.x, C: C.ptr, d, m, slice: this.set.slice, list: b.list2.ptr, count, cap, part: b.part.ptr,
    }, { gridY: this.set.slices });
    e.run('fallback_merge', 64, {
      part: b.part.ptr, slices: this.set.slices, cap, list: b.list2.ptr, count, rest: b.scalars.ptr + 20n,
      J1: top2.j1, D1: top2.d1, J2: top2.j2, D2: top2.d2,
    });
    if (n > cap) {
      // Points of list2 past the cap (a long list: the screen is failing on these data).
      e.run('assign_list', Math.ceil((n - cap) / KERNELS.assign_list.points.value), {
        X: s.x, C: C.ptr, n, d, m, ...top2, list: b.list2.ptr + BigInt(cap * 4), count: b.scalars.ptr + 20n,
      });
    }
  }

  private preparePoints(s: Span): void {
    const { e, g, bufs: b } = this;
    const npad = Math.ceil(s.rows / BLOCK_POINTS) * BLOCK_POINTS;
    e.run('prep_points', Math.min(Math.ceil(npad / 8), e.ctx.info.multiprocessors * 16), {
      X: s.x, mu: b.mu.ptr, s: this.scale, n: s.rows, d: e.d, dp: g.dp, npad, Xh: b.Xh.ptr, xn: b.xn.ptr,
    });
  }
}

/** The mean of every k-th row (k from n and MEAN_SAMPLE), in f64 in row order: deterministic. */
function sampleMean(e: EngineCore): Float32Array {
  const { n, d } = e;
  const step = Math.max(1, Math.ceil(n / MEAN_SAMPLE));
  const acc = new Float64Array(d);
  const scratch = new Float32Array(d); // one row decoded at a time, no array per row
  let rows = 0;
  for (let i = 0; i < n; i += step, rows++) {
    const r = e.rows.rowView(i, scratch);
    for (let k = 0; k < d; k++) acc[k] += r[k];
  }
  return Float32Array.from(acc, (v) => (rows ? v / rows : 0));
}
