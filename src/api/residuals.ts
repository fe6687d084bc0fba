// compress()'s fixed residual choices — residual mode, pq subspaces and bits, byte budget — their
// validation, the choice of M from a byte budget, the size of each codec's section, and the
// encoding itself (src/codecs/). Choosing the codec by measurement: compress-codec.ts.
import type { AnnealHooks } from '../anneal/types.js';
import type { Backend } from '../backend/types.js';
import type { CodedMode, EncodedResiduals, ResidualInput, ResidualMode } from '../codecs/index.js';
import { bitsPayloadBytes } from '../codecs/bits.js';
import { PQ_BITS, pqPayloadBytes, type PqBits } from '../codecs/pq.js';
import { encodeScalar, scalarPayloadBytes } from '../codecs/scalar.js';
import { UsageError } from '../errors.js';
import { MAX_TYPED_ELEMENTS } from '../vectors/dataset.js';
import { log } from '../log.js';
import { largestFitting, type CodecPlan } from '../quality/choose.js';

/** The residual options of compress() (the CLI's --residual, --pq, --pq-bits, --pq-dims, --bytes). */
export interface ResidualChoice {
  residual: ResidualMode;
  /** pq: M subspaces (default d/4, or dims/4 with a projection). */
  pq?: number;
  /** pq: code the residual's coordinates along this many principal directions (default: none, every dimension). */
  pqDims?: number;
  /** pq: bits per code, 8 (default) or 4. */
  pqBits?: number;
  /** pq: the largest M, bits: the most code bytes, whose whole file stays within this many bytes per vector. */
  bytes?: number;
}

/** What compress will encode, once the input's size is known. */
export type ResidualPlan = CodecPlan;

/** The pq-only flags (--pq, --pq-bits, --pq-dims) given without --residual pq: a usage error naming the first. */
export function refusePqFlags(o: Partial<ResidualChoice>): void {
  const given = (['pq', 'pqBits', 'pqDims'] as const).find((k) => o[k] !== undefined);
  if (given) throw new UsageError(`${{ pq: '--pq', pqBits: '--pq-bits', pqDims: '--pq-dims' }[given]} applies to product-quantized residuals; add --residual pq`);
}

/** The choices' contradictions, before anything is read (messages name the CLI's flags). */
export function checkResidualChoice(o: ResidualChoice): void {
  if (o.bytes !== undefined && o.residual !== undefined && o.residual !== 'pq' && o.residual !== 'bits')
    throw new UsageError(`--residual ${o.residual} fixes the codec and --bytes chooses one (or, with --residual pq or bits, its size): give one of them`);
  if (o.residual !== 'pq') refusePqFlags(o);
  if (o.pq !== undefined && o.bytes !== undefined) throw new UsageError('--pq M and --bytes B both choose the number of subspaces; give one');
  if (o.pq !== undefined && !(Number.isInteger(o.pq) && o.pq >= 1)) throw new UsageError(`--pq must be a whole number >= 1 (got ${o.pq})`);
  if (o.pqDims !== undefined && !(Number.isInteger(o.pqDims) && o.pqDims >= 1)) throw new UsageError(`--pq-dims must be a whole number >= 1 (got ${o.pqDims})`);
  if (o.pq !== undefined && o.pqDims !== undefined && o.pq > o.pqDims)
    throw new UsageError(`--pq ${o.pq} subspaces need at least as many dimensions, but --pq-dims is ${o.pqDims}: lower --pq or raise --pq-dims`);
  if (o.bytes !== undefined && !(Number.isFinite(o.bytes) && o.bytes > 0))
    throw new UsageError(`--bytes must be a positive number of bytes per vector (got ${o.bytes})`);
  if (o.pqBits !== undefined && !(PQ_BITS as readonly number[]).includes(o.pqBits)) throw new UsageError(`--pq-bits must be 8 or 4 (got ${o.pqBits})`);
}

/**
 * The plan for n×d input and m anchors. With --bytes, M is the largest whose file fits the budget
 * (`fileBytes(payload)` is the exact size of the file with a residual section of that payload).
 */
export function planResiduals(o: ResidualChoice, n: number, d: number, m: number, fileBytes: (payloadBytes: number) => number): ResidualPlan {
  if (o.residual === 'bits') return planBits(o.bytes, n, d, fileBytes);
  if (o.residual !== 'pq') return { mode: o.residual };
  const bits = (o.pqBits ?? 8) as PqBits;
  if (o.pqDims !== undefined && o.pqDims > d)
    throw new UsageError(`--pq-dims ${o.pqDims}: the vectors have d = ${d} dimensions, so at most ${d} directions`);
  const dims = o.pqDims ?? 0;
  const D = dims || d; // the dimensions the codes cover
  const plan = (M: number): ResidualPlan => ({ mode: 'pq', subspaces: M, bits, ...(dims ? { dims } : {}) });
  const what = dims ? `--pq-dims ${dims} directions` : `d = ${d} dimensions`;
  if (o.pq !== undefined) {
    if (o.pq > D) throw new UsageError(`--pq ${o.pq}: the vectors have ${what}, so at most ${D} subspaces`);
    return plan(o.pq);
  }
  if (o.bytes === undefined) return plan(Math.max(1, Math.round(D / 4)));
  const fits = (M: number) => fileBytes(pqPayloadBytes(n, d, m, M, bits, dims)) <= o.bytes! * n;
  if (!fits(1)) {
    const least = fileBytes(pqPayloadBytes(n, d, m, 1, bits, dims)) / n;
    throw new UsageError(
      `--bytes ${o.bytes}: the smallest pq file (M = 1${dims ? `, ${dims} directions` : ''}) takes ${least.toFixed(2)} bytes per vector with m = ${m} anchors; ` +
        `raise --bytes, or lower --anchors${dims ? ' or --pq-dims' : ''}`,
    );
  }
  const M = largestFitting(D, fits);
  if (M === D) log().info(`--bytes ${o.bytes} allows more than ${D} subspaces; using M = ${D} (one ${dims ? 'direction' : 'dimension'} per code)`);
  return plan(M);
}

/** bits: the most code bytes per vector (at most d: 8 bits a dimension) within --bytes; without it, d/2 (int4's size). */
function planBits(bytes: number | undefined, n: number, d: number, fileBytes: (payloadBytes: number) => number): ResidualPlan {
  if (bytes === undefined) return { mode: 'bits', codeBytes: Math.ceil(d / 2) };
  const fits = (R: number) => fileBytes(bitsPayloadBytes(n, d, R)) <= bytes * n;
  if (!fits(1)) {
    const least = fileBytes(bitsPayloadBytes(n, d, 1)) / n;
    throw new UsageError(`--bytes ${bytes}: the smallest bits file (1 code byte) takes ${least.toFixed(2)} bytes per vector; raise --bytes, or lower --anchors`);
  }
  const R = largestFitting(d, fits); // d code bytes: 8 bits a dimension, never more
  if (R === d) log().info(`--bytes ${bytes} allows 8 bits for every dimension; using ${d} code bytes (int8's size)`);
  return { mode: 'bits', codeBytes: R };
}

/** Bytes of the residual section's payload for a plan (null: no section). */
export function residualPayloadBytes(plan: ResidualPlan, n: number, d: number, m: number): number | null {
  if (plan.mode === 'none') return null;
  if (plan.mode === 'pq') return pqPayloadBytes(n, d, m, plan.subspaces, plan.bits, plan.dims);
  if (plan.mode === 'bits') return bitsPayloadBytes(n, d, plan.codeBytes);
  return scalarPayloadBytes(plan.mode, n, d);
}

/**
 * Whether a codec's codes fit the one typed array each codec holds them in (and its section
 * payload one buffer): at most 2^32 − 1 elements — n·d codes for int8/int4, n·M for pq, n·R bytes for bits.
 */
export function storableCodec(plan: ResidualPlan, n: number, d: number, m: number): boolean {
  if (plan.mode === 'none') return true;
  const codes = plan.mode === 'pq' ? n * plan.subspaces : plan.mode === 'bits' ? n * plan.codeBytes : n * d;
  return codes <= MAX_TYPED_ELEMENTS && (residualPayloadBytes(plan, n, d, m) ?? 0) <= MAX_TYPED_ELEMENTS;
}

/** Encode the residuals of the plan (residuals against the anchors as stored) and measure their error. */
export async function encodeResiduals(
  plan: Exclude<ResidualPlan, { mode: 'none' }>,
  input: ResidualInput,
  backend: Backend,
  seed: number,
  hooks: AnnealHooks,
): Promise<EncodedResiduals> {
  if (plan.mode === 'bits') {
    // The bits and steps chosen on the host's sample, then the rows on the training GPU when the backend has one, else on the host's threads.
    if (backend.encodeBits) return backend.encodeBits(input, plan.codeBytes);
    const { encodeBits } = await import('../codecs/bits-train.js');
    return encodeBits(input, plan.codeBytes);
  }
  // Measures its error as it codes; on the training GPU when the backend has one (the same bytes).
  if (plan.mode !== 'pq') return backend.encodeScalar ? backend.encodeScalar(plan.mode, input) : encodeScalar(plan.mode, input);
  // Loaded on use: the trainer brings the quantizer.
  const { encodePqMeasured } = await import('../codecs/train/pq.js');
  return encodePqMeasured(input, backend, { subspaces: plan.subspaces, bits: plan.bits, dims: plan.dims, seed }, hooks);
}
