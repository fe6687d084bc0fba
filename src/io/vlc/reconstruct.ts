// Turning a .vlc back into vectors: each vector is its anchor (no residual sections exist yet;
// when they do, this is the one place that adds them).
import type { VlcFile } from './format.js';

/** All n reconstructed vectors, n×d row-major f32. */
export function reconstruct(file: VlcFile): Float32Array {
  const { n, d } = file.manifest;
  const out = new Float32Array(n * d);
  const { anchors, assignments } = file;
  for (let i = 0; i < n; i++) {
    const a = assignments[i] * d;
    out.set(anchors.subarray(a, a + d), i * d);
  }
  return out;
}

/** Vector i's reconstruction, as a view (do not modify). */
export function reconstructRow(file: VlcFile, i: number): Float32Array {
  const d = file.manifest.d;
  const a = file.assignments[i] * d;
  return file.anchors.subarray(a, a + d);
}
