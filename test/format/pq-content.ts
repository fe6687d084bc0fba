// A small file with pq residuals, shared by the format suite (test/format/pq.test.ts) and the search
// suite (test/search/pq-search.test.ts); and the manifest of such a test file (also bits.test.ts).
import { PqResiduals, storedCodebook, type PqBits } from '../../dist/codecs/pq.js';
import type { VlcContent } from '../../dist/io/vlc/format.js';
import { f32ToF16 } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

/** A test file's manifest: f32 anchors, made-up training figures, residuals of the given mode. */
export function testManifest(n: number, d: number, m: number, residual: VlcContent['manifest']['residual']): VlcContent['manifest'] {
  return {
    n, d, m, metric: 'l2', anchorDtype: 'f32', residual, residualEnergy: 0.5,
    input: { dtype: 'f32', dropped: 0 },
    training: { energy: 1, iterations: 3, converged: true, init: 'kmeans++' },
    config: { maxIters: 3 }, seed: 1, tool: { name: 'vlc', version: '0.1.0' }, device: 'cpu',
  };
}

/** A small file with pq residuals: codes, scales, codebooks (and with dims > 0 a projection on that many random directions) from a seeded generator. */
export function pqContent(n: number, d: number, m: number, M: number, bits: PqBits, dims = 0) {
  const rand = rng(n * 1000 + d * 10 + M + bits);
  const anchors = Float32Array.from({ length: m * d }, () => Math.round(rand() * 64) / 16);
  const assignments = Uint32Array.from({ length: n }, (_, i) => i % m);
  const K = 2 ** bits;
  const scales = Float32Array.from({ length: m }, (_, j) => (j === 1 ? 0 : 0.1 + rand()));
  const codebooks = storedCodebook(Float32Array.from({ length: K * (dims || d) }, () => rand() * 2 - 1));
  const codes = Uint8Array.from({ length: n * M }, () => Math.floor(rand() * K));
  const projection = dims ? Uint16Array.from({ length: dims * d }, () => f32ToF16(rand() * 2 - 1)) : undefined;
  const residuals = new PqResiduals(n, d, M, bits, assignments, scales, codebooks, codes, projection);
  const content: VlcContent = {
    manifest: testManifest(n, d, m, 'pq'),
    anchors,
    assignments,
    residuals,
  };
  return { content, residuals };
}
