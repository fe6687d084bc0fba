// What the ec codec tests share: a section's payload in one array, and every row decoded.
import type { EcResiduals } from '../../dist/codecs/ec/residuals.js';

/** The section's payload parts joined into one array. */
export function joined(res: EcResiduals): Uint8Array {
  const parts = res.payload();
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}

/** Every row's reconstruction through addTo (its anchor, then the residual added). */
export function decoded(res: EcResiduals, input: { n: number; d: number; anchors: Float32Array; assign: Uint32Array }): Float32Array {
  const { n, d, anchors, assign } = input;
  const out = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    out.set(anchors.subarray(assign[i] * d, assign[i] * d + d), i * d);
    res.addTo(i, out, i * d);
  }
  return out;
}
