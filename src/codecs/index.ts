// The residual codecs by name: which section each one owns, and what every codec shares (the
// reconstruction error of a coded file). Encoders live in each codec's own file; this one is the
// part a reader needs, so reading a .vlc never loads a trainer.
import { asRows, forEachF32Rows } from '../vectors/dataset.js';
import { bitsSection } from './bits.js';
import { pqSection } from './pq.js';
import { scalarSection } from './scalar.js';
import type { CodedMode, CodedResiduals, ResidualInput, ResidualMode, ResidualSection } from './types.js';

export type { CodedMode, CodedResiduals, EncodedResiduals, ResidualInput, ResidualMode, ResidualSection, SectionContext } from './types.js';

export const RESIDUAL_MODES: readonly ResidualMode[] = ['none', 'int8', 'int4', 'pq', 'bits'];

/** The section reader of each coded mode. */
export const RESIDUAL_SECTIONS: Record<CodedMode, ResidualSection> = {
  int8: scalarSection('int8'),
  int4: scalarSection('int4'),
  pq: pqSection,
  bits: bitsSection,
};

/** Mean over vectors of ‖x − (anchor + decoded residual)‖², in f64: the file's true error. */
export function residualMse(r: CodedResiduals, input: ResidualInput): number {
  const { x, n, d, anchors, assign } = input;
  const row = new Float32Array(d); // decoders hold the reconstruction in f32, so measure that
  let sum = 0;
  forEachF32Rows(asRows(x, n, d), 0, n, (v, c0, c1) => {
    for (let i = c0; i < c1; i++) {
      const a = assign[i] * d;
      row.set(anchors.subarray(a, a + d));
      r.addTo(i, row);
      const o = (i - c0) * d;
      for (let k = 0; k < d; k++) {
        const e = v[o + k] - row[k];
        sum += e * e;
      }
    }
  });
  return sum / n;
}
