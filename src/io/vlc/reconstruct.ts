// Turning a .vlc back into vectors: each vector is its anchor, plus its decoded residual when the
// file has a residual section (src/codecs/). The one place that knows how a reconstruction is made.
import type { VlcFile } from './format.js';

/** Vector i's reconstruction, written into `out` (length d), which is returned. */
export function reconstructInto(file: VlcFile, i: number, out: Float32Array): Float32Array {
  const d = file.manifest.d;
  const a = file.assignments[i] * d;
  out.set(file.anchors.subarray(a, a + d));
  file.residuals?.addTo(i, out);
  return out;
}

/** All n reconstructed vectors, n×d row-major f32. */
export function reconstruct(file: VlcFile): Float32Array {
  const { n, d } = file.manifest;
  const out = new Float32Array(n * d);
  for (let i = 0; i < n; i++) reconstructInto(file, i, out.subarray(i * d, (i + 1) * d));
  return out;
}
