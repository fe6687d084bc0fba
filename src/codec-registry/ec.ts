// Entropy-coded residuals ('ec', --residual ec): the residual quantized with one uniform step on
// the dimensions reverse water-filling keeps (steps.ts), its integer codes rANS-coded under
// per-dimension static models (rans.ts, model.ts) in blocks of rows decodable alone (blocks.ts).
// Variable-rate: a file is sized to a budget (--bytes B: the whole file within B bytes a vector,
// within 1 % below it), or by default to int4's payload, where it keeps far less error than int4.
// The coded form and its section reader (residuals.ts) are what a reader loads; the encoder
// (encode.ts) is loaded when a file is written.
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { prewarmScalarEncoder, scalarPayloadBytes } from '../codecs/scalar.js';
import { largestFitting, type Codec, type CodecPlan } from './codec.js';
import { DEFAULT_BLOCK_ROWS, sectionBytes } from '../codecs/ec/blocks.js';
import { ecPredictor } from '../codecs/ec/predict.js';
import type { EcResiduals } from '../codecs/ec/residuals.js';

export interface EcPlan extends CodecPlan {
  mode: 'ec';
  /** The section payload's budget for `n` vectors, in bytes (the encoder stays at or below it); with `step`, its estimate. */
  payload: number;
  n: number;
  /**
   * --quality's plans (atError): quantize at this step on the plain axes, the models at `scaleBits`,
   * rather than search the step for a budget; the size is the estimate `payload`.
   */
  step?: number;
  scaleBits?: number;
}

/** The least payload: no dimension coded (steps, offset table, each block's lane states and counts). */
export function ecMinPayload(n: number, d: number): number {
  const blocks = Math.ceil(n / DEFAULT_BLOCK_ROWS);
  return sectionBytes(d, blocks, 0, blocks * (32 * 4 + 8));
}

const plan = (payload: number, n: number): EcPlan => ({ mode: 'ec', payload, n });

/**
 * The automatic choice (--quality, the default, and --bytes) offers ec for inputs of up to this
 * many values (n·d). Its encoder runs on the host's cores (at most 16 threads), a cost that grows
 * with n while the GPU encodes the fixed-rate codecs of tens of millions of rows in seconds
 * (bench/results/2026-11-28-h100-r3k-ec-gpu.json: encode_s, then one thread, 1M × 128); past it the
 * chooser says so and measures the others. `--residual ec` codes any size.
 */
export const EC_AUTO_MAX_VALUES = 2 ** 27;

/** Whether the automatic choice offers ec for n × d (and, the first time it does not for this n, why). */
function offered(n: number, d: number): boolean {
  if (n * d <= EC_AUTO_MAX_VALUES) return true;
  if (leftOutFor !== n) {
    leftOutFor = n;
    log().info(`left out ec residuals from the choice: ${n} × ${d} values are more than its host encoder takes in reasonable time (${EC_AUTO_MAX_VALUES}); --residual ec codes them anyway`);
  }
  return false;
}
let leftOutFor = -1;

/** The largest payload for n × d whose file `fits` (null: not even the least one does). */
function payloadFitting(n: number, d: number, fits: (payload: number) => boolean): number | null {
  const least = ecMinPayload(n, d);
  if (!fits(least)) return null;
  return least + largestFitting(8 * n * d + 1, (extra) => fits(least + extra - 1)) - 1; // at most 8 bytes a value: never needed
}

export const ecCodec: Codec<EcPlan> = {
  mode: 'ec',
  title: 'entropy-coded residuals',
  coded: true,
  sizedByBytes: true,
  help: "ec (entropy-coded: a uniform step on the dimensions worth coding, rANS-coded; int4's size or --bytes B)",
  name: (p) => `ec ${(p.payload / Math.max(1, p.n)).toFixed(1)}B`,
  jsonFields: () => ({}),
  factsKey: 'ec',

  plan(o, shape) {
    const { n, d } = shape;
    if (o.bytes === undefined) return plan(Math.max(ecMinPayload(n, d), scalarPayloadBytes('int4', n, d)), n);
    const budget = o.bytes;
    const P = payloadFitting(n, d, (payload) => shape.fileBytes(payload) <= budget * n);
    if (P === null) {
      const least = shape.fileBytes(ecMinPayload(n, d)) / n;
      throw new UsageError(`--bytes ${o.bytes}: the smallest ec file (no dimension coded) takes ${least.toFixed(2)} bytes per vector; raise --bytes, or lower --anchors`);
    }
    return plan(P, n);
  },

  /**
   * --bytes: the whole budget, measured beside the fixed-rate codecs of the same size, from d/8
   * payload bytes a vector on (bits' threshold: below it more anchors are what the chooser tries).
   */
  candidates(goal, { n, d }, perVector) {
    if (goal.kind === 'quality' || !offered(n, d)) return []; // --quality: sized by the error the search asks for (atError)
    const P = payloadFitting(n, d, (payload) => perVector(plan(payload, n)) <= goal.perVector);
    return P === null || P < (n * d) / 8 ? [] : [plan(P, n)];
  },

  /**
   * --quality: the step predicted to leave `mse` a vector on the chooser's sample (codecs/ec/predict.ts),
   * its section estimated for the whole file's n; undefined when it codes nothing.
   */
  atError(mse, input, { n }) {
    if (!offered(n, input.d)) return undefined;
    const pr = ecPredictor(input);
    const at = pr.at(pr.stepFor(mse), n);
    return at.coded === 0 ? undefined : { mode: 'ec', payload: at.bytes, n, step: at.step, scaleBits: at.scaleBits };
  },

  // A plan sized for n vectors, asked of another n (the chooser's sample): the same bytes a vector.
  payloadBytes: (p, n, d) => (n === p.n ? p.payload : Math.max(ecMinPayload(n, d), Math.floor((p.payload * n) / p.n))),
  // Any n: the encoder codes a block of rows at a time, the payload is its head then the blocks
  // (pieces), and a reader views each block where it lies (codecs/ec/residuals.ts), past 4 GiB too.
  storable: () => true,

  // Its passes run on the residual encoders' threads (codecs/ec/encode-blocks.ts): started while the GPU trains.
  prewarm: (_p, n, d) => prewarmScalarEncoder(n * d),

  async encode(p, input) {
    const { encodeEc } = await import('../codecs/ec/encode.js');
    if (p.step !== undefined) {
      const out = await encodeEc(input, { step: p.step }, { rotate: false, scaleBits: p.scaleBits });
      return { residuals: out.residuals, residualEnergy: out.residualEnergy };
    }
    const budget = ecCodec.payloadBytes(p, input.n, input.d, 0)!;
    // The step is searched on estimated sizes; a file that lands over its budget (by a few bytes of
    // escapes or lane states) is coded again against a budget lowered by the excess.
    let target = budget;
    for (let attempt = 0; ; attempt++) {
      const out = await encodeEc(input, { payloadBytes: target });
      const got = out.residuals.payloadBytes();
      if (got <= budget || attempt === 4) {
        if (got > budget) throw new Error(`ec: the payload takes ${got} bytes, over its budget of ${budget}`);
        return { residuals: out.residuals, residualEnergy: out.residualEnergy };
      }
      target -= got - budget + 64;
    }
  },

  facts(res) {
    const r = res as unknown as EcResiduals;
    const { dims, steps, blockRows, scaleBits } = r.layout;
    const step = dims.length ? steps[dims[0]] : 0;
    return {
      key: 'ec',
      json: { coded_dimensions: dims.length, step, block_rows: blockRows, blocks: r.layout.blockAt.length - 1, scale_bits: scaleBits },
      line: `ec: ${dims.length} of ${r.d} dimensions coded, step ${step.toPrecision(4)}, ${r.layout.blockAt.length - 1} block${r.layout.blockAt.length === 2 ? "" : "s"} of ${blockRows} rows`,
    };
  },
};
