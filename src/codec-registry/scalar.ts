// int8 and int4: the residual quantized with one scale per dimension (codecs/scalar.ts holds the
// coding and its section). d or d/2 code bytes a vector; encoded on the training GPU when the
// backend has the kernels (the same bytes), else on the host's threads; search scores candidates
// straight from the codes.
import { prefaultShared } from '../io/prefault.js';
import type { CandidateScorer } from '../search/types.js';
import { prewarmScalarEncoder, ScalarResiduals, scalarPayloadBytes, type ScalarMode } from '../codecs/scalar.js';
import type { Codec, CodecPlan } from './codec.js';
import { scalarBlockEncoder } from '../codecs/scalar-blocks.js';

/** int8 and int4 share their encoder's threads (the registry's prewarm sees one function). */
function prewarmScalar(_p: CodecPlan, n: number, d: number, sure: boolean): void {
  prewarmScalarEncoder(n * d);
  // The GPU's codes (n·d bytes) land in memory touched while it trains, only when they are sure to be made.
  if (sure) prefaultShared(n * d);
}

function scalarCodec(kind: ScalarMode): Codec<CodecPlan> {
  const bytesPerRow = kind === 'int8' ? 'd' : 'd/2';
  return {
    mode: kind,
    title: `${kind} residuals`,
    coded: true,
    help: `${kind} (one scale per dimension, ${bytesPerRow} bytes/vector)`,
    name: () => kind,
    jsonFields: () => ({}),
    plan: () => ({ mode: kind }),
    candidates: (goal, _shape, perVector) => (goal.kind === 'quality' || perVector({ mode: kind }) <= goal.perVector ? [{ mode: kind }] : []),
    payloadBytes: (_p, n, d) => scalarPayloadBytes(kind, n, d),
    // The codes and the payload are held in pieces (vectors/codes.ts): any n, as memory allows.
    storable: () => true,
    // Measures its error as it codes; on the training GPU when the backend has one (the same bytes).
    encode: (_p, input, { backend }) => backend.encodeScalar(kind, input),
    // Inputs larger than memory: the same bytes, a block of rows at a time.
    blocks: (_p, n, d, anchors) => scalarBlockEncoder(kind, n, d, anchors),
    // Rows spread over MPI ranks: each codes its own, the same bytes (loaded on use: reading a file never loads an encoder).
    // Each rank's rows on its device (its GPU when it has one).
    spread: async (_p, part, peers, { backend }) =>
      (await import('../codecs/spread.js')).spreadScalar(kind, part, peers, (input, scalesFrom, codes) => backend.encodeScalarRows(kind, input, scalesFrom, codes)),
    prewarm: prewarmScalar,
    // int8 keeps nearly everything of the residual: what is left to gain is in smaller cells.
    ...(kind === 'int8' ? { keepsMore: (moreAnchors: number) => `--anchors ${moreAnchors}` } : {}),
    facts: () => undefined,
    scorer: (base, r, file) => ({ scorer: scalarScorer(base.d, file.anchors, file.assignments, r as ScalarResiduals) }),
  };
}

export const int8Codec = scalarCodec('int8');
export const int4Codec = scalarCodec('int4');

/**
 * The distance to anchor + scale·code computed straight from the codes — the same f32 values
 * io/vlc/reconstruct.ts builds (one rounding of anchor + scale·code), the same f64 sum, without a
 * copy of the row per candidate.
 */
function scalarScorer(d: number, anchors: Float32Array, assignments: ArrayLike<number>, r: ScalarResiduals): CandidateScorer {
  const { scales, codes } = r;
  return {
    forQuery: (query) => (id) => {
      const a = assignments[id] * d;
      const c = codes.piece(id), o = codes.pieceStart(id);
      let s = 0;
      for (let k = 0; k < d; k++) {
        const e = query[k] - Math.fround(anchors[a + k] + scales[k] * c[o + k]);
        s += e * e;
      }
      return s;
    },
  };
}
