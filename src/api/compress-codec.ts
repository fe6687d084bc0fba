// What compress stores beyond the anchor ids, and how it is picked: `residual` (--residual) fixes
// the codec (pq with --pq M or --bytes B: residuals.ts); `quality` R / `bytes` B (default: quality
// 0.9) let src/quality/choose.ts measure the codecs on a sample and pick. This file turns the
// options into a goal, sizes files before they exist, encodes, and words the choice and its
// warnings for stderr.
import type { AnnealConfig } from '../anneal/config.js';
import type { AnnealHooks } from '../anneal/types.js';
import type { Backend } from '../backend/types.js';
import type { CodedResiduals, EncodedResiduals } from '../codecs/index.js';
import { checkChoice, codecFor, encodeWith, isCoded, payloadBytesOf, refuseOtherFlags, type ResidualChoice } from '../codec-registry/index.js';
import { UsageError } from '../errors.js';
import { inputDtypeOf, type Dataset } from '../vectors/dataset.js';
import type { AnchorDtype, ResidualMode, VlcManifest } from '../io/vlc/manifest.js';
import { assignmentWidthFor, canonicalManifest } from '../io/vlc/manifest.js';
import { fileBytes } from '../io/vlc/size.js';
import { grouped } from '../io/vlc/stats.js';
import { codecName, partDecoderOf, type Choice, type CodecPlan, type Encoder, type Goal, type Trained } from '../quality/choose.js';
import { reconstructionRows } from '../quality/measure.js';
import type { DecodeRow } from '../quality/reconstruction.js';
import { VERSION } from '../version.js';
import type { Metric } from '../vectors/metric.js';

/**
 * The default goal: recall@10 of exact search over the decoded vectors of at least 0.9, the usual
 * bar of "serves nearest-neighbour search" (ANN benchmarks report at 0.9 and above). The same goal
 * as an explicit --quality 0.9, chosen the same way (quality/search.ts). docs/quality.md.
 */
export const DEFAULT_QUALITY = 0.9;

/** Below this recall@10 a user who fixed --residual is told the decoded vectors hardly serve search. */
const WEAK_RECALL = 0.5;

export type CodecGoal = Goal | { kind: 'fixed'; choice: ResidualChoice };

/**
 * What compress() takes about the codec: at most one of residual, quality and bytes (bytes also
 * with a codec that sizes itself to it: pq, bits), and the codecs' own options (codec-registry/).
 */
export interface CodecOptions {
  /** Store exactly this beside each anchor id: 'none', 'int8', 'int4', 'pq', 'bits' (codec-registry/). */
  residual?: ResidualMode;
  quality?: number;
  /** The whole file's bytes per vector: the best recall within it (or, with residual pq / bits, their size). */
  bytes?: number;
  /** pq: M subspaces (default d/4, or pqDims/4 with a projection). */
  pq?: number;
  /** pq: code the residual's coordinates along this many principal directions (default: every dimension). */
  pqDims?: number;
  /** pq: bits per code, 8 (default) or 4. */
  pqBits?: number;
  /** Options of codecs registered later, by their flags' keys. */
  codecOptions?: Record<string, unknown>;
}

/** The options as the registry takes them: the codec's own by key. */
function choiceOf(o: CodecOptions, residual: ResidualMode): ResidualChoice {
  return { ...o.codecOptions, residual, bytes: o.bytes, pq: o.pq, pqBits: o.pqBits, pqDims: o.pqDims };
}

/** The options as a goal: fixed (--residual), a recall (--quality; the default 0.9) or a budget (--bytes). */
export function goalOf(o: CodecOptions): CodecGoal {
  if (o.residual !== undefined) {
    if (o.quality !== undefined) throw new UsageError('--residual and --quality both say what to store; give one of them');
    const choice = choiceOf(o, o.residual);
    checkChoice(choice);
    return { kind: 'fixed', choice };
  }
  refuseOtherFlags(choiceOf(o, 'none'));
  if (o.quality !== undefined && o.bytes !== undefined) throw new UsageError('--quality and --bytes both say what to store; give one of them');
  if (o.bytes !== undefined) return { kind: 'bytes', perVector: parseBytes(String(o.bytes)) };
  // The default is --quality 0.9 itself: the same candidates and the same search (quality/search.ts).
  return { kind: 'quality', recall: o.quality === undefined ? DEFAULT_QUALITY : parseQuality(String(o.quality)) };
}

/** --quality R: a recall@10 in (0, 1]. */
export function parseQuality(v: string): number {
  const x = Number(v.trim());
  if (!(v.trim() !== '' && x > 0 && x <= 1)) throw new UsageError(`--quality is the recall@10 to reach, a number in (0, 1] such as 0.9 (got '${v}')`);
  return x;
}

/** --bytes B: bytes per vector, every section counted. */
export function parseBytes(v: string): number {
  const x = Number(v.trim());
  if (!(v.trim() !== '' && x > 0 && Number.isFinite(x))) throw new UsageError(`--bytes must be a positive number of bytes per vector (got '${v}')`);
  return x;
}

/** The pieces of the manifest compress knows before training, and those it learns after. */
export interface ManifestFacts {
  ds: Dataset;
  /** Default l2. */
  metric?: Metric;
  m: number;
  anchorDtype: AnchorDtype;
  residual: ResidualMode;
  residualEnergy?: number;
  training: VlcManifest['training'];
  quality: NonNullable<VlcManifest['quality']>;
  cfg: AnnealConfig;
  /** Rows the annealing loop trained on (n, or the --sample; api/train.ts). */
  sampleRows: number;
  seed: number;
  device: 'cpu' | 'cuda';
}

export function manifestOf(f: ManifestFacts): Omit<VlcManifest, 'sections' | 'assignmentWidth'> {
  return {
    n: f.ds.n,
    d: f.ds.d,
    m: f.m,
    metric: f.metric ?? 'l2',
    anchorDtype: f.anchorDtype,
    residual: f.residual,
    ...(f.residualEnergy !== undefined ? { residualEnergy: f.residualEnergy } : {}),
    input: { dtype: inputDtypeOf(f.ds), dropped: f.ds.dropped, ...(f.ds.droppedRows?.length ? { droppedRows: f.ds.droppedRows } : {}) },
    training: f.training,
    quality: f.quality,
    // The loop's configuration, and the rows it trained on (every row, or the --sample).
    config: { ...f.cfg, sampleRows: f.sampleRows },
    seed: f.seed,
    tool: { name: 'vlc', version: VERSION },
    device: f.device,
  };
}

/** The longest a JavaScript number prints (sign, 17 digits, point, exponent). */
const LONGEST_NUMBER = -1.2345678901234567e-123;

/**
 * The file's size before training, for any codec and anchor count: the manifest is sized with the
 * longest numbers it can hold, so these are upper bounds (and exact for the sections).
 * `withPayload(bytes, m, residual)`: the whole file with a residual section of that payload (null: none);
 * `perVector(codec, m)`: bytes per vector with that codec.
 */
export function sizer(f: Omit<ManifestFacts, 'm' | 'residual' | 'training' | 'quality' | 'residualEnergy'>) {
  const { n, d } = f.ds;
  const x = LONGEST_NUMBER;
  const manifestBytes = (m: number, residual: ResidualMode) => {
    const manifest = manifestOf({
      ...f, m, residual, residualEnergy: x,
      training: { energy: x, iterations: f.cfg.maxIters, initIterations: f.cfg.maxIters, converged: false, init: 'kmeans++' },
      quality: { mse: x, relativeError: x, meanCosine: x, vectors: n, recallAt10: x, recallAt10All: x, recallAt10AllLow: x, recallAt10AllHigh: x, recallQueries: n, recallBase: n },
    });
    const sections = ['anchors', 'assignments', 'residuals', ...(f.metric === 'cosine' ? ['norms'] : [])];
    return new TextEncoder().encode(JSON.stringify(canonicalManifest({ ...manifest, assignmentWidth: assignmentWidthFor(m), sections }))).length;
  };
  const withPayload = (payload: number | null, m: number, residual: ResidualMode) =>
    fileBytes({ n, d, m, anchorDtype: f.anchorDtype, residualPayloadBytes: payload, manifestBytes: manifestBytes(m, residual), norms: f.metric === 'cosine' });
  return {
    withPayload,
    perVector: (codec: CodecPlan, m: number) => withPayload(payloadBytesOf(codec, n, d, m), m, codec.mode) / n,
  };
}

const inputOf = (t: Trained) => ({ x: t.x, n: t.n, d: t.d, anchors: t.anchors, assign: t.assignments });

/** The codecs as choose.ts measures them: pq trains its codebooks on the backend in use. */
export function encoderOn(backend: Backend, seed: number, hooks: AnnealHooks): Encoder {
  return async (codec, t) => partDecoderOf(t, (await encodeWith(codec, inputOf(t), { backend, seed, hooks })).residuals, backend);
}

export function decoderOf(t: Trained, residuals?: CodedResiduals): DecodeRow {
  return partDecoderOf(t, residuals).row;
}

/**
 * Residuals of every vector with the chosen codec, and the exact mean squared error they leave;
 * also the reconstruction figures of the quality sample when the encoder made them on its way.
 */
export async function encodeAll(
  codec: CodecPlan, t: Trained, backend: Backend, seed: number, hooks: AnnealHooks,
): Promise<Partial<EncodedResiduals>> {
  if (!isCoded(codec)) return {};
  return encodeWith(codec, { ...inputOf(t), measureRows: reconstructionRows(t.n) }, { backend, seed, hooks });
}

const r3 = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));

/**
 * "chose bits 29B residuals for --quality 0.9: recall@10 0.911 ± 0.005 of exact search over the
 * decoded vectors, 1,000 queries among all 2,000 vectors, 38.95 bytes/vector (tried: none 0.412, …)".
 * When the sample is not every vector, the figures are those of the sample, encoded alone
 * ("1,000 queries among a sample of 65,536 encoded alone; its prediction over all 200,000, 0.912 ±
 * 0.003, reached 0.9"): the one figure over all n is the file's own, on the summary line.
 */
export function choiceLine(goal: Goal, c: Choice, fileBytesPerVector?: number): string {
  const chosen = c.measured[c.tried.indexOf(c.codec)];
  const what = isCoded(c.codec) ? `${codecName(c.codec)} residuals` : 'anchor ids alone';
  const target = goal.kind === 'quality' ? `--quality ${goal.recall}` : `--bytes ${goal.perVector}`;
  const n = c.recall.n;
  const whole = c.sample === n;
  const others = c.measured.length > 1 ? ` (tried${whole ? '' : ', on the sample'}: ${c.measured.map((x, i) => `${codecName(c.tried[i])} ${r3(whole ? x.recall_at_10_all : x.recall_at_10)}`).join(', ')})` : '';
  const verdict =
    goal.kind !== 'quality' ? '' : `; its prediction over all ${grouped(n)}, ${r3(chosen.recall_at_10_all)} ± ${r3(chosen.recall_at_10_all_se)}, ${c.met ? 'reached' : 'missed'} ${goal.recall}`;
  const where = whole
    ? `${grouped(c.queries)} queries among all ${grouped(n)} vectors`
    : `${grouped(c.queries)} queries among a sample of ${grouped(c.sample)} encoded alone${verdict}`;
  const [r, se] = whole ? [chosen.recall_at_10_all, chosen.recall_at_10_all_se] : [chosen.recall_at_10, chosen.recall_at_10_se];
  return (
    `chose ${what} for ${target}: recall@10 ${r3(r)} ± ${r3(se)} of exact search over the decoded vectors, ` +
    `${where}, ${(fileBytesPerVector ?? chosen.bytes_per_vector).toFixed(2)} bytes/vector${others}`
  );
}

/** The warning when the data defeat the goal (or a fixed codec keeps too little), with the option that helps; undefined when all is well. */
export function qualityWarning(goal: CodecGoal, c: Choice | undefined, recall: number | null, m: number, n: number, defaulted: boolean): string | undefined {
  const moreAnchors = Math.min(n, 65536, m * 4);
  if (goal.kind === 'quality' && c && !c.met) {
    const what = defaulted ? `the default goal (recall@10 >= ${goal.recall} of search over the decoded vectors)` : `--quality ${goal.recall}`;
    return (
      `no codec reaches ${what} on these vectors: the best, ${codecName(c.codec)}, measured ${r3(recall)}; ` +
      (moreAnchors > m ? `more anchors leave smaller residuals: try --anchors ${moreAnchors}` : 'the file keeps the best codec')
    );
  }
  if (goal.kind === 'bytes' && recall !== null && recall < WEAK_RECALL) {
    return `recall@10 of search over the decoded vectors is ${r3(recall)} within --bytes ${goal.perVector}: they keep few true neighbours; a larger --bytes, or --quality 0.9 (the smallest file that keeps 0.9), keeps more`;
  }
  if (goal.kind === 'fixed' && recall !== null && recall < WEAK_RECALL) {
    const better = codecFor(goal.choice.residual).keepsMore?.(moreAnchors) ?? '--residual int8 or --quality 0.9';
    return `recall@10 of search over the decoded vectors is ${r3(recall)}: they keep few true neighbours; ${better} keeps more`;
  }
  return undefined;
}
