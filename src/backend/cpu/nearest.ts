// Engine.nearestOther on the CPU: the anchors assigned against themselves by the SIMD kernel's
// top-2, in tiles of NN_TILE anchors, then the shared top-2 → nearest-other rule.
import { nearestOtherFromTop2, noNearestAnchors } from '../nearest-other.js';
import type { NearestAnchors } from '../types.js';
import type { Kernel } from './kernel.js';

/** Anchors per kernel call: bounds the output buffers (the work is m²·d whatever the tile). */
const NN_TILE = 1024;

/** Each of the m anchors' nearest other anchor (../engine.ts nearestOther), m²·d work on this thread. */
export function nearestOtherOnCpu(kernel: Kernel, anchors: Float32Array, m: number, d: number): NearestAnchors {
  const out = noNearestAnchors(m);
  if (m < 2) return out;
  const t = Math.min(NN_TILE, m);
  const top2 = { j1: new Int32Array(t), d1: new Float32Array(t), j2: new Int32Array(t), d2: new Float32Array(t), d3: new Float32Array(t) };
  for (let a0 = 0; a0 < m; a0 += t) {
    const np = Math.min(t, m - a0);
    kernel.top2(anchors.subarray(a0 * d, (a0 + np) * d), np, anchors, m, d, top2);
    nearestOtherFromTop2(out, a0, np, top2);
  }
  return out;
}
