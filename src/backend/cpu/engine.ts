// The CPU Engine: the math of ../types.ts on worker threads sharing memory.
//
// One iteration = two parallel phases and a little main-thread work:
//   1. assign (workers, by ranges of points): nearest + runner-up per point through the SIMD
//      kernel, and each point's two weights (soft share × Huber). At T = 0, points whose anchor
//      provably stays nearest skip the search (Hamerly bounds, worker.ts; at T > 0 the same for
//      the nearest two), same results;
//   2. reduce (workers, by slices of dimensions): S[j][k], every point in index order;
//      meanwhile the main thread walks the points once, in order, for W, count, sse, far, energy
//      and changed. Every sum is therefore taken in the same order whatever the thread count:
//      results are identical with 1 or 16 threads.
//   3. update (main thread, m×d): c_j += s·(S_j / W_j − c_j).
// Maintenance's nearest other anchor (m²·d) runs on the main thread through the same kernel.
import type { Dataset } from '../../io/dataset.js';
import { toF32 } from '../../io/dataset.js';
import type { AnchorStats, Engine, IterParams, IterStats, NearestAnchors } from '../types.js';
import { makeKernel, type Kernel, type KernelKind } from './kernel.js';
import { nearestOtherOnCpu } from './nearest.js';
import { WorkerPool } from './pool.js';
import { allocShared, chunkCount, CHUNK, sharedF32, sharedF64, type SharedState } from './shared.js';

/** Vectors as f32 in shared memory (a view of an f32 dataset already there; decoded otherwise). */
function sharedVectors(data: Dataset): Float32Array {
  const f = toF32(data);
  if (f.buffer instanceof SharedArrayBuffer) return f;
  const copy = sharedF32(f.length);
  copy.set(f);
  return copy;
}

/** Largest n×L seedTry distance cache, in floats (256 MiB). */
const TRY_CACHE_MAX = 1 << 26;

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

function split(total: number, parts: number, w: number): [number, number] {
  return [Math.floor((w * total) / parts), Math.floor(((w + 1) * total) / parts)];
}

export class CpuEngine implements Engine {
  readonly n: number;
  readonly d: number;
  readonly m: number;
  private st: SharedState;
  private pool: WorkerPool;
  private threads: number;
  private version = 0;
  private assign: Int32Array; // main-thread copy of the last pass's assignments (-1 = none yet)
  private last: AnchorStats;
  private ready: Promise<void[]>;
  private candCap = 0;
  private trySums = sharedF64(1); // per-chunk sums of seedTry (stride L); st.chunkSums keeps begin/add's
  private disposed = false;
  private boundsValid = false; // every point's lower bound holds (after one full assignment)
  private mainKernel: Kernel | undefined; // nearestOther's, on this thread (made at its first call)

  constructor(data: Dataset, m: number, threads: number, private readonly kernelKind: KernelKind, private useBounds = true) {
    this.n = data.n;
    this.d = data.d;
    this.m = m;
    const chunks = chunkCount(this.n);
    this.threads = Math.max(1, Math.min(threads, chunks));
    this.st = allocShared(sharedVectors(data), this.n, this.d, m, 1);
    this.assign = new Int32Array(this.n).fill(-1);
    this.last = {
      count: new Float64Array(m), sse: new Float64Array(m),
      far: new Int32Array(m).fill(-1), farDist: new Float64Array(m),
    };
    this.pool = new WorkerPool(this.threads);
    this.ready = this.pool.all((w) => {
      const [chunk0, chunk1] = split(chunks, this.threads, w);
      return { op: 'init', state: this.st, kernel: kernelKind, chunk0, chunk1 };
    });
    // Methods await `ready` and see its failure; this only keeps an engine disposed before its
    // first pass from reporting an unhandled rejection.
    this.ready.catch(() => {});
  }

  // --- k-means++ seeding ---

  /**
   * Greedy k-means++ adds one of the candidates it just tried: the try pass keeps every point's
   * distance to each candidate (n×L floats, when that stays under TRY_CACHE_MAX), so the add
   * that follows needs no second pass over the vectors.
   */
  private tryCache: { cands: Float32Array; L: number; dist: Float32Array } | undefined;
  private tryDist: Float32Array | undefined;

  private cachedCandidate(c: Float32Array): number {
    const t = this.tryCache;
    if (!t) return -1;
    const d = this.d;
    outer: for (let l = 0; l < t.L; l++) {
      for (let k = 0; k < d; k++) if (!Object.is(t.cands[l * d + k], c[k])) continue outer;
      return l;
    }
    return -1;
  }

  private async seedPass(mode: 'begin' | 'add' | 'try', cands: Float32Array, count: number): Promise<Float64Array> {
    await this.ready;
    let extra: { tryDist?: Float32Array; fromTry?: number; tryL?: number } = {};
    if (mode === 'try' && this.n * count <= TRY_CACHE_MAX) {
      if (!this.tryDist || this.tryDist.length < this.n * count) this.tryDist = sharedF32(this.n * count);
      extra = { tryDist: this.tryDist };
    } else if (mode === 'add') {
      const l = this.cachedCandidate(cands);
      if (l >= 0) extra = { tryDist: this.tryCache!.dist, fromTry: l, tryL: this.tryCache!.L };
    }
    const L = mode === 'try' ? count : 1;
    if (L > this.candCap) {
      this.candCap = L;
      this.st.cands = sharedF32(L * this.d);
      this.trySums = sharedF64(chunkCount(this.n) * L);
    }
    this.st.cands.set(cands.subarray(0, L * this.d));
    // seedPick relies on begin/add's chunk sums: a seedTry must not overwrite them.
    const cs = mode === 'try' ? this.trySums : this.st.chunkSums;
    await this.pool.all(() => ({ op: 'seed', mode, count: L, cands: this.st.cands, chunkSums: cs, ...extra }));
    this.tryCache = mode === 'try' && extra.tryDist ? { cands: cands.slice(0, L * this.d), L, dist: extra.tryDist } : undefined;
    const totals = new Float64Array(L);
    for (let c = 0; c < chunkCount(this.n); c++) for (let l = 0; l < L; l++) totals[l] += cs[c * L + l];
    return totals;
  }

  async seedBegin(c: Float32Array): Promise<number> {
    return (await this.seedPass('begin', c, 1))[0];
  }
  seedTry(cands: Float32Array): Promise<Float64Array> {
    return this.seedPass('try', cands, Math.floor(cands.length / this.d));
  }
  async seedAdd(c: Float32Array): Promise<number> {
    return (await this.seedPass('add', c, 1))[0];
  }

  /** Same chunked order as the totals above, so a target below the total always lands. */
  async seedPick(target: number): Promise<number> {
    const { seedD: D, chunkSums } = this.st;
    // chunkSums holds the per-chunk Σ D of the last begin/add (stride 1 there).
    let acc = 0;
    let lastPositive = -1;
    for (let c = 0; c < chunkCount(this.n); c++) {
      const cs = chunkSums[c];
      const i0 = c * CHUNK, i1 = Math.min(this.n, i0 + CHUNK);
      if (acc + cs > target) {
        let local = 0;
        for (let i = i0; i < i1; i++) {
          local += D[i];
          if (D[i] > 0) lastPositive = i;
          if (acc + local > target) return i;
        }
        return lastPositive >= 0 ? lastPositive : i0; // rounding at the chunk edge
      }
      acc += cs;
      for (let i = i1 - 1; i >= i0; i--) if (D[i] > 0) { lastPositive = i; break; }
    }
    return lastPositive >= 0 ? lastPositive : this.n - 1;
  }

  async row(i: number): Promise<Float32Array> {
    return this.st.x.slice(i * this.d, (i + 1) * this.d);
  }

  // --- the loop ---

  async setAnchors(anchors: Float32Array): Promise<void> {
    if (anchors.length !== this.m * this.d) throw new Error(`setAnchors: expected ${this.m * this.d} values, got ${anchors.length}`);
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

  private async pass(p: IterParams, update: boolean): Promise<IterStats> {
    await this.ready;
    const t0 = performance.now();
    const { n, d, m } = this;
    const st = this.st;
    // Huber thresholds from the previous pass (types.ts): h²·sse_j/count_j, +inf when off.
    const prev = this.last;
    for (let j = 0; j < m; j++) {
      st.huberH[j] = update && p.huber > 0 && prev.count[j] > 0 ? p.huber * p.huber * (prev.sse[j] / prev.count[j]) : Infinity;
    }
    const T = update ? p.temperature : 0;
    // Points whose nearest (T = 0) or nearest two (T > 0) provably stay skip the search.
    const bounds = this.useBounds && this.boundsValid;
    const { jumped, maxDrift } = splitDrift(st.drift, m);
    await this.pool.all(() => ({ op: 'assign', version: this.version, temperature: T, bounds, maxDrift, jumped }));
    st.drift.fill(0);
    this.boundsValid = true;
    const reduced = update
      ? this.pool.all((w) => {
          const [k0, k1] = split(d, this.threads, w);
          return { op: 'reduce', k0, k1 };
        })
      : undefined;
    // Main thread, points in order: per-anchor statistics, energy and changes.
    const count = new Float64Array(m), sse = new Float64Array(m), W = new Float64Array(m);
    const far = new Int32Array(m).fill(-1), farDist = new Float64Array(m);
    const { j1, d1, j2, w1, w2 } = st;
    let energy = 0, changed = 0;
    for (let i = 0; i < n; i++) {
      const a = j1[i], da = d1[i];
      count[a] += 1;
      sse[a] += da;
      energy += da;
      if (far[a] < 0 || da > farDist[a]) { far[a] = i; farDist[a] = da; }
      if (this.assign[i] !== a) { changed++; this.assign[i] = a; }
      W[a] += w1[i];
      if (w2[i] > 0) W[j2[i]] += w2[i];
    }
    this.last = { count, sse, far, farDist };
    if (reduced) {
      await reduced;
      const s = p.step, S = st.sums, C = st.anchors;
      for (let j = 0; j < m; j++) {
        if (!(W[j] > 0)) continue;
        const inv = 1 / W[j];
        let moved = 0;
        for (let k = j * d; k < (j + 1) * d; k++) {
          const old = C[k];
          C[k] = old + s * (S[k] * inv - old);
          moved += (C[k] - old) ** 2;
        }
        st.drift[j] += Math.sqrt(moved);
      }
      this.version++;
    }
    return { energy: energy / n, changed, ms: performance.now() - t0 };
  }

  iterate(p: IterParams): Promise<IterStats> {
    return this.pass(p, true);
  }

  finalize(): Promise<IterStats> {
    return this.pass({ temperature: 0, step: 0, huber: 0 }, false);
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
    await this.pool.close();
  }
}
