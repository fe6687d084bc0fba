// What every residual codec shares: the coded form's types, the sections a reader knows
// (sections.ts), and the reconstruction error of a coded file. Encoders live in each codec's own
// file; the codecs as objects (options, plans, training, encoding) in codec-registry/.
import { asRows, forEachF32Rows } from '../vectors/dataset.js';
import type { CodedResiduals, ResidualInput } from './types.js';

export type { CodedMode, CodedResiduals, EncodedResiduals, ResidualInput, ResidualMode, ResidualSection, SectionContext, SpreadEncoded, SpreadPart, SpreadPeers } from './types.js';
export { hasResiduals, knownModes, NO_RESIDUAL, registerSection, sectionOf } from './sections.js';

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
