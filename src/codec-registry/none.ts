// Anchor ids alone: no residual section. Every vector decodes to its anchor; the smallest file,
// and the one the chooser keeps when nothing else fits a budget.
import type { Codec, CodecPlan } from './codec.js';

export const noneCodec: Codec<CodecPlan> = {
  mode: 'none',
  title: 'anchor ids alone',
  coded: false,
  help: 'none (anchor ids alone)',
  name: () => 'none',
  jsonFields: () => ({}),
  plan: () => ({ mode: 'none' }),
  candidates: (goal, _shape, perVector) => (goal.kind === 'quality' || perVector({ mode: 'none' }) <= goal.perVector ? [{ mode: 'none' }] : []),
  payloadBytes: () => null,
  storable: () => true,
  encode: () => Promise.reject(new Error('anchor ids alone have no residuals to encode')),
  keepsMore: () => '--residual int4, --residual int8 or --quality 0.9',
  facts: () => undefined,
};
