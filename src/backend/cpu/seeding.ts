// k-means++ on the CPU engine's workers (Engine.seedBegin / seedTry / seedAdd / seedPick and the
// rounds' seedAddMany / seedPickMany): each worker keeps its points' D (squared distance to the
// nearest anchor chosen so far, shared memory) and writes each chunk's sum of D in units of
// 1/scale as an exact integer (fixed.ts), so the totals and the D² sampling are the same on any
// thread count. The CUDA engine's counterpart is backend/cuda/seeding.ts.
import { fixedSeed, maxAbsOf, seedScale } from '../fixed.js';
import type { GlobalFigures } from '../types.js';
import { pickIndexes } from '../seed-pick.js';
import { chunkCount, CHUNK, sharedF32, sharedF64, type SharedState, type WorkerRequest } from './shared.js';

/** Largest n×L seedTry distance cache, in floats (256 MiB). */
const TRY_CACHE_MAX = 1 << 26;

/**
 * Largest f16 input whose rows the workers keep decoded to f32 while seeding, in values (f32
 * bytes: 512 MiB). Larger inputs decode on every pass, as before; default effort seeds large
 * inputs on a sample (anneal/init.ts), which stays under it.
 */
const ROW_CACHE_MAX = 1 << 27;

/** What seeding needs of its engine: the shared state, the run's global figures, its workers. */
export interface SeedingHost {
  readonly n: number;
  readonly d: number;
  readonly id: number;
  readonly st: SharedState;
  global(): GlobalFigures;
  /** Resolves when the engine's workers are ready (rejects if they failed). */
  ready(): Promise<unknown>;
  /** One request to each of the engine's workers. */
  each(make: (w: number) => WorkerRequest): Promise<void[]>;
}

export class CpuSeeding {
  /** Units per unit of squared distance; set by begin from the first anchor's range. */
  private scale = 1;
  private candCap = 0;
  /** Per-chunk sums of seedTry (stride L); st.chunkSums keeps begin/add's, which pick searches. */
  private trySums = sharedF64(1);
  /**
   * Greedy k-means++ adds one of the candidates it just tried: the try pass keeps every point's
   * distance to each candidate (n×L floats, when that stays under TRY_CACHE_MAX), so the add
   * that follows needs no second pass over the vectors.
   */
  private tryCache: { cands: Float32Array; L: number; dist: Float32Array } | undefined;
  private tryDist: Float32Array | undefined;

  constructor(private readonly host: SeedingHost) {}

  begin(c: Float32Array): Promise<number> {
    return this.pass('begin', c, 1).then((t) => t[0]);
  }
  try(cands: Float32Array): Promise<Float64Array> {
    return this.pass('try', cands, Math.floor(cands.length / this.host.d));
  }
  add(c: Float32Array): Promise<number> {
    return this.pass('add', c, 1).then((t) => t[0]);
  }
  async addMany(cands: Float32Array): Promise<number> {
    const { n, d, st } = this.host;
    const L = Math.floor(cands.length / d);
    if (L === 0) return sumChunks(st.chunkSums, chunkCount(n)) / this.scale;
    return (await this.pass('many', cands, L))[0];
  }
  async pickMany(targets: Float64Array): Promise<Int32Array> {
    const { n, st } = this.host;
    const { seedD: D, chunkSums } = st;
    const scale = this.scale;
    return pickIndexes(targets, scale, chunkSums.subarray(0, chunkCount(n)), CHUNK, n, (i) => fixedSeed(D[i], scale));
  }
  get unit(): number {
    return 1 / this.scale;
  }

  private cachedCandidate(c: Float32Array): number {
    const t = this.tryCache;
    if (!t) return -1;
    const d = this.host.d;
    outer: for (let l = 0; l < t.L; l++) {
      for (let k = 0; k < d; k++) if (!Object.is(t.cands[l * d + k], c[k])) continue outer;
      return l;
    }
    return -1;
  }

  private async pass(step: 'begin' | 'add' | 'try' | 'many', cands: Float32Array, count: number): Promise<Float64Array> {
    const { n, d, st, id } = this.host;
    await this.host.ready();
    if (step === 'begin') {
      const g = this.host.global();
      this.scale = seedScale(g.n, d, g.maxAbs, maxAbsOf(cands.subarray(0, d)));
    }
    let extra: { tryDist?: Float32Array; fromTry?: number; tryL?: number } = {};
    if (step === 'try' && n * count <= TRY_CACHE_MAX) {
      if (!this.tryDist || this.tryDist.length < n * count) this.tryDist = sharedF32(n * count);
      extra = { tryDist: this.tryDist };
    } else if (step === 'add') {
      const l = this.cachedCandidate(cands);
      if (l >= 0) extra = { tryDist: this.tryCache!.dist, fromTry: l, tryL: this.tryCache!.L };
    }
    const L = step === 'try' || step === 'many' ? count : 1;
    if (L > this.candCap) {
      this.candCap = L;
      st.cands = sharedF32(L * d);
      this.trySums = sharedF64(chunkCount(n) * L);
    }
    st.cands.set(cands.subarray(0, L * d));
    // pick relies on begin/add's chunk sums: a try must not overwrite them.
    const cs = step === 'try' ? this.trySums : st.chunkSums;
    const scale = this.scale;
    const cacheRows = st.x.dtype === 'f16' && n * d <= ROW_CACHE_MAX;
    await this.host.each(() => ({ op: 'seed', engine: id, step, count: L, cands: st.cands, chunkSums: cs, seedScale: scale, cacheRows, ...extra }));
    this.tryCache = step === 'try' && extra.tryDist ? { cands: cands.slice(0, L * d), L, dist: extra.tryDist } : undefined;
    if (step === 'many') return Float64Array.of(sumChunks(cs, chunkCount(n)) / scale);
    const totals = new Float64Array(L);
    for (let c = 0; c < chunkCount(n); c++) for (let l = 0; l < L; l++) totals[l] += cs[c * L + l];
    for (let l = 0; l < L; l++) totals[l] /= scale; // integers below 2^53 over a power of two: exact
    return totals;
  }
}

/** Σ of the first `chunks` chunk sums (whole units below 2^53: exact in any order). */
export function sumChunks(sums: Float64Array, chunks: number): number {
  let t = 0;
  for (let c = 0; c < chunks; c++) t += sums[c];
  return t;
}
