// Bit-allocated scalar residuals (codecs/bits.ts holds the coded form and its section,
// codecs/bits-train.ts the allocation): 0 to 8 bits per dimension where they remove the most
// error, R code bytes a vector (d/2 by default, or the most that fit --bytes B).
import { UsageError } from '../errors.js';
import { log } from '../log.js';
import { bitsPayloadBytes, type BitsResiduals } from '../codecs/bits.js';
import { largestFitting, type Codec, type CodecPlan } from './codec.js';

export interface BitsPlan extends CodecPlan {
  mode: 'bits';
  codeBytes: number;
}

const plan = (R: number): BitsPlan => ({ mode: 'bits', codeBytes: R });

/** --quality's ladder, in eighths of d code bytes (1 to 7 bits a dimension on average). */
const QUALITY_EIGHTHS = [1, 2, 3, 4, 5, 6, 7];

export const bitsCodec: Codec<BitsPlan> = {
  mode: 'bits',
  title: 'bit-allocated residuals',
  coded: true,
  sizedByBytes: true,
  help: 'bits (0-8 bits per dimension, allocated where they remove the most error: d/2 bytes/vector or --bytes B)',
  name: (p) => `bits ${p.codeBytes}B`,
  jsonFields: (p) => ({ bits_code_bytes: p?.codeBytes ?? null }),
  factsKey: 'bits',

  /** The most code bytes per vector (at most d: 8 bits a dimension) within --bytes; without it, d/2 (int4's size). */
  plan(o, { n, d, fileBytes }) {
    if (o.bytes === undefined) return plan(Math.ceil(d / 2));
    const budget = o.bytes;
    const fits = (R: number) => fileBytes(bitsPayloadBytes(n, d, R)) <= budget * n;
    if (!fits(1)) {
      const least = fileBytes(bitsPayloadBytes(n, d, 1)) / n;
      throw new UsageError(`--bytes ${budget}: the smallest bits file (1 code byte) takes ${least.toFixed(2)} bytes per vector; raise --bytes, or lower --anchors`);
    }
    const R = largestFitting(d, fits); // d code bytes: 8 bits a dimension, never more
    if (R === d) log().info(`--bytes ${budget} allows 8 bits for every dimension; using ${d} code bytes (int8's size)`);
    return plan(R);
  },

  /**
   * --quality: a ladder of sizes between anchor ids alone and int8, which quality/search.ts brackets
   * the goal on and then refines (within); int4's and int8's own sizes are left to them.
   * --bytes: the most code bytes that fit, from 1 bit a dimension (d/8 bytes) on; below it, the
   * anchors (or pq) keep more.
   */
  candidates(goal, { d }, perVector) {
    if (goal.kind === 'quality') {
      const sizes = QUALITY_EIGHTHS.map((k) => Math.max(1, Math.round((k * d) / 8)));
      return [...new Set(sizes)].filter((R) => R !== Math.ceil(d / 2) && R < d).map(plan);
    }
    const fits = (R: number) => perVector(plan(R)) <= goal.perVector;
    return fits(Math.ceil(d / 8)) ? [plan(largestFitting(d, fits))] : [];
  },

  within(budget, { d }, perVector) {
    const fits = (R: number) => perVector(plan(R)) <= budget;
    return fits(1) ? plan(largestFitting(d, fits)) : undefined;
  },

  payloadBytes: (p, n, d) => bitsPayloadBytes(n, d, p.codeBytes),
  // The codes and the payload are held in pieces (vectors/codes.ts): any n, as memory allows.
  storable: () => true,

  async encode(p, input, { backend }) {
    // The bits and steps chosen on the host's sample, then the rows on the training GPU when the backend has one, else on the host's threads.
    return backend.encodeBits(input, p.codeBytes);
  },

  // Rows spread over MPI ranks: each codes its own (on its GPU when it has one), the same bytes (loaded on use, as the encoder is).
  spread: async (p, part, peers, { backend }) =>
    (await import('../codecs/spread.js')).spreadBits(p.codeBytes, part, peers, (input, plan, codes) => backend.encodeBitsRows(input, plan, codes)),

  facts(res) {
    const r = res as BitsResiduals;
    const dimensions_by_bits = new Array<number>(9).fill(0);
    for (const b of r.bits) dimensions_by_bits[b]++;
    const widths = dimensions_by_bits.map((c, b) => (c ? `${b}:${c}` : '')).filter(Boolean).join(' ');
    return { key: 'bits', json: { code_bytes: r.R, dimensions_by_bits }, line: `bits: ${r.R} code bytes/vector; dimensions by width ${widths} (bits:dimensions)` };
  },
};
