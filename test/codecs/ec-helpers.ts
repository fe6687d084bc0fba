// What the ec codec tests share: a mixture to code, a section's payload in one array, and every row decoded.
import type { EcResiduals } from '../../dist/codecs/ec/residuals.js';
import { RansModels, quantizeFreqs } from '../../dist/codecs/ec/rans.js';
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

/** Random alphabets and models over `dims` dimensions, and `rows` rows of codes drawn from them, escapes included. */
export function randomBlock(seed: number, rows: number, dims: number, S: number, wide: boolean, maxAlphabet = 400) {
  const r = rng(seed);
  const lo = new Int32Array(dims), size = new Uint32Array(dims), start = new Uint32Array(dims + 1);
  const freqs: number[] = [];
  const weights: number[][] = [];
  for (let k = 0; k < dims; k++) {
    // Alphabets from 1 code to a few hundred (past 256: the wide bucket entries), some far from 0.
    const A = 1 + Math.floor(r() ** 3 * Math.min(maxAlphabet, 2 ** S - 2));
    lo[k] = (wide && k % 3 === 0 ? 40000 : 0) - Math.floor(r() * A);
    size[k] = A;
    // Peaked weights with holes (frequency 0) and a rare escape (sometimes none).
    const w = Array.from({ length: A + 1 }, (_, s) => (s < A ? (r() < 0.15 ? 0 : Math.exp(-(((s - A / 2) / (1 + A / 8)) ** 2)) + 1e-4) : r() < 0.3 ? 0 : 0.01));
    if (!w.some((v, s) => s < A && v > 0)) w[0] = 1;
    weights.push(w);
    const f = quantizeFreqs(w.map((v) => v * 1e6), S);
    freqs.push(...f);
    start[k + 1] = start[k] + A + 1;
  }
  const models = new RansModels(S, start, Uint32Array.from(freqs));
  const q = new Int32Array(rows * dims);
  for (let t = 0; t < q.length; t++) {
    const k = t % dims, w = weights[k], f = models.freq.subarray(start[k], start[k + 1]);
    let u = r() * w.reduce((a, b) => a + b, 0), s = 0;
    while (s < size[k] && (u >= w[s] || f[s] === 0)) (u -= w[s]), s++;
    if (s === size[k] && f[s] === 0) s = f.findIndex((v) => v > 0);
    // An escape codes a value outside the alphabet, now and then beyond int16.
    q[t] = s < size[k] ? lo[k] + s : r() < 0.5 ? lo[k] - 1 - Math.floor(r() * (wide ? 70000 : 50)) : lo[k] + size[k] + Math.floor(r() * 50);
  }
  return { q, alpha: { lo, size }, models };
}
