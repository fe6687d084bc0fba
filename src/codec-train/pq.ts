// Training and encoding of product-quantized residuals (the coded form: ../pq.ts) with our own
// annealing quantizer: each subspace's codebook is an anneal() run over an Engine of the Backend in
// use, on a sample of the scaled residuals, and every vector's codes are one exact assignment pass
// of that engine against the stored codebooks. With a projection (--pq-dims k, projection.ts) the
// scaled residuals are first replaced by their coordinates along k principal directions, and the
// same steps run on those. Nothing here knows which device runs it: through the Backend interface
// the M small problems are independent, so a GPU trains several at once (its host waits filled by
// another's launches: TrainEngine.smallEnginesAtOnce); the CPU runs them one after another, each on
// every core.
import { anneal } from '../anneal/index.js';
import { DEFAULT_CONFIG, type AnnealConfig } from '../anneal/config.js';
import { Rng } from '../anneal/random.js';
import type { AnnealHooks } from '../anneal/types.js';
import type { Backend, Engine } from '../backend/types.js';
import { allocDataset, allocStore, asRows, forEachF32Rows, forEachPiece, listedRowsF32, pieceRows, rows, type Dataset, type Rows } from '../vectors/dataset.js';
import { allocCodes } from '../vectors/codes.js';
import { InterruptedError } from '../errors.js';
import { log } from '../log.js';
import { PqResiduals, storedCodebook, subspaceBounds, type PqBits } from '../codecs/pq.js';
import { residualMse } from '../codecs/index.js';
import type { EncodedResiduals, ResidualInput } from '../codecs/types.js';
import { project, trainProjection } from './projection.js';

/** Training points per centroid: FAISS's max_points_per_centroid; more barely moves the codebooks. */
export const PQ_TRAIN_PER_CENTROID = 256;

/**
 * Each codebook's anneal() run: the quantizer's defaults but for the iteration cap (30) and no
 * maintenance. On these small low-dimensional problems (d/M dimensions, 16 or 256 centroids)
 * maintenance gave the same energy (16,384 x 4, 256 centroids; 2,000 x 2, 16) at several times
 * the time, and the runs settle within 30 iterations.
 */
const PQ_TRAIN_CONFIG: Omit<AnnealConfig, 'm'> = { ...DEFAULT_CONFIG, maxIters: 30, maintenanceEvery: 0 };


export interface PqOptions {
  /** M subspaces, 1..d (1..dims with a projection). */
  subspaces: number;
  /** Code the residual's coordinates along this many principal directions (M..d); absent or 0: the residual itself. */
  dims?: number;
  bits: PqBits;
  seed: number;
  /** Training points per subspace (default K × PQ_TRAIN_PER_CENTROID, at most n). */
  sample?: number;
  maxIters?: number;
  /** Subspaces trained at a time (default: the backend's smallEnginesAtOnce); any number gives the same bytes. */
  atOnce?: number;
}

/** Train the codebooks on a sample and encode every vector. */
export async function encodePq(input: ResidualInput, backend: Backend, o: PqOptions, hooks: AnnealHooks = {}): Promise<PqResiduals> {
  return (await encodePqMeasured(input, backend, o, hooks)).residuals;
}

/**
 * encodePq, and the coded file's mean squared error: measured through the decoder (residualMse),
 * or with a projection from the coordinates the encoder holds (projectedEnergy), which is the same
 * to f32 rounding without decoding every row along k × d directions again.
 */
export async function encodePqMeasured(input: ResidualInput, backend: Backend, o: PqOptions, hooks: AnnealHooks = {}): Promise<EncodedResiduals<PqResiduals>> {
  const started = performance.now();
  const { n, d, assign } = input;
  const M = o.subspaces;
  const k = o.dims || 0;
  if (!(Number.isInteger(k) && k >= 0 && k <= d)) throw new Error(`encodePq: ${k} projected dimensions, d = ${d} allows 0..${d}`);
  const D = k || d; // the dimensions the codes cover
  if (!(Number.isInteger(M) && M >= 1 && M <= D)) throw new Error(`encodePq: M = ${M} subspaces, ${D} dimensions allow 1..${D}`);
  const K = 2 ** o.bits;
  const bounds = subspaceBounds(D, M);
  const m = input.anchors.length / d;
  const scales = anchorScales(input, m);
  const residual = scaledResiduals(input, scales);
  let scaled = residual;
  let projectionHalf: Uint16Array | undefined;
  if (k) {
    const p = trainProjection(residual, k, bounds, o.seed);
    projectionHalf = p.half;
    scaled = project(residual, p.used, k);
  }

  const sampleSize = Math.min(n, o.sample ?? K * PQ_TRAIN_PER_CENTROID);
  const sample = sampleRows(n, sampleSize, new Rng(o.seed));
  const trainedK = Math.min(K, sampleSize);
  const codebooks = new Float32Array(K * D);
  const codes = allocCodes<Uint8Array>('u8', n, M);
  const trainPoints = subspaceColumns(scaled, bounds, sample);
  const usable = (t: number) => codebooks.subarray(K * bounds[t], K * bounds[t] + trainedK * (bounds[t + 1] - bounds[t]));
  // Subspace t's codebook (and, when the sample is every vector, its codes): written where no other
  // subspace writes, so the subspaces may train in any order or at once (TrainEngine.smallEnginesAtOnce)
  // and give the same bytes.
  const train = async (t: number) => {
    const lo = bounds[t];
    const w = bounds[t + 1] - lo;
    const cfg: AnnealConfig = { ...PQ_TRAIN_CONFIG, m: trainedK, seed: o.seed + t, maxIters: o.maxIters ?? PQ_TRAIN_CONFIG.maxIters };
    const points = trainPoints[t];
    const engine = await backend.open(points, trainedK);
    try {
      const trained = (await anneal(engine, cfg, { signal: hooks.signal, initAnchors: firstRows(points, trainedK) })).anchors;
      // Fewer training points than centroids: the spare entries repeat trained ones (never chosen: ties keep the lowest).
      const book = new Float32Array(K * w);
      for (let c = 0; c < K; c++) book.set(trained.subarray((c % trainedK) * w, ((c % trainedK) + 1) * w), c * w);
      codebooks.set(storedCodebook(book), K * lo);
      // Codes against the codebook as stored; when the sample is every vector, its engine already holds them.
      if (sampleSize === n) {
        const nearest = await nearestEntries(engine, usable(t), hooks);
        for (let r = 0; r < n; r++) codes.set(sample[r], t, nearest[r]);
      }
    } finally {
      await engine.dispose();
    }
  };
  await atOnce(M, Math.max(1, o.atOnce ?? backend.smallEnginesAtOnce), train);
  // Every vector's codes, one subspace after another (an engine over all n rows each: not several at once).
  if (sampleSize < n)
    for (let t = 0; t < M; t++) {
      const all = await backend.open(columns(scaled, bounds[t], bounds[t + 1] - bounds[t]), trainedK);
      try {
        const nearest = await nearestEntries(all, usable(t), hooks);
        for (let i = 0; i < n; i++) codes.set(i, t, nearest[i]);
      } finally {
        await all.dispose();
      }
    }
  log().debug({ seconds: (performance.now() - started) / 1000, M, bits: o.bits, dims: k, sample: sampleSize }, 'pq residuals');
  const residuals = new PqResiduals(n, d, M, o.bits, assign, scales, codebooks, codes, projectionHalf);
  return { residuals, residualEnergy: k ? projectedEnergy(residuals, residual, scaled) : residualMse(residuals, input) };
}

/**
 * The mean of ‖x − x̂‖² over the vectors of a projected pq code, from what the encoder holds: with
 * ρ the scaled residual, y = Pρ its coordinates and ĉ its codes' (P's rows orthonormal),
 * ‖x − x̂‖² = s² ‖ρ − Pᵀĉ‖² = s² (‖ρ‖² − ‖y‖² + ‖y − ĉ‖²). n × (d + 2k) operations instead of the
 * decoder's n × k × d; it differs from the decoded file's error by the f32 rounding of the values.
 */
function projectedEnergy(r: PqResiduals, residual: Rows, y: Rows): number {
  const { n, d, M, K, bounds, codebooks, codes, scales, assign, dims } = r;
  let sum = 0;
  forEachF32Rows(residual, 0, n, (v, c0, c1) => {
    const coords = rows(y, c0, c1) as Float32Array;
    for (let i = c0; i < c1; i++) {
      const s = scales[assign[i]];
      if (s === 0) continue;
      let e = 0;
      for (let j = 0; j < d; j++) e += v[(i - c0) * d + j] ** 2;
      const o = (i - c0) * dims;
      const code = codes.piece(i), row = codes.pieceStart(i);
      for (let t = 0; t < M; t++) {
        const lo = bounds[t];
        const w = bounds[t + 1] - lo;
        const c = K * lo + code[row + t] * w;
        for (let q = 0; q < w; q++) {
          const yq = coords[o + lo + q];
          e += (yq - codebooks[c + q]) ** 2 - yq * yq;
        }
      }
      sum += s * s * Math.max(0, e);
    }
  });
  return sum / n;
}

/**
 * Each anchor's scale: the RMS of its vectors' residuals per dimension, in f32 (0 for an empty cell
 * or one whose vectors all sit on the anchor).
 */
function anchorScales({ x, n, d, anchors, assign }: ResidualInput, m: number): Float32Array {
  const sse = new Float64Array(m);
  const count = new Float64Array(m);
  forEachF32Rows(asRows(x, n, d), 0, n, (v, c0, c1) => {
    for (let i = c0; i < c1; i++) {
      const a = assign[i], o = (i - c0) * d;
      let s = 0;
      for (let k = 0; k < d; k++) {
        const r = v[o + k] - anchors[a * d + k];
        s += r * r;
      }
      sse[a] += s;
      count[a]++;
    }
  });
  return Float32Array.from(sse, (s, j) => (count[j] > 0 ? Math.sqrt(s / (count[j] * d)) : 0));
}

/** n×d residuals divided by their anchor's scale (0 where the scale is 0), in fresh shared memory of any size. */
function scaledResiduals({ x, n, d, anchors, assign }: ResidualInput, scales: Float32Array): Rows {
  const out: Rows = { n, d, ...allocStore(n, d, 'f32') };
  forEachF32Rows(asRows(x, n, d), 0, n, (v, c0, c1) => {
    const dst = rows(out, c0, c1) as Float32Array;
    for (let i = c0; i < c1; i++) {
      const a = assign[i];
      const s = scales[a];
      if (s === 0) continue;
      const o = (i - c0) * d;
      for (let k = 0; k < d; k++) dst[o + k] = (v[o + k] - anchors[a * d + k]) / s;
    }
  });
  return out;
}

/**
 * job(0), ..., job(count − 1), at most `width` running at a time, each runner taking the next job
 * as it finishes one. After a failure (Ctrl-C among them) no job begins; those running end (none
 * is left running behind the throw), and the first failure, in job order, is thrown.
 */
async function atOnce(count: number, width: number, job: (t: number) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: Array<{ t: number; error: unknown }> = [];
  const runner = async () => {
    for (let t = next++; t < count && failures.length === 0; t = next++) {
      try {
        await job(t);
      } catch (error) {
        failures.push({ t, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, runner));
  if (failures.length) throw failures.reduce((a, b) => (b.t < a.t ? b : a)).error;
}

/** `count` distinct row indices of 0..n-1 in random order (seeded partial Fisher–Yates). */
function sampleRows(n: number, count: number, rng: Rng): Int32Array {
  const swapped = new Map<number, number>();
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const j = i + rng.int(n - i);
    out[i] = swapped.get(j) ?? j;
    swapped.set(j, swapped.get(i) ?? i);
  }
  return out;
}

/** Columns lo..lo+w of every row of `a` as an f32 Dataset in shared memory (any n·w: written through views). */
function columns(a: Rows, lo: number, w: number): Dataset {
  const { d } = a;
  const out = allocDataset(a.n, w, 'f32', 'pq-subspace');
  forEachPiece(a, (v, r0, r1) => {
    const dst = rows(out, r0, r1) as Float32Array; // out's rows are narrower than a's: a's piece of rows fits one view
    for (let i = r0; i < r1; i++) dst.set((v as Float32Array).subarray((i - r0) * d + lo, (i - r0) * d + lo + w), (i - r0) * w);
  });
  return out;
}

/**
 * The listed rows of `a`, cut into each subspace's columns (bounds), in list order: one Dataset a
 * subspace. One pass over the rows, a chunk of them gathered at a time: the list is random, so a
 * pass a subspace waited on memory for every row, M times over.
 */
function subspaceColumns(a: Rows, bounds: Int32Array, list: Int32Array): Dataset[] {
  const { d } = a, M = bounds.length - 1;
  const outs = Array.from({ length: M }, (_, t) => allocDataset(list.length, bounds[t + 1] - bounds[t], 'f32', 'pq-subspace'));
  const chunk = new Float32Array(GATHER_ROWS * d);
  for (let r0 = 0; r0 < list.length; r0 += GATHER_ROWS) {
    const r1 = Math.min(list.length, r0 + GATHER_ROWS);
    listedRowsF32(a, list.subarray(r0, r1), chunk);
    for (let t = 0; t < M; t++) {
      const lo = bounds[t], w = bounds[t + 1] - lo, per = pieceRows(w, 'f32');
      // The chunk's rows of this subspace, a view of them at a time (they may straddle two pieces).
      for (let s0 = r0; s0 < r1; ) {
        const s1 = Math.min(r1, (Math.floor(s0 / per) + 1) * per);
        const dst = rows(outs[t], s0, s1) as Float32Array;
        for (let r = s0; r < s1; r++) for (let q = 0; q < w; q++) dst[(r - s0) * w + q] = chunk[(r - r0) * d + lo + q];
        s0 = s1;
      }
    }
  }
  return outs;
}

/** Rows subspaceColumns gathers at a time. */
const GATHER_ROWS = 4096;

/**
 * The first `count` rows of the (randomly sampled) training points: the codebook's start, as FAISS
 * starts its k-means. k-means++ would cost ~3 engine round trips per centroid (x 256 centroids x M
 * subspaces), most of a codebook's training time on the CPU, and annealing from here reaches as low
 * an energy.
 */
function firstRows(ds: Dataset, count: number): Float32Array {
  const out = new Float32Array(count * ds.d);
  forEachF32Rows(ds, 0, count, (v, c0) => out.set(v, c0 * ds.d));
  return out;
}

/** Each row's nearest codebook entry (exact, ties to the lowest index), by the engine's final pass. */
async function nearestEntries(engine: Engine, codebook: Float32Array, hooks: AnnealHooks): Promise<Uint32Array> {
  if (hooks.signal?.aborted) throw new InterruptedError();
  await engine.setAnchors(codebook);
  await engine.finalize();
  return engine.assignments();
}
