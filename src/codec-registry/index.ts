// The registry: residual mode -> Codec (codec.ts). compress's --residual / --bytes / --quality, the
// chooser (quality/choose.ts), info and search ask it, never a codec's name. A codec is added by
// one file beside these and one registerCodec call below (docs/architecture.md "Adding a codec").
import { UsageError } from '../errors.js';
import type { Decodable } from '../io/vlc/reconstruct.js';
import type { SearchIndex } from '../search/types.js';
import { registerSection } from '../codecs/sections.js';
import type { CodedResiduals, EncodedResiduals, ResidualInput, ResidualMode, ResidualSection, SpreadEncoded, SpreadPart, SpreadPeers } from '../codecs/types.js';
import { bitsCodec } from './bits.js';
import { ecCodec } from './ec.js';
import type { BlockEncoder, Codec, CodecFacts, CodecPlan, EncodeContext, Goal, IndexBase, ResidualChoice, Shape } from './codec.js';
import { noneCodec } from './none.js';
import { pqCodec } from './pq.js';
import { int4Codec, int8Codec } from './scalar.js';

export type { BlockEncoder, Codec, CodecFacts, CodecFlag, CodecPlan, EncodeContext, Goal, IndexBase, ResidualChoice, Shape } from './codec.js';
export { largestFitting } from './codec.js';

const codecs = new Map<ResidualMode, Codec>();

/**
 * Add a codec; `section` (with the first format version that holds it) for a codec whose section
 * codecs/sections.ts does not list already. Its mode, section tag and flags must be new.
 */
export function registerCodec<P extends CodecPlan>(codec: Codec<P>, section?: { section: ResidualSection; since: number }): void {
  if (codecs.has(codec.mode)) throw new Error(`codec '${codec.mode}' is registered twice`);
  const keys = new Set(allCodecs().flatMap((c) => (c.flags ?? []).map((f) => f.key)));
  const clash = (codec.flags ?? []).find((f) => keys.has(f.key));
  if (clash) throw new Error(`codec '${codec.mode}': option '${clash.key}' belongs to another codec`);
  if (section) registerSection(codec.mode, section.section, section.since);
  codecs.set(codec.mode, codec as unknown as Codec);
}

/** Every codec, in the order registered (the order --help lists them). */
export function allCodecs(): Codec[] {
  return [...codecs.values()];
}

/** The codec of a mode; an unknown one is a usage error listing the known. */
export function codecFor(mode: ResidualMode): Codec {
  const c = codecs.get(mode);
  if (!c) throw new UsageError(`--residual ${mode} is not a residual codec of this vlc; use one of ${[...codecs.keys()].join(', ')}`);
  return c;
}

/** "int4", "pq 32x8", "bits 64B": a plan as messages name it. */
export function codecName(p: CodecPlan): string {
  return codecFor(p.mode).name(p);
}

/** Whether a plan stores residuals (every codec but anchor ids alone). */
export function isCoded(p: CodecPlan): boolean {
  return codecFor(p.mode).coded;
}

/** The JSON fields of every codec for this plan: its own filled in, every other codec's null. */
export function jsonFieldsOf(p: CodecPlan | undefined): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const c of codecs.values()) Object.assign(out, c.jsonFields(p && p.mode === c.mode ? p : undefined));
  return out;
}

/** Bytes of the plan's residual section payload (null: no section). */
export function payloadBytesOf(p: CodecPlan, n: number, d: number, m: number): number | null {
  return codecFor(p.mode).payloadBytes(p, n, d, m);
}

export function storable(p: CodecPlan, n: number, d: number, m: number): boolean {
  return codecFor(p.mode).storable(p, n, d, m);
}

/** Whether rows can be encoded with the plan a block at a time (BlockEncoder), or it encodes nothing. */
export function streamable(p: CodecPlan): boolean {
  const c = codecFor(p.mode);
  return !c.coded || c.blocks !== undefined;
}

/** The plan's encoder of rows in blocks (undefined: it encodes nothing); only for a streamable() plan. */
export function blockEncoderFor(p: CodecPlan, n: number, d: number, anchors: Float32Array): BlockEncoder | undefined {
  const c = codecFor(p.mode);
  if (!c.coded) return undefined;
  if (!c.blocks) throw new Error(`${c.name(p)}: no block encoder`);
  return c.blocks(p, n, d, anchors);
}

/** The plan's encoder of rows spread over processes (MPI ranks), when its codec has one (Codec.spread). */
export function spreadEncoderOf(p: CodecPlan): ((part: SpreadPart, peers: SpreadPeers, ctx: EncodeContext) => Promise<SpreadEncoded>) | undefined {
  const c = codecFor(p.mode);
  return c.coded && c.spread ? (part, peers, ctx) => c.spread!(p, part, peers, ctx) : undefined;
}

/** Encode every vector with the plan (the plan's codec trains what it learns first). */
export function encodeWith(p: CodecPlan, input: ResidualInput, ctx: EncodeContext): Promise<EncodedResiduals> {
  return codecFor(p.mode).encode(p, input, ctx);
}

/** Start the encoders' threads of the plans compress may use, while the GPU trains. */
export function prewarm(options: readonly CodecPlan[], n: number, d: number): void {
  for (const p of options) {
    const c = codecFor(p.mode);
    // "sure": every plan left would use the same encoder (int8 and int4 share one).
    c.prewarm?.(p, n, d, options.every((o) => codecFor(o.mode).prewarm === c.prewarm));
  }
}

/** The codec flags given (by key) that belong to codecs other than `mode`'s: a usage error naming the first. */
export function refuseOtherFlags(o: Partial<ResidualChoice>, mode?: ResidualMode): void {
  for (const c of codecs.values()) {
    if (c.mode === mode) continue;
    const given = (c.flags ?? []).find((f) => o[f.key] !== undefined);
    if (given) throw new UsageError(`${given.flag.split(' ')[0]} applies to ${c.title}; add --residual ${c.mode}`);
  }
}

/** The checks of a fixed choice before anything is read (messages name the CLI's flags). */
export function checkChoice(o: ResidualChoice): void {
  const codec = codecFor(o.residual);
  const sized = allCodecs().filter((c) => c.sizedByBytes);
  if (o.bytes !== undefined && !sized.includes(codec))
    throw new UsageError(
      `--residual ${o.residual} fixes the codec and --bytes chooses one (or, with --residual ${listed(sized.map((c) => c.mode))}, its size): give one of them`,
    );
  refuseOtherFlags(o, o.residual);
  if (o.bytes !== undefined && !(Number.isFinite(o.bytes) && o.bytes > 0))
    throw new UsageError(`--bytes must be a positive number of bytes per vector (got ${o.bytes})`);
  codec.check?.(o);
}

/** "a", "a or b", "a, b or c". */
function listed(words: string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** The plan of a fixed choice, for n×d input and m anchors. */
export function fixedPlan(o: ResidualChoice, shape: Shape): CodecPlan {
  return codecFor(o.residual).plan(o, shape);
}

/** The plans --quality / --bytes measure: each codec's candidates, in registry order (the chooser sorts them by size). */
export function candidatesFor(goal: Goal, shape: Shape, perVector: (p: CodecPlan) => number): CodecPlan[] {
  return allCodecs().flatMap((c) => c.candidates(goal, shape, perVector));
}

/** Whether measuring the plan trains a model first (pq's codebooks): quality/search.ts predicts before it measures. */
export function trainsFirst(p: CodecPlan): boolean {
  return codecFor(p.mode).trains === true;
}

/** The plan's optimistic mean squared error before training (undefined: its codec predicts none). */
export function predictedMse(p: CodecPlan, input: ResidualInput): number | undefined {
  return codecFor(p.mode).predictMse?.(p, input);
}

/** Each codec's largest plan within `budget` bytes per vector, of the codecs that size themselves cheaply to any budget. */
export function plansWithin(budget: number, shape: Shape, perVector: (p: CodecPlan) => number): CodecPlan[] {
  return allCodecs().flatMap((c) => {
    const p = c.trains ? undefined : c.within?.(budget, shape, perVector);
    return p ? [p] : [];
  });
}

/** Each error-sized codec's plan predicted to leave `mse` a vector on `input` (Codec.atError), of the codecs that have one. */
export function plansAtError(mse: number, input: ResidualInput, shape: Shape): CodecPlan[] {
  return allCodecs().flatMap((c) => {
    const p = c.trains ? undefined : c.atError?.(mse, input, shape);
    return p ? [p] : [];
  });
}

/** info's facts of a file's residuals: every codec's key (null but the file's own), and its line. */
export function factsOf(r: CodedResiduals | undefined): { json: Record<string, unknown>; line?: string } {
  const json: Record<string, unknown> = {};
  for (const c of codecs.values()) if (c.factsKey) json[c.factsKey] = null;
  const facts: CodecFacts | undefined = r ? codecFor(r.mode).facts(r) : undefined;
  if (facts) json[facts.key] = facts.json;
  return { json, line: facts?.line };
}

/** Whether a search can score a file's residuals of `mode` a block of rows at a time (Codec.scoresWhole). */
export function scoresInBlocks(mode: ResidualMode): boolean {
  return codecFor(mode).scoresWhole !== true;
}

/** The search's scorer for a file's residuals (undefined: the codec has none of its own; the search decodes rows). */
export function scorerOf(file: Decodable, base: IndexBase): Pick<SearchIndex, 'scorer' | 'pq'> | undefined {
  const r = file.residuals;
  return r ? codecFor(r.mode).scorer?.(base, r, file) : undefined;
}

registerCodec(noneCodec);
registerCodec(int8Codec);
registerCodec(int4Codec);
registerCodec(pqCodec);
registerCodec(bitsCodec);
registerCodec(ecCodec);
