// The Codec interface: what a residual codec is to the rest of vlc. A .vlc file stores each vector
// as its anchor id and, optionally, a coded residual r = x − (anchor as stored); a codec is the one
// object that knows everything about one way of coding it — its options and their checks, its
// plan for a byte budget, its exact size, its training and encoding (on the device when the
// backend has kernels for it), its file section (codecs/sections.ts), its search scorer and its
// `info` text. Nothing outside src/codecs/ asks a codec's name: compress, choose, info and search
// go through the registry (index.ts). docs/architecture.md "Adding a codec" says how to add one.
import type { AnnealHooks } from '../anneal/types.js';
import type { Backend } from '../backend/types.js';
import type { Decodable } from '../io/vlc/reconstruct.js';
import type { CandidateScorer, SearchIndex } from '../search/types.js';
import type { CodedResiduals, EncodedResiduals, ResidualInput, ResidualMode } from '../codecs/types.js';
import type { BlockEncoder, SpreadEncoded, SpreadPart, SpreadPeers } from '../codecs/types.js';

export type { BlockEncoder };

/** One codec with its parameters: what a file stores beside each anchor id (each codec adds its own fields). */
export interface CodecPlan {
  readonly mode: ResidualMode;
}

/** The fixed choice of compress's options (--residual MODE, --bytes B, and each codec's own flags by key). */
export interface ResidualChoice {
  residual: ResidualMode;
  /** The whole file's budget in bytes per vector (codecs that size themselves to one: pq, bits). */
  bytes?: number;
  /** Each codec's own options, by key (CodecFlag.key): pq's `pq`, `pqBits`, `pqDims`. */
  [option: string]: unknown;
}

/** The data set's shape, and the exact size of a whole file whose residual section has `payload` bytes (null: none). */
export interface Shape {
  n: number;
  d: number;
  m: number;
  fileBytes: (payload: number | null) => number;
}

/** What --quality / --bytes asks of the codecs measured (quality/choose.ts). */
export type Goal = { kind: 'quality'; recall: number } | { kind: 'bytes'; perVector: number };

/** Where and how a codec encodes: the backend (device kernels, engines for trainers), the seed, Ctrl-C. */
export interface EncodeContext {
  backend: Backend;
  seed: number;
  hooks: AnnealHooks;
}

/** A command-line option a codec owns (`vlc compress --help` lists it under the codec). */
export interface CodecFlag {
  /** Commander's spelling, e.g. '--pq <M>'. */
  flag: string;
  /** The option's key in ResidualChoice / compress()'s options. */
  key: string;
  help: string;
  /** Whole number >= 1, or one of these strings (parsed to a number when numeric). */
  parse: 'positive-integer' | readonly string[];
}

/** What `info` says of a file's residuals: a JSON object under `key`, and a text line. */
export interface CodecFacts {
  key: string;
  json: Record<string, unknown>;
  line: string;
}

/** A file's vectors as a search index sees them, before a codec adds its scorer. */
export type IndexBase = Omit<SearchIndex, 'scorer' | 'pq'>;

export interface Codec<P extends CodecPlan = CodecPlan> {
  /** The --residual name, and the manifest's `residual`. */
  readonly mode: ResidualMode;
  /** What it stores, for --help and messages ("product-quantized residuals"). */
  readonly title: string;
  /** false only for anchor ids alone ('none'). */
  readonly coded: boolean;
  /** Whether --residual MODE --bytes B sizes it to the budget (pq: its subspaces; bits: its code bytes). */
  readonly sizedByBytes?: boolean;
  /** Its own flags (checked by the registry: given without --residual MODE they are refused). */
  readonly flags?: readonly CodecFlag[];
  /** The --residual value names this; --help's line for it. */
  readonly help: string;
  /** How messages name a plan: "int4", "pq 32x8", "bits 64B". */
  name(p: P): string;
  /** JSON fields of compress --json for a plan of this codec (every codec's fields appear, null when not its own). */
  jsonFields(p: P | undefined): Record<string, number | null>;
  /** Checks of the codec's own options before anything is read (messages name the CLI flags). */
  check?(o: ResidualChoice): void;
  /** The plan of a fixed choice (--residual MODE and its options), sized to a --bytes budget when it takes one. */
  plan(o: ResidualChoice, shape: Shape): P;
  /** Plans --quality / --bytes should measure, given the file size per vector of any plan (any codec's). */
  candidates(goal: Goal, shape: Shape, perVector: (p: CodecPlan) => number): P[];
  /**
   * --quality's refinement between two measured sizes (quality/search.ts): this codec's largest
   * plan within `budget` bytes per vector, for a codec cheap to measure at any size (bits);
   * undefined when none fits.
   */
  within?(budget: number, shape: Shape, perVector: (p: CodecPlan) => number): P | undefined;
  /**
   * --quality's error-sized step (quality/search.ts), for a variable-rate codec whose error at a
   * size its sample predicts without coding (ec): the plan predicted to leave `mse` squared error a
   * vector on `input` (the chooser's sample), sized for the whole file (shape.n); undefined when
   * it would code nothing. Cheap (no coding): the search asks it for several errors and measures
   * only the plans it picks.
   */
  atError?(mse: number, input: ResidualInput, shape: Shape): P | undefined;
  /**
   * Measuring a plan trains a model first (pq's codebooks: minutes on a CPU): --quality measures
   * it only when predictMse says it can beat what the cheap codecs measured.
   */
  readonly trains?: boolean;
  /**
   * An optimistic mean squared error per vector (Σ over dimensions) the plan leaves on these
   * vectors, without training: --quality skips the plan when a smaller codec already measured
   * left less error and still missed the goal. Undefined: no prediction (the plan is measured).
   */
  predictMse?(p: P, input: ResidualInput): number | undefined;
  /** Exact bytes of the residual section's payload (null: no section). */
  payloadBytes(p: P, n: number, d: number, m: number): number | null;
  /** Whether the codes of n vectors fit what this codec holds them in (false: the plan is left out with the reason); the built-in codecs hold them in pieces (vectors/codes.ts): any n. */
  storable(p: P, n: number, d: number, m: number): boolean;
  /** Train (when it learns anything) and encode every vector; the residual error measured as it goes. */
  encode(p: P, input: ResidualInput, ctx: EncodeContext): Promise<EncodedResiduals>;
  /**
   * The encoder of rows in blocks (n rows of d, the anchors as stored), when this codec has one:
   * compress then streams inputs of any size through it; without one they are held in memory.
   */
  blocks?(p: P, n: number, d: number, anchors: Float32Array): BlockEncoder;
  /**
   * Encode rows spread over several processes (MPI ranks), each coding its own (`part`), the
   * processes talking through `peers`: the same parameters, codes and error as encode() over the
   * whole data; on the process's device where the codec has a kernel for it (`ctx.backend`).
   * Without it, an MPI compress gathers every row at rank 0 to encode this codec.
   */
  spread?(p: P, part: SpreadPart, peers: SpreadPeers, ctx: EncodeContext): Promise<SpreadEncoded>;
  /** Start what encoding will need (threads) while the GPU trains; `sure`: this codec is the only one that can be chosen. */
  prewarm?(p: P, n: number, d: number, sure: boolean): void;
  /** The options that keep more than this codec when its recall is weak (default: --residual int8 or --quality 0.9). */
  keepsMore?(moreAnchors: number): string;
  /** What `info` says of a file's residuals of this codec. */
  facts(r: CodedResiduals): CodecFacts | undefined;
  /** The key `info --json` files its facts under (null for every other codec's file), if it has facts. */
  readonly factsKey?: string;
  /** Search: distances to candidates from this codec's residuals (default: decode each candidate's row). */
  scorer?(base: IndexBase, r: CodedResiduals, file: Decodable): Pick<SearchIndex, 'scorer' | 'pq'>;
  /**
   * true when the scorer needs every row's codes at once (pq: its codes in list order, for the
   * device's pass): a search of a file read where it lies reads this codec's section whole. Else
   * the scorer is built per block of rows and the search reads each block once (search/block-scan.ts).
   */
  readonly scoresWhole?: boolean;
}

export type { CandidateScorer };

/** The largest k in 1..max with fits(k), given fits(1) and that fits is monotone (a budget's M, R or m). */
export function largestFitting(max: number, fits: (k: number) => boolean): number {
  let lo = 1; // fits
  let hi = max + 1; // first that does not fit, or past the max
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2); // (lo + hi) >> 1 wraps past 2^31: ec's payloads of large inputs
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
