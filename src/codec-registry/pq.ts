// Product-quantized residuals (codecs/pq.ts holds the coded form and its section; codec-train/pq.ts
// trains the codebooks with the annealing quantizer): any rate between anchor ids alone and int4,
// set by M subspaces of 8- or 4-bit codes, optionally on the residual's k leading principal
// directions (--pq-dims). Search scores candidates by asymmetric distances (search/pq-adc.ts).
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { pqAdcData, pqAdcScorer } from '../search/pq-adc.js';
import { asRows, rowInto } from '../vectors/dataset.js';
import { PQ_BITS, pqPayloadBytes, subspaceBounds, type PqBits, type PqResiduals } from '../codecs/pq.js';
import type { ResidualInput } from '../codecs/types.js';
import { jacobiEigenvalues, type JacobiRule } from '../codecs/eigen.js';
import { largestFitting, type Codec, type CodecPlan, type ResidualChoice } from './codec.js';

export interface PqPlan extends CodecPlan {
  mode: 'pq';
  subspaces: number;
  bits: PqBits;
  /** Principal directions the codes cover (absent: every dimension). */
  dims?: number;
}

/**
 * Subspaces tried for --quality: M = d/8 and d/4 of 8-bit codes (d/8 and d/4 bytes a vector,
 * between anchor ids alone and int4's d/2); each one measured is M codebook trainings on the
 * sample, so a few sizes, not a search over M, and none past d/4, where int4 and int8 take over.
 * Each is measured only when its predicted error (predictMse) can beat what the cheap codecs
 * measured.
 */
const PQ_FRACTIONS = [8, 4] as const;

const pqOpts = (o: ResidualChoice) => ({
  M: o.pq as number | undefined,
  bits: o.pqBits as number | undefined,
  dims: o.pqDims as number | undefined,
});

const plan = (M: number, bits: PqBits, dims = 0): PqPlan => ({ mode: 'pq', subspaces: M, bits, ...(dims ? { dims } : {}) });

export const pqCodec: Codec<PqPlan> = {
  mode: 'pq',
  title: 'product-quantized residuals',
  coded: true,
  sizedByBytes: true,
  help: 'pq (product-quantized: --pq M or --bytes B)',
  flags: [
    { flag: '--pq <M>', key: 'pq', help: 'with --residual pq: M subspaces, one code each per vector (default: d/4, at most d)', parse: 'positive-integer' },
    { flag: '--pq-bits <bits>', key: 'pqBits', help: 'with --residual pq: bits per code, 8 (256 centroids, default) or 4 (16, two codes a byte)', parse: ['8', '4'] },
    {
      flag: '--pq-dims <k>',
      key: 'pqDims',
      help: "with --residual pq: code the residual along its k leading principal directions only (k x d f16 values stored); pays on real data at low rates, where the residual's variance sits in few directions (default: every dimension)",
      parse: 'positive-integer',
    },
  ],
  name: (p) => `pq ${p.subspaces}x${p.bits}${p.dims ? ` on ${p.dims} directions` : ''}`,
  jsonFields: (p) => ({ pq_subspaces: p?.subspaces ?? null, pq_bits: p?.bits ?? null, pq_dims: p?.dims ?? null }),
  factsKey: 'pq',

  check(o) {
    const { M, bits, dims } = pqOpts(o);
    if (M !== undefined && o.bytes !== undefined) throw new UsageError('--pq M and --bytes B both choose the number of subspaces; give one');
    if (M !== undefined && !(Number.isInteger(M) && M >= 1)) throw new UsageError(`--pq must be a whole number >= 1 (got ${M})`);
    if (dims !== undefined && !(Number.isInteger(dims) && dims >= 1)) throw new UsageError(`--pq-dims must be a whole number >= 1 (got ${dims})`);
    if (M !== undefined && dims !== undefined && M > dims)
      throw new UsageError(`--pq ${M} subspaces need at least as many dimensions, but --pq-dims is ${dims}: lower --pq or raise --pq-dims`);
    if (bits !== undefined && !(PQ_BITS as readonly number[]).includes(bits)) throw new UsageError(`--pq-bits must be 8 or 4 (got ${bits})`);
  },

  /** With --bytes, M is the largest whose whole file fits the budget. */
  plan(o, { n, d, m, fileBytes }) {
    const opts = pqOpts(o);
    const bits = (opts.bits ?? 8) as PqBits;
    if (opts.dims !== undefined && opts.dims > d)
      throw new UsageError(`--pq-dims ${opts.dims}: the vectors have d = ${d} dimensions, so at most ${d} directions`);
    const dims = opts.dims ?? 0;
    const D = dims || d; // the dimensions the codes cover
    const what = dims ? `--pq-dims ${dims} directions` : `d = ${d} dimensions`;
    if (opts.M !== undefined) {
      if (opts.M > D) throw new UsageError(`--pq ${opts.M}: the vectors have ${what}, so at most ${D} subspaces`);
      return plan(opts.M, bits, dims);
    }
    if (o.bytes === undefined) return plan(Math.max(1, Math.round(D / 4)), bits, dims);
    const budget = o.bytes;
    const fits = (M: number) => fileBytes(pqPayloadBytes(n, d, m, M, bits, dims)) <= budget * n;
    if (!fits(1)) {
      const least = fileBytes(pqPayloadBytes(n, d, m, 1, bits, dims)) / n;
      throw new UsageError(
        `--bytes ${budget}: the smallest pq file (M = 1${dims ? `, ${dims} directions` : ''}) takes ${least.toFixed(2)} bytes per vector with m = ${m} anchors; ` +
          `raise --bytes, or lower --anchors${dims ? ' or --pq-dims' : ''}`,
      );
    }
    const M = largestFitting(D, fits);
    if (M === D) log().info(`--bytes ${budget} allows more than ${D} subspaces; using M = ${D} (one ${dims ? 'direction' : 'dimension'} per code)`);
    return plan(M, bits, dims);
  },

  candidates(goal, { d }, perVector) {
    if (goal.kind === 'quality') return [...new Set(PQ_FRACTIONS.map((f) => Math.max(1, Math.round(d / f))))].map((M) => plan(M, 8));
    // pq stops at d/4 code bytes; where int4 (d/2) fits, pq has lost to it on every set measured,
    // and its M codebook trainings are minutes on a CPU: measured only below int4's size.
    if (perVector({ mode: 'int4' }) <= goal.perVector) return [];
    const fits = (M: number) => perVector(plan(M, 8)) <= goal.perVector;
    return fits(1) ? [plan(largestFitting(Math.max(1, Math.round(d / PQ_FRACTIONS[1])), fits), 8)] : [];
  },

  trains: true,
  predictMse: (p, input) => (p.dims ? undefined : gaussianBoundMse(input, p.subspaces, p.bits) * OPTIMISM),

  payloadBytes: (p, n, d, m) => pqPayloadBytes(n, d, m, p.subspaces, p.bits, p.dims),
  // The codes and the payload are held in pieces (vectors/codes.ts): any n, as memory allows.
  storable: () => true,

  async encode(p, input, { backend, seed, hooks }) {
    // Loaded on use: the trainer brings the quantizer.
    const { encodePqMeasured } = await import('../codec-train/pq.js');
    return encodePqMeasured(input, backend, { subspaces: p.subspaces, bits: p.bits, dims: p.dims, seed }, hooks);
  },

  facts(res) {
    const r = res as PqResiduals;
    const json = { subspaces: r.M, bits: r.bits, code_bytes: r.bits === 8 ? r.M : Math.ceil(r.M / 2), dims: r.projection ? r.dims : null };
    const line = `pq: M = ${json.subspaces} subspaces, ${json.bits}-bit codes, ${json.code_bytes} bytes/vector${json.dims ? `, on ${json.dims} principal directions` : ''}`;
    return { key: 'pq', json, line };
  },

  // Its device pass scans the codes in list order, all of them at once.
  scoresWhole: true,
  scorer(base, res, file) {
    const pq = pqAdcData(res as PqResiduals, file.anchors, file.assignments, base.lists);
    return { pq, scorer: pqAdcScorer(pq, base.lists, file.assignments) };
  },
};

/** Rows the prediction's covariances are estimated on (evenly spread; all rows when fewer). */
const PREDICT_ROWS = 4096;

/** The subspaces' eigenvalues for the prediction: only the water level depends on them, so a looser stop than pca's. */
const PREDICT_JACOBI: JacobiRule = { sweeps: 60, tolerance: 1e-24, shift: 0 };

/**
 * The prediction is the Gaussian bound below, lowered by this factor: residuals that are not
 * Gaussian can be coded with less error than a Gaussian of the same covariance (Fashion-MNIST's
 * pq beat the bound by about 12%), while on Gaussian-like residuals 256 codewords stay well above
 * it. Lower would train pq where it cannot win (minutes on a CPU); higher would skip pq on real
 * data where it can. The measured ratios: bench/results/2026-11-27-pq-bound-fmnist.json.
 */
const OPTIMISM = 0.75;

/**
 * The least mean squared error per vector a Gaussian with the scaled residuals' covariance can
 * be coded with at `bits` bits per subspace (reverse water-filling on each subspace's
 * eigenvalues: Shannon's rate-distortion bound), times each vector's anchor scale squared, as
 * pq codes them (codecs/train/pq.ts: residuals divided by their anchor's RMS, subspaces of
 * subspaceBounds). No codebook is trained: d·g multiply-adds per sampled row (g = d/M).
 */
export function gaussianBoundMse(input: ResidualInput, M: number, bits: number): number {
  // --quality asks for the same few bounds of one input again and again (quality/search.ts).
  const known = boundsKnown.get(input) ?? new Map<string, number>();
  boundsKnown.set(input, known);
  const key = `${M}/${bits}`;
  if (!known.has(key)) known.set(key, gaussianBound(input, M, bits));
  return known.get(key)!;
}

/** gaussianBoundMse's answers, by input (the same object: the same rows) and M/bits. */
const boundsKnown = new WeakMap<ResidualInput, Map<string, number>>();

function gaussianBound(input: ResidualInput, M: number, bits: number): number {
  const { n, d, anchors, assign } = input;
  if (n === 0) return 0;
  const x = asRows(input.x, n, d);
  const m = anchors.length / d;
  const sq = new Float64Array(m), count = new Float64Array(m);
  const row = new Float32Array(d);
  const residualInto = (i: number, out: Float64Array) => {
    rowInto(x, i, row);
    const a = assign[i] * d;
    let s = 0;
    for (let k = 0; k < d; k++) s += (out[k] = row[k] - anchors[a + k]) ** 2;
    return s;
  };
  const r = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    sq[assign[i]] += residualInto(i, r);
    count[assign[i]]++;
  }
  // The anchors' scales as the trainer makes them (RMS per dimension), and the mean squared scale the error is multiplied by.
  const scale = Float64Array.from(sq, (s, a) => (count[a] ? Math.sqrt(s / (count[a] * d)) : 0));
  let meanScale2 = 0;
  for (let a = 0; a < m; a++) meanScale2 += count[a] * scale[a] ** 2;
  meanScale2 /= n;
  const bounds = subspaceBounds(d, M);
  const s = Math.min(n, PREDICT_ROWS);
  const mean = new Float64Array(d);
  const cross = new Float64Array(d * Math.ceil(d / M)); // per subspace, its g×g second moments (Σ g² <= d·⌈d/M⌉)
  const gOf = (t: number) => bounds[t + 1] - bounds[t];
  for (let j = 0; j < s; j++) {
    const i = Math.floor((j * n) / s);
    residualInto(i, r);
    const sc = scale[assign[i]];
    for (let k = 0; k < d; k++) r[k] = sc > 0 ? r[k] / sc : 0;
    for (let t = 0, o = 0; t < M; t++) {
      const lo = bounds[t], g = gOf(t);
      for (let u = 0; u < g; u++) {
        mean[lo + u] += r[lo + u];
        for (let v = 0; v <= u; v++) cross[o + u * g + v] += r[lo + u] * r[lo + v];
      }
      o += g * g;
    }
  }
  let total = 0;
  for (let t = 0, o = 0; t < M; t++) {
    const lo = bounds[t], g = gOf(t);
    const cov = new Float64Array(g * g);
    for (let u = 0; u < g; u++)
      for (let v = 0; v <= u; v++) cov[u * g + v] = cov[v * g + u] = cross[o + u * g + v] / s - (mean[lo + u] / s) * (mean[lo + v] / s);
    total += waterFill(jacobiEigenvalues(cov, g, PREDICT_JACOBI), bits);
    o += g * g;
  }
  return total * meanScale2;
}

/** Reverse water-filling: the least Σ distortion of independent Gaussians of variances λ at `bits` bits in all. */
export function waterFill(lambda: Float64Array, bits: number): number {
  const top = Math.max(0, ...lambda);
  if (!(top > 0)) return 0;
  const rate = (theta: number) => lambda.reduce((a, l) => a + (l > theta ? 0.5 * Math.log2(l / theta) : 0), 0);
  // rate(top) = 0 and rate(top·2^-2bits) >= bits: bisect log θ between them.
  let lo = Math.log(top) - 2 * bits * Math.LN2, hi = Math.log(top);
  for (let it = 0; it < 100; it++) {
    const mid = (lo + hi) / 2;
    if (rate(Math.exp(mid)) > bits) lo = mid;
    else hi = mid;
  }
  const theta = Math.exp(hi);
  return lambda.reduce((a, l) => a + Math.min(theta, Math.max(0, l)), 0);
}
