// Product-quantized residuals (codecs/pq.ts holds the coded form and its section; codec-train/pq.ts
// trains the codebooks with the annealing quantizer): any rate between anchor ids alone and int4,
// set by M subspaces of 8- or 4-bit codes, optionally on the residual's k leading principal
// directions (--pq-dims). Search scores candidates by asymmetric distances (search/pq-adc.ts).
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { pqAdcData, pqAdcScorer } from '../search/pq-adc.js';
import { PQ_BITS, pqPayloadBytes, type PqBits, type PqResiduals } from '../codecs/pq.js';
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
    if (goal.kind === 'quality') return goal.pq ? [...new Set(PQ_FRACTIONS.map((f) => Math.max(1, Math.round(d / f))))].map((M) => plan(M, 8)) : [];
    // pq stops at d/4 code bytes; where int4 (d/2) fits, pq has lost to it on every set measured,
    // and its M codebook trainings are minutes on a CPU: measured only below int4's size.
    if (perVector({ mode: 'int4' }) <= goal.perVector) return [];
    const fits = (M: number) => perVector(plan(M, 8)) <= goal.perVector;
    return fits(1) ? [plan(largestFitting(Math.max(1, Math.round(d / PQ_FRACTIONS[1])), fits), 8)] : [];
  },

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

  scorer(base, res, file) {
    const pq = pqAdcData(res as PqResiduals, file.anchors, file.assignments, base.lists);
    return { pq, scorer: pqAdcScorer(pq, base.lists, file.assignments) };
  },
};
