// `compress --quality R` and `--bytes B` (and the default, --quality 0.9): which residual codec —
// and, when only anchor ids fit a budget, how many anchors — by measuring each codec on a sample
// of the vectors being compressed. The measure is the one users ask about: recall@10 of exact
// search over the decoded vectors (recall.ts). docs/quality.md explains the choice.
//
//   before training  planChoice: the anchor count, and the codecs worth measuring;
//   after training   choose: encode a sample with each codec, measure, pick:
//     --quality R: the smallest codec whose recall@10 over all n, as the sample predicts it
//                  (measure.ts: a point estimate on SAMPLE.recallQueries queries, its standard
//                  error reported beside it), is at least R, found by search.ts without measuring
//                  every candidate; none reaching it: the best one measured, met = false;
//     --bytes B:   the codec with the highest recall@10 among those whose file fits B bytes per vector
//                  (pq only where int4 does not fit; the bits codec with the most code bytes that
//                  fit, when 1 bit a dimension does).
import type { CodecDevice, ExactKnn } from '../backend/device.js';
import type { CodedResiduals } from '../codecs/types.js';
import { reconstructInto, reconstructRange, type Decodable } from '../io/vlc/reconstruct.js';
import { UsageError } from '../errors.js';
import { allocStore, asRows, rowInto, rows as rowView, type Rows, type VectorsLike } from '../vectors/dataset.js';
import { candidatesFor, codecName, isCoded, jsonFieldsOf, largestFitting, plansAtError, plansWithin, predictedMse, trainsFirst, type CodecPlan, type Goal } from '../codec-registry/index.js';
import { log } from '../log.js';
import { heldRecallPlan, recallPlan, recallSample, sampledRecall, type HeldRows, type RecallSample } from './measure.js';
import { reconstructionQuality, type DecodeRange, type DecodeRow } from './reconstruction.js';
import { searchQuality, type Probe } from './search.js';

export type { CodecPlan, Goal };
export { codecName };

/** Ids-only files with more anchors than n / this stop being a quantization: each anchor would stand for under 4 vectors. */
const MIN_VECTORS_PER_ANCHOR = 4;

/** Anchor ids beyond 65,536 take 4 bytes (docs/quality.md, "The codecs"): the anchor count a budget may raise m to. */
const MAX_BUDGET_ANCHORS = 65536;

export interface ChoicePlan {
  m: number;
  /** Codecs to measure, smallest first. */
  options: CodecPlan[];
}

/**
 * The anchor count and the codecs to measure: every registered codec's candidates for the goal
 * (codec-registry/). `bytesPerVector(codec, m)` is the file's size per vector (an upper bound) for
 * that codec and anchor count; `mGiven` when --anchors fixed m0.
 */
export function planChoice(
  goal: Goal, n: number, d: number, m0: number, mGiven: boolean, bytesPerVector: (c: CodecPlan, m: number) => number,
): ChoicePlan {
  const bySize = (cs: CodecPlan[]) => cs.sort((a, b) => bytesPerVector(a, m0) - bytesPerVector(b, m0));
  const shape = { n, d, m: m0, fileBytes: () => Infinity }; // candidates size themselves through perVector
  const fits = candidatesFor(goal, shape, (c) => bytesPerVector(c, m0));
  if (goal.kind === 'quality' || fits.some(isCoded) || (mGiven && fits.length)) return { m: m0, options: bySize(fits) };
  const budget = goal.perVector;
  const none: CodecPlan = { mode: 'none' };
  const cost = (m: number) => `${bytesPerVector(none, m).toFixed(2)} bytes/vector`;
  if (mGiven) throw new UsageError(`--bytes ${budget} is below the smallest file with --anchors ${m0}: ${cost(m0)} (anchor ids alone); raise --bytes or lower --anchors`);
  // Only anchor ids fit: as many anchors as the budget pays for (closer reconstructions).
  const cap = Math.max(1, Math.min(MAX_BUDGET_ANCHORS, Math.floor(n / MIN_VECTORS_PER_ANCHOR)));
  if (bytesPerVector(none, 1) > budget) throw new UsageError(`--bytes ${budget} is below the smallest file for these vectors: ${cost(1)} (one anchor, ids alone)`);
  return { m: largestFitting(cap, (m) => bytesPerVector(none, m) <= budget), options: [none] };
}

/** What compress trained: the vectors, the anchors as stored, each vector's anchor. */
export interface Trained {
  /** The n×d vectors, read a row or a piece at a time (any size: src/vectors/dataset.ts). */
  x: VectorsLike;
  n: number;
  d: number;
  anchors: Float32Array;
  assignments: Uint32Array;
}

/** A part's decoding: a vector by its position in the part, or positions r0..r1 together (the same bits, no call or view a row). */
export interface PartDecoder {
  row: DecodeRow;
  range: DecodeRange;
  /** Every row of the part into out (the same bits), on the device where the encoder's device decodes. */
  all?: (out: Float32Array) => Promise<void>;
}

/** Encodes the n vectors of a part of the data with one (coded) codec; returns the decoder of that part. */
export type Encoder = (codec: CodecPlan, part: Trained) => Promise<PartDecoder>;

export interface Measured {
  residual: string;
  /** Each codec's parameters (pq_subspaces, pq_bits, pq_dims, bits_code_bytes: codec-registry/), null when not the measured codec's. */
  [codecField: string]: number | string | null;
  bytes_per_vector: number;
  /** recall@10 on the sample (its base: `Choice.sample` vectors). */
  recall_at_10: number | null;
  recall_at_10_se: number | null;
  /** What the sample predicts over all n vectors (measure.ts), and its standard error: what the choice is made on. */
  recall_at_10_all: number | null;
  recall_at_10_all_se: number | null;
  mean_cosine: number;
  relative_error: number;
}

export interface Choice {
  codec: CodecPlan;
  /** Every codec measured, in the order tried, and what it measured. */
  tried: CodecPlan[];
  measured: Measured[];
  /** Whether the chosen codec meets the goal (always, for a budget). */
  met: boolean;
  /** Vectors in the sample the codecs were measured on, and queries among them. */
  sample: number;
  queries: number;
  /** The recall sample with its true neighbours (measure.ts's recallPlan), for measureQuality to reuse. */
  recall: RecallSample;
}

/** Before each measurement: the codec's name, how many were measured, how many the search expects in all. */
export type OnMeasure = (codec: string, done: number, expected: number) => void;

/**
 * `held`: where `all.x` does not hold every row (an MPI rank 0), the rows it does hold (measure.ts
 * HeldRows: measuredRows(n), which has the recall sample's): the same sample, so the same choice.
 * The choice's recall sample is then over the held rows' positions.
 */
export async function choose(
  goal: Goal, plan: ChoicePlan, all: Trained, encode: Encoder, knn: ExactKnn, bytesPerVector: (c: CodecPlan) => number, onMeasure?: OnMeasure,
  held?: HeldRows,
): Promise<Choice> {
  const { n, d } = all;
  const local = held ? heldPart(all, held) : all;
  const { x, n: nx } = local;
  const sample = await recallSample(x, nx, d, held ? heldRecallPlan(n, held.rows) : recallPlan(n), n, knn);
  const part = partOf(local, sample.plan.base);
  const measured: Measured[] = [];
  const tried: CodecPlan[] = [];
  const once = new DecodedOnce(part.n, d);
  const measure = async (codec: CodecPlan): Promise<Probe> => {
    const t0 = performance.now();
    const decodePart = isCoded(codec) ? await encode(codec, part) : partDecoderOf(part);
    const decode: DecodeRow = (i, out) => decodePart.row(part.position(i), out);
    // The part holds the base's rows in the base's order, as f32 (what x's rows read as): over its
    // rows, a range at a time, the figures are those of the base's rows of x one by one, to the bit.
    const range = await once.of(decodePart);
    const rec = reconstructionQuality(part.x, part.n, d, decodePart.row, null, undefined, range);
    const r = await sampledRecall(x, nx, d, decode, sample, knn, false, range);
    const row: Measured = {
      residual: codec.mode,
      ...jsonFieldsOf(codec),
      bytes_per_vector: bytesPerVector(codec),
      recall_at_10: r.recall_at_10,
      recall_at_10_se: r.recall_at_10_se,
      recall_at_10_all: r.recall_at_10_all,
      recall_at_10_all_se: r.recall_at_10_all_se,
      mean_cosine: rec.mean_cosine,
      relative_error: rec.relative_error,
    };
    measured.push(row);
    tried.push(codec);
    log().debug(`measured ${codecName(codec)}: recall@10 ${row.recall_at_10_all?.toFixed(3)} over all, ${row.bytes_per_vector.toFixed(2)} bytes/vector, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
    return { recall: row.recall_at_10_all, mse: rec.mse };
  };
  const base = () => ({ tried, measured, sample: part.n, queries: sample.plan.queries.length, recall: sample });
  const codecOf = (m: Measured) => tried[measured.indexOf(m)];
  if (goal.kind === 'bytes') {
    for (const [i, codec] of plan.options.entries()) {
      onMeasure?.(codecName(codec), i, plan.options.length);
      await measure(codec);
    }
    return { codec: codecOf(best(measured)), met: true, ...base() };
  }
  const input = { x: part.x, n: part.n, d, anchors: part.anchors, assign: part.assignments };
  const shape = { n, d, m: all.anchors.length / d, fileBytes: () => Infinity };
  const found = await searchQuality(goal.recall, plan.options, {
    size: bytesPerVector,
    measure,
    predictMse: (c) => predictedMse(c, input),
    within: (budget) => plansWithin(budget, shape, bytesPerVector),
    atError: (mse) => plansAtError(mse, input, shape),
    onMeasure: (c, done, expected) => onMeasure?.(`${codecName(c)}${trainsFirst(c) ? ' (training it first)' : ''}`, done, expected),
  });
  for (const s of found.skipped)
    log().debug(`--quality: left out ${codecName(s.codec)}: it leaves at least ${s.predictedMse.toPrecision(3)} squared error a vector, and ${codecName(s.beatenBy)} missed the goal with less`);
  if (found.chosen) return { codec: found.chosen, met: true, ...base() };
  return { codec: codecOf(best(measured)), met: false, ...base() };
}

/** Highest recall; ties (and unmeasurable recall) go to the later, larger codec, which keeps more. */
function best(measured: Measured[]): Measured {
  return measured.reduce((b, m) => ((m.recall_at_10_all ?? Infinity) >= (b.recall_at_10_all ?? Infinity) ? m : b));
}

/**
 * The sample's base rows as a data set of their own (what the codecs encode), with the position of
 * each row in it: the codecs are fitted to the sample only, so measuring three costs three
 * encodings of at most SAMPLE.recallBase vectors, not of n.
 */
function partOf(all: Trained, rows: readonly number[] | null): Trained & { position: (row: number) => number } {
  if (rows === null) return { ...all, position: (i) => i };
  const { x, d, anchors, assignments } = all;
  const xs: Rows = { n: rows.length, d, ...allocStore(rows.length, d, 'f32') };
  const xa = asRows(x, all.n, d);
  const as = new Uint32Array(rows.length);
  rows.forEach((i, r) => {
    rowInto(xa, i, rowView(xs, r, r + 1) as Float32Array);
    as[r] = assignments[i];
  });
  // Looked up by the row decoder only, which the measurements read the base without (they decode ranges): made on first use.
  let at: Map<number, number> | undefined;
  return { x: xs, n: rows.length, d, anchors, assignments: as, position: (i) => (at ??= new Map(rows.map((row, r) => [row, r]))).get(i)! };
}

/**
 * A measurement's part decoded once (on the encoder's device where it decodes), for the
 * reconstruction figures and the recall search to read a copy a range: decoding on the host took
 * most of a measurement's host time, twice. The buffer is the choice's, reused. A part of more than
 * DECODE_ONCE_VALUES values is decoded where it is read, twice.
 */
class DecodedOnce {
  private buffer?: Float32Array;

  constructor(private readonly n: number, private readonly d: number) {}

  async of(dec: PartDecoder): Promise<DecodeRange> {
    const { n, d } = this;
    if (n * d > DECODE_ONCE_VALUES) return dec.range;
    const all = (this.buffer ??= new Float32Array(n * d));
    if (dec.all) await dec.all(all);
    else dec.range(0, n, all);
    return (r0, r1, out) => out.set(all.subarray(r0 * d, r1 * d));
  }
}

/** The largest part DecodedOnce holds (f32 values: 256 MiB). */
const DECODE_ONCE_VALUES = 1 << 26;

/** The held rows as a data set of their own, each with its anchor. */
function heldPart(all: Trained, held: HeldRows): Trained {
  return { x: held.x, n: held.rows.length, d: all.d, anchors: all.anchors, assignments: Uint32Array.from(held.rows, (i) => all.assignments[i]) };
}

/**
 * The reconstruction a file of t and these residuals (none: the anchors alone) would give: a vector
 * at a time, a range of them, or (given the device) all of them, decoded where the device decodes.
 */
export function partDecoderOf(t: Trained, residuals?: CodedResiduals, device?: CodecDevice): PartDecoder {
  const f: Decodable = { manifest: { d: t.d }, anchors: t.anchors, assignments: t.assignments, residuals };
  return {
    row: (i, out) => void reconstructInto(f, i, out),
    range: (r0, r1, out) => void reconstructRange(f, r0, r1, out),
    ...(device ? { all: async (out: Float32Array) => void (await device.decodeRows(f, 0, t.n, out)) } : {}),
  };
}
