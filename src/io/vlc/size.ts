// The size of a .vlc file before it is written, from its shape alone: what `compress --bytes`
// budgets with (one formula, no allocation, whatever n). The encoder (format.ts) is the truth;
// test/format/size.test.ts checks that this agrees with it byte for byte.
import { FILE_HEADER_BYTES, SECTION_HEADER_BYTES } from './format.js';
import { assignmentWidthFor, DTYPE_BYTES, WIDTH_BYTES, type AnchorDtype } from './manifest.js';
import { up8 } from './payload.js';

// Number arithmetic, not `& ~7`: a file of 50,000,000 × 128 int8 codes passes 2^32 bytes.
const align8 = up8;

export interface FileShape {
  n: number;
  d: number;
  m: number;
  anchorDtype: AnchorDtype;
  /** Bytes of the residual section's payload (its codec knows: codec-registry/), null without one. */
  residualPayloadBytes: number | null;
  /** Bytes of the manifest JSON (an upper bound gives an upper bound). */
  manifestBytes: number;
  /** A 'norms' section (metric cosine: n f32). */
  norms?: boolean;
}

/** Bytes of the file: header and manifest, then each section's header and padded payload. */
export function fileBytes(s: FileShape): number {
  const section = (payload: number) => SECTION_HEADER_BYTES + align8(payload);
  return (
    align8(FILE_HEADER_BYTES + s.manifestBytes) +
    section(s.m * s.d * DTYPE_BYTES[s.anchorDtype]) +
    section(s.n * WIDTH_BYTES[assignmentWidthFor(s.m)]) +
    (s.residualPayloadBytes === null ? 0 : section(s.residualPayloadBytes)) +
    (s.norms ? section(s.n * 4) : 0)
  );
}
