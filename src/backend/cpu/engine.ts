// The CPU Engine: the math of ../engine.ts on worker threads sharing memory.
//
// One iteration = two parallel phases and a little main-thread work:
//   1. assign (workers, by ranges of points): nearest + runner-up per point through the SIMD
//      kernel, and each point's two weights (soft share × Huber). At T = 0, points whose anchor
//      provably stays nearest skip the search (Hamerly bounds, worker.ts; at T > 0 the same for
//      the nearest two), same results;
//   2. reduce (workers, by slices of dimensions): S[j][k]; meanwhile the main thread walks the
//      points once for W, count, sse, far, energy and changed (sums.ts);
//   3. update (main thread, m×d): c_j += s·(S_j / W_j − c_j).
// Every sum is of integers held in doubles (../fixed.ts, 52 bits: exact), so results are the same
// with 1 or 16 threads and with the rows split between several engines (sharded/): accumulate()
// hands out steps 1-2 as Partials, applyUpdate() takes the combined ones for step 3.
// Maintenance's nearest other anchor (m²·d) runs on the main thread through the same kernel;
// k-means++ seeding passes run on the same workers (seeding.ts).
import { UsageError } from '../../errors.js';
import { listedRowsF32, rowF32, selectRows, type Dataset } from '../../vectors/dataset.js';
import { DOUBLE_BITS, maxAbsOf, passScales, type PassScales } from '../fixed.js';
import type { AnchorStats, Engine, GlobalFigures, IterParams, IterStats, NearestAnchors, Partials } from '../types.js';
import { makeKernel, type Kernel, type KernelKind } from './kernel.js';
import { nearestOtherOnCpu } from './nearest.js';
import { CpuSeeding } from './seeding.js';
import { formGroups, groupCount, groupDrift, type GroupedPass, type Groups } from './groups.js';
import { WorkerPool } from './pool.js';
import { allocShared, chunkCount, sharedF64, toPortable, type SharedState, type SplitReduce, type WorkerRequest } from './shared.js';
import { energyUnits, fromPartials, passSums, statsOf, toPartials, type PassSums } from './sums.js';

/**
 * Anchors that jumped (maintenance moved them across the space) would ruin every point's bound
 * through the largest drift; instead the points' exact distances to those few are computed. The
 * jumped set: up to JUMP_MAX anchors whose drift exceeds twice the largest drift left outside it.
 */
const JUMP_MAX = 32;
export function splitDrift(drift: Float64Array, m: number): { jumped: Int32Array; maxDrift: number } {
  const kmax = Math.min(JUMP_MAX, Math.floor(m / 8));
  const order = Array.from({ length: m }, (_, j) => j).sort((a, b) => drift[b] - drift[a] || a - b);
  const rest = kmax < m ? drift[order[kmax]] : 0; // largest drift of the anchors never jumped
  let k = 0;
  while (k < kmax && drift[order[k]] > 2 * rest) k++;
  return { jumped: Int32Array.from(order.slice(0, k)), maxDrift: k < m ? drift[order[k]] : 0 };
}

/** The points whose nearest anchor differs from `assign`, with their previous anchors; undefined past `limit`. */
function changedPoints(j1: Int32Array, assign: Int32Array, n: number, limit: number): { points: Int32Array; from: Int32Array } | undefined {
  const points: number[] = [], from: number[] = [];
  for (let i = 0; i < n; i++) {
    if (j1[i] === assign[i]) continue;
    if (points.length >= limit) return undefined;
    points.push(i);
    from.push(assign[i]);
  }
  return { points: Int32Array.from(points), from: Int32Array.from(from) };
}

/** The points whose weights are not (1, 0) (a soft share or a Huber weight); undefined past `limit`. */
function weightedPoints(w1: Float64Array, w2: Float64Array, n: number, limit: number): Int32Array | undefined {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (w1[i] === 1 && w2[i] === 0) continue;
    if (out.length >= limit) return undefined;
    out.push(i);
  }
  return Int32Array.from(out);
}

function split(total: number, parts: number, w: number): [number, number] {
  return [Math.floor((w * total) / parts), Math.floor(((w + 1) * total) / parts)];
}

const FINAL: IterParams = { temperature: 0, step: 0, huber: 0 };
/** S of a pass that moves no anchor (step 0): not summed. */
const NO_SUMS = new Float64Array(0);

export class CpuEngine implements Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;
  private st: SharedState;
  private threads: number;
  private version = 0;
  private assign: Int32Array; // main-thread copy of the last pass's assignments (-1 = none yet)
  private last: AnchorStats;
  private ready: Promise<void[]>;
  private disposed = false;
  private boundsValid = false; // every point's lower bound holds (after one full assignment)
  private localMaxAbs = NaN;
  private global: GlobalFigures;
  private anchorAbs = 0;
  /** Scales of the next pass, and of the last one (whose sse `last` holds). */
  private scales: PassScales = { s: 1, w: 1, e: 1 };
  private lastScales: PassScales = { s: 1, w: 1, e: 1 };
  private seeding: CpuSeeding;
  private lastMs = 0;
  private mainKernel: Kernel | undefined;
  /** Unit sums of the assignments in `assign` (reduceSplit), valid at this S scale (NaN: not). */
  private hard: Float64Array | undefined;
  private hardScale = NaN;
  /** The anchor groups of the T = 0 bounds and each point's bound per group (groups.ts). */
  private grouping: { groups: Groups; lower: Float64Array; cum: Float64Array; valid: boolean } | undefined; // nearestOther's, on this thread (made at its first call)

  /** Per worker, the point-anchor distances its searches computed (profile). */
  private work: Float64Array;
  /** What the passes cost: distances computed by searches, against n·m per pass for brute force. */
  get profile(): { passes: number; distances: number } {
    let distances = 0;
    for (const v of this.work) distances += v;
    return { passes: this.passes, distances };
  }
  private passes = 0;

  /** The workers (shared with this engine's subsets, or with the engine this is a subset of). */
  private pool: WorkerPool;
  private readonly ownsPool: boolean;
  private readonly id: number;

  private constructor(
    private readonly data: Dataset, m: number, threads: number, private readonly kernelKind: KernelKind, private useBounds: boolean,
    pool: WorkerPool | undefined,
  ) {
    this.n = data.n;
    this.d = data.d;
    this.m = m;
    const chunks = chunkCount(this.n);
    this.threads = Math.max(1, Math.min(threads, chunks));
    this.st = allocShared({ dtype: data.dtype, buffer: data.buffer, byteOffset: data.byteOffset }, this.n, this.d, m, 1);
    this.assign = new Int32Array(this.n).fill(-1);
    this.last = {
      count: new Float64Array(m), sse: new Float64Array(m),
      far: new Int32Array(m).fill(-1), farDist: new Float64Array(m),
    };
    this.global = { n: this.n, maxAbs: 0, rowOffset: 0 };
    this.ownsPool = pool === undefined;
    this.pool = pool ?? new WorkerPool(this.threads);
    this.id = this.pool.nextEngineId();
    const st = this.st;
    this.seeding = new CpuSeeding({
      n: this.n, d: this.d, id: this.id, st,
      global: () => this.global, ready: () => this.ready, each: (make) => this.each(make),
    });
    const maxAbs = sharedF64(this.threads);
    this.work = sharedF64(this.threads);
    this.ready = this.each((w) => {
      const [chunk0, chunk1] = split(chunks, this.threads, w);
      return { op: 'init', engine: this.id, state: toPortable(this.st), kernel: kernelKind, chunk0, chunk1, maxAbs, slot: w, work: this.work };
    });
    // Methods await `ready` and see its failure; this only keeps an engine disposed before its
    // first pass from reporting an unhandled rejection.
    this.ready.catch(() => {});
    this.ready.then(() => (this.localMaxAbs = maxAbsOf(maxAbs)), () => {});
  }

  /** An engine over `data`, ready: its workers started and the data's range measured. */
  static async create(data: Dataset, m: number, threads: number, kernel: KernelKind, useBounds = true, pool?: WorkerPool): Promise<CpuEngine> {
    const e = new CpuEngine(data, m, threads, kernel, useBounds, pool);
    try {
      await e.ready;
      if (!Number.isFinite(e.localMaxAbs)) {
        throw new UsageError('the vectors contain NaN or infinite values; fix the data or pass --drop-invalid to skip such rows');
      }
      e.setGlobal({ n: e.n, maxAbs: e.localMaxAbs, rowOffset: 0 });
      return e;
    } catch (err) {
      await e.dispose();
      throw err;
    }
  }

  get maxAbs(): number {
    return this.localMaxAbs;
  }

  setGlobal(g: GlobalFigures): void {
    this.global = { ...g };
    this.refreshScales();
  }

  private refreshScales(anchorAbs = this.anchorAbs): void {
    this.anchorAbs = anchorAbs;
    this.scales = passScales(this.global.n, this.d, this.global.maxAbs, anchorAbs, DOUBLE_BITS);
  }

  // --- k-means++ seeding (seeding.ts) ---

  seedBegin(c: Float32Array): Promise<number> {
    return this.seeding.begin(c);
  }
  seedTry(cands: Float32Array): Promise<Float64Array> {
    return this.seeding.try(cands);
  }
  seedAdd(c: Float32Array): Promise<number> {
    return this.seeding.add(c);
  }
  seedAddMany(cands: Float32Array): Promise<number> {
    return this.seeding.addMany(cands);
  }
  seedPickMany(targets: Float64Array): Promise<Int32Array> {
    return this.seeding.pickMany(targets);
  }
  /** The smallest i whose prefix of units exceeds floor(target/unit); past the total, the last with a share. */
  async seedPick(target: number): Promise<number> {
    return (await this.seeding.pickMany(Float64Array.of(target)))[0];
  }
  get seedUnit(): number {
    return this.seeding.unit;
  }

  async row(i: number): Promise<Float32Array> {
    if (!(i >= 0 && i < this.n)) throw new Error(`row ${i} out of range 0..${this.n - 1}`);
    return rowF32(this.data, i);
  }

  async rows(list: ArrayLike<number>, out?: Float32Array): Promise<Float32Array> {
    return listedRowsF32(this.data, list, out);
  }

  /** An engine over the listed rows (gathered from the shared vectors), served by the same workers. */
  async subset(rows: Int32Array): Promise<Engine> {
    return CpuEngine.create(selectRows(this.data, rows), this.m, this.threads, this.kernelKind, this.useBounds, this.pool);
  }

  // --- the loop ---

  async setAnchors(anchors: Float32Array): Promise<void> {
    if (anchors.length !== this.m * this.d) throw new Error(`setAnchors: expected ${this.m * this.d} values, got ${anchors.length}`);
    const abs = maxAbsOf(anchors);
    if (!Number.isFinite(abs)) throw new Error('setAnchors: the anchors contain NaN or infinite values');
    this.refreshScales(abs);
    const { d } = this;
    const C = this.st.anchors;
    for (let j = 0; j < this.m; j++) {
      let moved = 0;
      for (let k = j * d; k < (j + 1) * d; k++) moved += (anchors[k] - C[k]) ** 2;
      this.st.drift[j] += Math.sqrt(moved);
    }
    C.set(anchors);
    this.version++;
  }

  async getAnchors(): Promise<Float32Array> {
    return this.st.anchors.slice();
  }

  /** Steps 1-2 over this engine's points (the top of the file): the pass's sums, nothing applied. */
  private async sumPass(p: IterParams): Promise<PassSums> {
    await this.ready;
    const t0 = performance.now();
    const { d, m } = this;
    const st = this.st;
    const update = p.step > 0;
    const sc = (this.lastScales = this.scales);
    // Huber thresholds from the previous pass (../engine.ts): h²·sse_j/count_j, +inf when off.
    const prev = this.last;
    for (let j = 0; j < m; j++) {
      st.huberH[j] = update && p.huber > 0 && prev.count[j] > 0 ? p.huber * p.huber * (prev.sse[j] / prev.count[j]) : Infinity;
    }
    // Points whose nearest (T = 0) or nearest two (T > 0) provably stay skip the search: group
    // bounds at T = 0 (groups.ts), Hamerly's bounds otherwise.
    const { jumped, maxDrift } = splitDrift(st.drift, m);
    const grouped = this.groupedPass(p.temperature, jumped);
    const bounds = this.useBounds && this.boundsValid;
    await this.each(() => ({ op: 'assign', engine: this.id, version: this.version, temperature: p.temperature, bounds, maxDrift, jumped, grouped }));
    st.drift.fill(0);
    this.passes++;
    // One kind of bounds is kept up to date by a pass; the other must start over.
    this.boundsValid = grouped === undefined;
    if (this.grouping) this.grouping.valid = grouped !== undefined;
    const job = this.reduceJob(update, sc.s);
    const reduced = job
      ? this.each((w) => {
          const [k0, k1] = split(d, this.threads, w);
          return { op: 'reduce', engine: this.id, k0, k1, sScale: sc.s, split: job === 'full' ? undefined : job };
        })
      : undefined;
    const sums = passSums(st, this.assign, sc, this.global.rowOffset, update ? st.sums : NO_SUMS);
    await reduced;
    this.lastMs = performance.now() - t0;
    return sums;
  }

  /**
   * How this pass takes S (worker.ts): from scratch ('full'), or through the unit sums kept between
   * passes (reduceSplit: only the points that changed anchor and those with weights other than
   * (1, 0) cost work), or not at all (undefined: S not wanted and no unit sums to keep). Like the
   * bounds, this skips work without changing a result (off with them: brute force).
   */
  private reduceJob(update: boolean, sScale: number): 'full' | SplitReduce | undefined {
    const { st, n } = this;
    const kept = this.useBounds && this.hard !== undefined && this.hardScale === sScale;
    const changed = kept ? changedPoints(st.j1, this.assign, n, Math.floor(n / 2)) : undefined;
    const weighted = this.useBounds && update ? weightedPoints(st.w1, st.w2, n, Math.floor(n / 2)) : undefined;
    if (update && !weighted) {
      this.hardScale = NaN;
      return 'full';
    }
    if (!update && !changed) {
      this.hardScale = NaN;
      return undefined;
    }
    this.hard ??= sharedF64(this.m * this.d);
    this.hardScale = sScale;
    return { hard: this.hard, changed, weighted };
  }

  /**
   * The group bounds of a T = 0 pass, when they apply (bounds on, enough anchors): the groups are
   * formed from the anchors at the first such pass and kept; bounds a T > 0 pass left stale are
   * rebuilt by a full search.
   */
  private groupedPass(temperature: number, jumped: Int32Array): GroupedPass | undefined {
    const { n, m, d } = this;
    if (!this.useBounds || groupCount(n, m) < 2) return undefined;
    if (!this.grouping) {
      this.mainKernel ??= makeKernel(this.kernelKind);
      const groups = formGroups(this.mainKernel, this.st.anchors, m, d, groupCount(n, m));
      this.grouping = { groups, lower: sharedF64(n * groups.G), cum: new Float64Array(groups.G), valid: false };
    }
    const g = this.grouping;
    if (!g.valid) g.cum.fill(0);
    const drift = groupDrift(g.groups, this.st.drift, jumped);
    for (let k = 0; k < g.groups.G; k++) g.cum[k] += drift[k];
    const moved = Uint8Array.from(this.st.drift, (v) => (v > 0 ? 1 : 0));
    return { groups: g.groups, cum: g.cum, moved, lower: g.lower, valid: g.valid };
  }

  /** Step 3: `s` (this engine's sums, or every shard's) become the pass's statistics; the anchors move. */
  private apply(s: PassSums, p: IterParams, ms: number): IterStats {
    const { d, m, st } = this;
    const sc = this.lastScales;
    this.last = statsOf(s, sc.e);
    if (p.step > 0) {
      const C = st.anchors;
      for (let j = 0; j < m; j++) {
        if (!(s.W[j] > 0)) continue;
        const inv = sc.w / (s.W[j] * sc.s); // mean = (S / sScale) / (W / wScale)
        let moved = 0;
        for (let k = j * d; k < (j + 1) * d; k++) {
          const old = C[k];
          C[k] = old + p.step * (s.S[k] * inv - old);
          moved += (C[k] - old) ** 2;
        }
        st.drift[j] += Math.sqrt(moved);
      }
      this.version++;
    }
    return { energy: energyUnits(s) / (sc.e * this.global.n), changed: s.changed, ms };
  }

  async iterate(p: IterParams): Promise<IterStats> {
    const t0 = performance.now();
    const s = await this.sumPass(p);
    return this.apply(s, p, performance.now() - t0);
  }

  finalize(): Promise<IterStats> {
    return this.iterate(FINAL);
  }

  async accumulate(p: IterParams): Promise<Partials> {
    return toPartials(await this.sumPass(p), this.m, this.d);
  }

  async applyUpdate(total: Partials, p: IterParams): Promise<IterStats> {
    return this.apply(fromPartials(total, this.m, this.d), p, this.lastMs);
  }

  async nearestOther(): Promise<NearestAnchors> {
    this.mainKernel ??= makeKernel(this.kernelKind);
    return nearestOtherOnCpu(this.mainKernel, this.st.anchors, this.m, this.d);
  }

  async stats(): Promise<AnchorStats> {
    const s = this.last;
    return { count: s.count.slice(), sse: s.sse.slice(), far: s.far.slice(), farDist: s.farDist.slice() };
  }

  async assignments(): Promise<Uint32Array> {
    return new Uint32Array(this.assign.buffer.slice(0));
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    if (this.ownsPool) await this.pool.close();
    else if (!this.pool.isClosed) await this.each(() => ({ op: 'free', engine: this.id }));
  }

  /** One request to each of this engine's workers (the first `threads` of the pool). */
  private each(make: (w: number) => WorkerRequest): Promise<void[]> {
    return this.pool.all((w) => (w < this.threads ? make(w) : undefined));
  }
}
