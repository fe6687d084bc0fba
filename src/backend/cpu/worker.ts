// One CPU worker thread: owns a contiguous range of whole chunks of points for the assignment and
// seeding passes, and a slice of dimensions for the reduction. See shared.ts for the state and
// engine.ts for the orchestration; the math is the comment at the top of ../engine.ts.
import { parentPort } from 'node:worker_threads';
import { CHUNK, fromPortable, type SharedState, type SplitReduce, type WorkerRequest } from './shared.js';
import { decodeHalf, f16ToF32 } from '../../vectors/dataset.js';
import { makeKernel, type Kernel, type Top2Out } from './kernel.js';
import { knnRange } from './knn-core.js';
import { PqSearcher } from './pq-search.js';
import { assignGrouped, type GroupedPass } from './groups.js';
import { MIN_SOFT_SHARE } from '../types.js';
import { fixedSeed } from '../fixed.js';
import { codesOf, type CodesHandle } from '../../vectors/codes.js';

// The engine a message is about (use() below): its shared state, kernels and range of points.
let st: SharedState | undefined;
let kernel: Kernel | undefined;
let jKernel: Kernel | undefined; // distances to jumped anchors (its own copy of those anchors)
let range = { i0: 0, i1: 0, chunk0: 0 };
let engineId = -1;
/** Every engine this worker serves, by id (an engine and its subsets share the workers). */
const engines = new Map<number, { st: SharedState; kernel: Kernel; jKernel: Kernel; range: typeof range; work: Float64Array; slot: number }>();
/** Adds to the engine's count of distances computed by searches (not the bound checks). */
let countWork: (distances: number) => void = () => {};
let knnKernel: Kernel | undefined;

function use(id: number): void {
  const e = engines.get(id);
  if (!e) throw new Error(`no engine ${id} on this worker`);
  ({ st, kernel, jKernel, range } = e);
  engineId = id;
  countWork = (v) => (e.work[e.slot] += v);
}
let decoded = new Float32Array(0); // f16 rows decoded for the kernel (xRows)

/**
 * Rows [i0, i0 + np) of X as f32: a view of f32 data, or f16 data decoded into a reused buffer
 * (valid until the next call). Views are made here, per call, from the buffer and offset: no typed
 * array spans all of X (it may exceed what one can hold).
 */
function xRows(i0: number, np: number): Float32Array {
  const { x, d } = st!;
  if (x.dtype === 'f32') return new Float32Array(x.buffer, x.byteOffset + i0 * d * 4, np * d);
  if (decoded.length < np * d) decoded = new Float32Array(np * d);
  const out = decoded.subarray(0, np * d);
  decodeHalf(new Uint16Array(x.buffer, x.byteOffset + i0 * d * 2, np * d), out);
  return out;
}

/**
 * f16 rows decoded once for k-means++: its passes (one per anchor chosen, and per try) read every
 * row each time, and decoding them on every pass made f16 init about 3× slower than f32's. Kept
 * only while seeding (any other request drops it) and only when the engine allows the memory.
 */
let seedCache: { engine: number; rows: Float32Array } | undefined;

/** Rows [i0, i0 + np) of this worker's range as f32 for a seeding pass (from the cache when allowed). */
function seedRows(i0: number, np: number, cache: boolean): Float32Array {
  const { x, d } = st!;
  if (x.dtype === 'f32' || !cache) return xRows(i0, np);
  if (seedCache?.engine !== engineId) {
    const rows = new Float32Array((range.i1 - range.i0) * d);
    decodeHalf(new Uint16Array(x.buffer, x.byteOffset + range.i0 * d * 2, rows.length), rows);
    seedCache = { engine: engineId, rows };
  }
  return seedCache.rows.subarray((i0 - range.i0) * d, (i0 - range.i0 + np) * d);
}

/** Values of rows [i0, i0 + np) as stored (f32, or f16 bits: read them through value()). */
function xStored(i0: number, np: number): Float32Array | Uint16Array {
  const { x, d } = st!;
  const eb = x.dtype === 'f32' ? 4 : 2;
  const at = x.byteOffset + i0 * d * eb;
  return x.dtype === 'f32' ? new Float32Array(x.buffer, at, np * d) : new Uint16Array(x.buffer, at, np * d);
}

let tile: Top2Out & { dist: Float32Array; dist2: Float32Array; list: Int32Array; rows: Float32Array; jd: Float32Array } = {
  j1: new Int32Array(CHUNK), d1: new Float32Array(CHUNK), j2: new Int32Array(CHUNK), d2: new Float32Array(CHUNK),
  d3: new Float32Array(CHUNK), dist: new Float32Array(CHUNK), dist2: new Float32Array(CHUNK),
  list: new Int32Array(CHUNK), rows: new Float32Array(0), jd: new Float32Array(0),
};

/**
 * Relative slack on distances for the bound test: a worst-case bound on the f32 rounding of a
 * d-term sum of squares, doubled. A point is skipped only when its anchor is nearest by more than
 * that, so skipping never changes j1 (or d1, recomputed exactly) compared with a full search.
 */
function slack(d: number): number {
  return 2 * (d + 8) * 2 ** -24;
}

/**
 * Nearest + runner-up of each point of this worker's range, and the point's two weights.
 *
 * With `bounds` (valid once every point has had one full search), Hamerly's test skips the
 * search where the answer provably cannot change. Each point keeps lower bounds on its distance
 * to every anchor but its nearest (`lower`) and but its two nearest (`lower3`); after anchors
 * move, a bound drops by the largest drift, except for anchors that jumped (splitDrift in
 * engine.ts), whose exact distances are computed instead.
 *  - T = 0: the exact distance to the previous nearest below `lower` ⇒ it stays nearest (the
 *    runner-up is not needed: w2 = 0; j2 is left as it was, `lower3` still bounds the rest);
 *  - T > 0: the exact distances to the previous two below `lower3` ⇒ they stay the two nearest,
 *    ordered by those distances (ties: lowest j).
 * Points failing the test get the full search. Results are identical to searching every point.
 */
function assign(version: number, temperature: number, bounds: boolean, maxDrift: number, jumped: Int32Array, grouped?: GroupedPass): void {
  const s = st!;
  const { d, m, anchors, huberH: H, lower, lower3 } = s;
  const soft = temperature > 0 && m > 1;
  const eps = slack(d);
  const nj = bounds || grouped?.valid ? jumped.length : 0;
  const jAnchors = new Float32Array(nj * d);
  for (let q = 0; q < nj; q++) jAnchors.set(anchors.subarray(jumped[q] * d, (jumped[q] + 1) * d), q * d);
  const jumpedRows = { ids: jumped.subarray(0, nj), rows: jAnchors };
  if (tile.jd.length < CHUNK * nj) tile.jd = new Float32Array(CHUNK * nj);
  for (let i0 = range.i0; i0 < range.i1; i0 += CHUNK) {
    const np = Math.min(CHUNK, range.i1 - i0);
    const xs = xRows(i0, np);
    let todo = 0; // points needing the full search, listed in tile.list
    if (grouped) countWork(assignGrouped(kernel!, jKernel!, grouped, jumpedRows, xs, i0, np, anchors, m, d, version, temperature, s, eps));
    else if (bounds) {
      kernel!.distIdx(xs, np, anchors, m, d, s.j1.subarray(i0, i0 + np), tile.dist, version);
      if (soft) kernel!.distIdx(xs, np, anchors, m, d, s.j2.subarray(i0, i0 + np), tile.dist2, version);
      if (nj > 0) jKernel!.dists(xs, np, jAnchors, nj, d, tile.jd);
      for (let p = 0; p < np; p++) {
        const i = i0 + p;
        const a = s.j1[i], b = s.j2[i];
        // Bounds on every anchor but a (l2) and but a and b (l3), jumped anchors exact.
        let l2 = lower[i] * (1 - eps) - maxDrift;
        let l3 = lower3[i] * (1 - eps) - maxDrift;
        for (let q = 0; q < nj; q++) {
          const j = jumped[q];
          if (j === a) continue;
          const e = Math.sqrt(tile.jd[p * nj + q]) * (1 - eps);
          l2 = Math.min(l2, e);
          if (j !== b) l3 = Math.min(l3, e);
        }
        const da = tile.dist[p];
        if (!soft) {
          if (Math.sqrt(da) * (1 + eps) < l2) {
            s.d1[i] = da;
            lower[i] = l2;
            lower3[i] = l3;
            continue;
          }
        } else {
          const db = tile.dist2[p];
          if (Math.sqrt(Math.max(da, db)) * (1 + eps) < l3) {
            const aFirst = da < db || (da === db && a < b);
            s.j1[i] = aFirst ? a : b; s.d1[i] = aFirst ? da : db;
            s.j2[i] = aFirst ? b : a; s.d2[i] = aFirst ? db : da;
            lower[i] = Math.sqrt(s.d2[i]);
            lower3[i] = l3;
            continue;
          }
        }
        tile.list[todo++] = p;
      }
    } else for (let p = 0; p < np; p++) tile.list[todo++] = p;
    if (todo > 0) {
      // Gather the rows to search (all of them without bounds), search, scatter the results.
      let rows = xs;
      if (todo < np) {
        for (let q = 0; q < todo; q++) tile.rows.set(xs.subarray(tile.list[q] * d, (tile.list[q] + 1) * d), q * d);
        rows = tile.rows;
      }
      kernel!.top2(rows, todo, anchors, m, d, tile, version);
      countWork(todo * m);
      for (let q = 0; q < todo; q++) {
        const i = i0 + tile.list[q];
        s.j1[i] = tile.j1[q]; s.d1[i] = tile.d1[q]; s.j2[i] = tile.j2[q]; s.d2[i] = tile.d2[q];
        lower[i] = Math.sqrt(tile.d2[q]);
        lower3[i] = Math.sqrt(tile.d3[q]);
      }
    }
    for (let i = i0; i < i0 + np; i++) {
      const a = s.j1[i], da = s.d1[i], b = s.j2[i], db = s.d2[i];
      // Soft share of the runner-up, then the Huber weight of each side (../engine.ts).
      let w2 = soft ? 1 / (1 + Math.exp((db - da) / temperature)) : 0;
      if (w2 < MIN_SOFT_SHARE) w2 = 0;
      const w1 = 1 - w2;
      const ha = H[a];
      s.w1[i] = w1 * (da <= ha ? 1 : Math.sqrt(ha / da));
      if (w2 > 0) {
        const hb = H[b];
        s.w2[i] = w2 * (db <= hb ? 1 : Math.sqrt(hb / db));
      } else s.w2[i] = 0;
    }
  }
}

/**
 * S[j][k] for k in [k0, k1), in fixed point (../fixed.ts): each term w·x·sScale rounded to an
 * integer, so the sums are exact whatever the order of the points, threads or shards.
 */
function reduce(k0: number, k1: number, sScale: number): void {
  const { n, d, m, j1, j2, w1, w2, sums } = st!;
  if (k1 <= k0) return;
  for (let j = 0; j < m; j++) sums.fill(0, j * d + k0, j * d + k1);
  // By chunks of points, each through its own view; f16 values decoded as they are read (only
  // this worker's dimensions: decoding whole rows would cost every worker all of X).
  for (let c0 = 0; c0 < n; c0 += CHUNK) {
    const np = Math.min(CHUNK, n - c0);
    const x = xStored(c0, np);
    const half = x instanceof Uint16Array;
    for (let p = 0; p < np; p++) {
      const i = c0 + p;
      const xo = p * d;
      let so = j1[i] * d, w = w1[i] * sScale;
      if (half) for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * f16ToF32(x[xo + k]));
      else for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * x[xo + k]);
      w = w2[i] * sScale;
      if (w > 0) {
        so = j2[i] * d;
        if (half) for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * f16ToF32(x[xo + k]));
        else for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * x[xo + k]);
      }
    }
  }
}

/**
 * The same S through the unit sums (`hard`: every point adds round(x·sScale) to its nearest
 * anchor's row, as a weight of 1 does): `hard` is rebuilt, or moved from the last pass by the
 * points that changed anchor (their terms leave the old row and join the new one); then S = hard,
 * corrected for the `weighted` points (a soft share or a Huber weight: their unit term replaced by
 * their two weighted terms). The integers are those reduce() adds up, so S is identical; a settled
 * pass costs O((changed + weighted)·d) instead of O(n·d).
 */
function reduceSplit(k0: number, k1: number, sScale: number, job: SplitReduce): void {
  const { n, d, m, j1, j2, w1, w2, sums } = st!;
  const { hard } = job;
  if (k1 <= k0) return;
  if (job.changed) {
    const { points, from } = job.changed;
    for (let q = 0; q < points.length; q++) {
      const i = points[q], so = from[q] * d, to = j1[i] * d;
      const x = xStored(i, 1);
      const half = x instanceof Uint16Array;
      for (let k = k0; k < k1; k++) {
        const t = Math.round(sScale * (half ? f16ToF32(x[k]) : x[k]));
        hard[so + k] -= t;
        hard[to + k] += t;
      }
    }
  } else {
    for (let j = 0; j < m; j++) hard.fill(0, j * d + k0, j * d + k1);
    // By chunks of points, each through its own view, as reduce() reads them.
    for (let c0 = 0; c0 < n; c0 += CHUNK) {
      const np = Math.min(CHUNK, n - c0);
      const x = xStored(c0, np);
      const half = x instanceof Uint16Array;
      for (let p = 0; p < np; p++) {
        const xo = p * d, so = j1[c0 + p] * d;
        if (half) for (let k = k0; k < k1; k++) hard[so + k] += Math.round(sScale * f16ToF32(x[xo + k]));
        else for (let k = k0; k < k1; k++) hard[so + k] += Math.round(sScale * x[xo + k]);
      }
    }
  }
  if (!job.weighted) return;
  for (let j = 0; j < m; j++) sums.set(hard.subarray(j * d + k0, j * d + k1), j * d + k0);
  const pts = job.weighted;
  for (let q = 0; q < pts.length; q++) {
    const i = pts[q];
    const x = xStored(i, 1);
    const v = (k: number) => (x instanceof Uint16Array ? f16ToF32(x[k]) : x[k]);
    let so = j1[i] * d, w = w1[i] * sScale;
    for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * v(k)) - Math.round(sScale * v(k));
    w = w2[i] * sScale;
    if (w > 0) {
      so = j2[i] * d;
      for (let k = k0; k < k1; k++) sums[so + k] += Math.round(w * v(k));
    }
  }
}

/** Largest |x| of this worker's rows (NaN when one is NaN). */
function maxAbsOfRange(): number {
  let m = 0;
  for (let i0 = range.i0; i0 < range.i1; i0 += CHUNK) {
    const x = xRows(i0, Math.min(CHUNK, range.i1 - i0));
    for (let e = 0; e < x.length; e++) m = Math.max(m, Math.abs(x[e]));
  }
  return m;
}

/** Chunks per kernel call in the seeding passes: few candidates per point, so per-call overhead shows. */
const SEED_BLOCK = 16;

/**
 * k-means++ passes over this worker's chunks. begin: D = dist(x, c); add: D = min(D, dist(x, c));
 * both leave each chunk's Σ D in chunkSums[chunk]. try: chunkSums[chunk·L + l] = Σ min(D, dist(x, c_l)).
 */
function seed(
  step: 'begin' | 'add' | 'try' | 'many', count: number, cands: Float32Array, chunkSums: Float64Array, seedScale: number,
  tryDist?: Float32Array, fromTry = -1, tryL = 0, cacheRows = false,
): void {
  const { d, seedD: D } = st!;
  if (step === 'many') return seedMany(count, cands, chunkSums, seedScale, cacheRows);
  const L = step === 'try' ? count : 1;
  if (tile.dist.length < SEED_BLOCK * CHUNK * L) tile.dist = new Float32Array(SEED_BLOCK * CHUNK * L);
  const dist = tile.dist;
  const cached = step === 'add' && tryDist !== undefined && fromTry >= 0;
  for (let b0 = range.i0, chunk = range.chunk0; b0 < range.i1; b0 += SEED_BLOCK * CHUNK) {
    const nb = Math.min(SEED_BLOCK * CHUNK, range.i1 - b0);
    if (cached) {
      // The added anchor was a candidate of the last try: its distances are already known.
      for (let p = 0; p < nb; p++) dist[p] = tryDist![(b0 + p) * tryL + fromTry];
    } else kernel!.dists(seedRows(b0, nb, cacheRows), nb, cands, L, d, dist);
    if (step === 'try' && tryDist) tryDist.set(dist.subarray(0, nb * L), b0 * L);
    // Sums per chunk of CHUNK points, each D counted as floor(D·seedScale) (exact integers).
    for (let c0 = 0; c0 < nb; c0 += CHUNK, chunk++) {
      const np = Math.min(CHUNK, nb - c0);
      if (step === 'try') {
        for (let l = 0; l < L; l++) {
          let sum = 0;
          for (let p = c0; p < c0 + np; p++) sum += fixedSeed(Math.min(D[b0 + p], dist[p * L + l]), seedScale);
          chunkSums[chunk * L + l] = sum;
        }
      } else {
        let sum = 0;
        for (let p = c0; p < c0 + np; p++) {
          const v = step === 'begin' ? dist[p] : Math.min(D[b0 + p], dist[p]);
          D[b0 + p] = v;
          sum += fixedSeed(v, seedScale);
        }
        chunkSums[chunk] = sum;
      }
    }
  }
}

/** many: D = min(D, nearest of the `count` candidates), by the kernel's top-2 search; chunk sums as add's. */
function seedMany(count: number, cands: Float32Array, chunkSums: Float64Array, seedScale: number, cacheRows: boolean): void {
  const { d, seedD: D } = st!;
  for (let i0 = range.i0, chunk = range.chunk0; i0 < range.i1; i0 += CHUNK, chunk++) {
    const np = Math.min(CHUNK, range.i1 - i0);
    kernel!.top2(seedRows(i0, np, cacheRows), np, cands, count, d, tile);
    let sum = 0;
    for (let p = 0; p < np; p++) {
      const v = Math.min(D[i0 + p], tile.d1[p]);
      D[i0 + p] = v;
      sum += fixedSeed(v, seedScale);
    }
    chunkSums[chunk] = sum;
  }
}

function handle(msg: WorkerRequest): void {
  if (msg.op !== 'seed') seedCache = undefined; // seeding is over (or paused for Lloyd passes): give the memory back
  switch (msg.op) {
    case 'init': {
      const state = fromPortable(msg.state);
      const r = { i0: Math.min(msg.chunk0 * CHUNK, state.n), i1: Math.min(msg.chunk1 * CHUNK, state.n), chunk0: msg.chunk0 };
      engines.set(msg.engine, { st: state, kernel: makeKernel(msg.kernel), jKernel: makeKernel(msg.kernel), range: r, work: msg.work, slot: msg.slot });
      use(msg.engine);
      if (tile.rows.length < CHUNK * state.d) tile.rows = new Float32Array(CHUNK * state.d);
      msg.maxAbs[msg.slot] = maxAbsOfRange();
      return;
    }
    case 'free':
      engines.delete(msg.engine);
      return;
    case 'assign':
      use(msg.engine);
      return assign(msg.version, msg.temperature, msg.bounds, msg.maxDrift, msg.jumped, msg.grouped);
    case 'reduce':
      use(msg.engine);
      if (msg.split) return reduceSplit(msg.k0, msg.k1, msg.sScale, msg.split);
      return reduce(msg.k0, msg.k1, msg.sScale);
    case 'seed':
      use(msg.engine);
      return seed(msg.step, msg.count, msg.cands ?? st!.cands, msg.chunkSums ?? st!.chunkSums, msg.seedScale, msg.tryDist, msg.fromTry, msg.tryL, msg.cacheRows);
    case 'knn':
      knnKernel ??= makeKernel('wasm');
      return knnRange(knnKernel, msg);
    case 'pqSearch':
      // The codes came as their buffer and offsets (a class does not survive postMessage): views remade here.
      return new PqSearcher({ ...msg.index, pq: { ...msg.index.pq, codes: codesOf<Uint8Array>(msg.index.pq.codes as unknown as CodesHandle) } })
        .search(msg.queries, msg.q0, msg.q1, msg.options, msg.out);
  }
}

parentPort!.on('message', (msg: WorkerRequest) => {
  try {
    handle(msg);
    parentPort!.postMessage({ ok: true });
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
