// What the ec codec tests share: a mixture to code, a section's payload in one array, and every row decoded.
import type { EcResiduals } from '../../dist/codecs/ec/residuals.js';
import { rng } from '../rng.js';

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

/** n × d mixture: m Gaussian anchors, residual spreads falling with the dimension (the last ones ~0). */
export function mixture(n: number, d: number, m: number, seed: number, outliers = 0) {
  const r = rng(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const anchors = Float32Array.from({ length: m * d }, g);
  const x = new Float32Array(n * d), assign = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const a = (assign[i] = Math.floor(r() * m));
    for (let k = 0; k < d; k++) x[i * d + k] = anchors[a * d + k] + 0.3 * Math.exp(-k / 8) * g() + (r() < outliers ? 40 * g() : 0);
  }
  return { x, n, d, anchors, assign };
}
