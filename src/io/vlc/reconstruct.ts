// Turning a .vlc back into vectors: each vector is its anchor, plus its decoded residual when the
// file has a residual section (src/codecs/), times its stored norm in a cosine file. The one place that knows how a reconstruction is made.
import { UsageError } from '../../errors.js';
import { computedRows, type RowSource } from '../rows.js';
import type { VlcFile } from './format.js';

/** What decoding needs: a whole file, or the parts compress holds before it writes one. */
export type Decodable = Pick<VlcFile, 'anchors' | 'assignments' | 'residuals'> & { manifest: { d: number }; norms?: Float32Array };

/** Vector i's reconstruction, written into `out` (length d), which is returned. */
export function reconstructInto(file: Decodable, i: number, out: Float32Array): Float32Array {
  const d = file.manifest.d;
  const a = file.assignments[i] * d;
  out.set(file.anchors.subarray(a, a + d));
  file.residuals?.addTo(i, out);
  // A cosine file coded the vector at unit length: its stored norm gives it back its own.
  if (file.norms) scaleRow(out, 0, d, file.norms[i]);
  return out;
}

/** Vectors r0 .. r1 − 1 reconstructed into out (row-major from its start), which is returned. */
export function reconstructRange(file: Decodable, r0: number, r1: number, out: Float32Array): Float32Array {
  const { d } = file.manifest;
  const { anchors, assignments, residuals } = file;
  // One loop over the block, no view per row: what decompress and exhaustive search spend their time in.
  const together = residuals?.addRange !== undefined;
  for (let i = r0, o = 0; i < r1; i++, o += d) {
    const a = assignments[i] * d;
    for (let k = 0; k < d; k++) out[o + k] = anchors[a + k];
    if (!together) residuals?.addTo(i, out, o);
    if (file.norms && !together) scaleRow(out, o, d, file.norms[i]);
  }
  if (together) {
    residuals!.addRange!(r0, r1, out, 0);
    if (file.norms) for (let i = r0, o = 0; i < r1; i++, o += d) scaleRow(out, o, d, file.norms[i]);
  }
  return out;
}

function scaleRow(out: Float32Array, o: number, d: number, s: number): void {
  for (let k = 0; k < d; k++) out[o + k] *= s;
}

/** The reconstruction as rows made on demand, a chunk at a time (decompress writes them so). */
export function reconstructedRows(file: VlcFile): RowSource {
  return computedRows(file.manifest.n, file.manifest.d, (r0, k, out) => reconstructRange(file, r0, r0 + k, out));
}

/** The largest typed array Node allocates (elements). */
const MAX_ARRAY = 2 ** 32 - 1;

/**
 * All n reconstructed vectors, n×d row-major f32 in one array: for files small enough to hold so.
 * A larger file is read a block of rows at a time (reconstructRange, reconstructedRows; openVlc's
 * rows()), or written out by decompress.
 */
export function reconstruct(file: VlcFile): Float32Array {
  const { n, d } = file.manifest;
  if (n * d > MAX_ARRAY)
    throw new UsageError(
      `n × d = ${n} × ${d} = ${n * d} values do not fit one array (at most ${MAX_ARRAY}): read the vectors a block of rows at a time ` +
        `(openVlc(path).rows(r0, r1), or reconstructRange / reconstructedRows), or write them out with \`vlc decompress\`, which does so`,
    );
  return reconstructRange(file, 0, n, new Float32Array(n * d));
}
