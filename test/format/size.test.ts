// io/vlc/size.ts predicts a file's bytes from its shape (what `compress --bytes` budgets with); the
// encoder is the truth, so the prediction must equal what it writes, for every codec and width.
import { describe, expect, it } from 'vitest';
import { encodeVlcBytes, FILE_HEADER_BYTES } from '../../dist/io/vlc/format.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { PqResiduals } from '../../dist/codecs/pq.js';
import { payloadBytesOf as residualPayloadBytes } from '../../dist/codec-registry/index.js';
import { fileBytes } from '../../dist/io/vlc/size.js';

describe('file size from the shape', () => {
  it.each([
    [5, 3, 2, 'none', 'f16', 'l2'], [37, 7, 5, 'int4', 'f32', 'l2'], [300, 9, 257, 'int8', 'f16', 'l2'], [64, 130, 3, 'int4', 'f16', 'l2'], [50, 12, 4, 'pq', 'f16', 'l2'],
    [37, 7, 5, 'int4', 'f32', 'cosine'], [5, 3, 2, 'none', 'f16', 'cosine'], [33, 5, 3, 'int8', 'f16', 'ip'],
  ] as const)('n=%i d=%i m=%i %s residuals, %s anchors, metric %s', async (n, d, m, residual, anchorDtype, metric) => {
    const x = Float32Array.from({ length: n * d }, (_, i) => Math.sin(i));
    const anchors = x.slice(0, m * d);
    const assignments = Uint32Array.from({ length: n }, (_, i) => i % m);
    const M = 5;
    const codec = residual === 'pq' ? { mode: 'pq', subspaces: M, bits: 8 } as const : { mode: residual };
    const residuals =
      residual === 'none' ? undefined
      : residual === 'pq' ? new PqResiduals(n, d, M, 8, assignments, new Float32Array(m).fill(1), new Float32Array(256 * d), new Uint8Array(n * M))
      : (await encodeScalar(residual, { x, n, d, anchors, assign: assignments })).residuals;
    const bytes = encodeVlcBytes({
      manifest: {
        n, d, m, metric, anchorDtype, residual, ...(residual === 'none' ? {} : { residualEnergy: 0.5 }),
        input: { dtype: 'f32', dropped: 0 }, training: { energy: 1, iterations: 3, converged: true, init: 'kmeans++' },
        config: {}, seed: 1, tool: { name: 'vlc', version: 'test' }, device: 'cpu',
      },
      anchors,
      assignments,
      residuals,
      ...(metric === 'cosine' ? { norms: new Float32Array(n).fill(2) } : {}),
    });
    const manifestBytes = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
    expect(manifestBytes).toBeGreaterThan(FILE_HEADER_BYTES);
    expect(fileBytes({ n, d, m, anchorDtype, residualPayloadBytes: residualPayloadBytes(codec, n, d, m), manifestBytes, norms: metric === 'cosine' })).toBe(bytes.length);
  });
});

describe('anchors handed over as f16 bits (VlcContent.anchorHalves)', () => {
  it('write the same bytes as the f32 anchors converted by the encoder; halves of another length are refused', async () => {
    const { storedAnchorsAndHalves } = await import('../../dist/io/vlc/format.js');
    const n = 41, d = 7, m = 5;
    const anchors = Float32Array.from({ length: m * d }, (_, i) => Math.sin(i) * 1000 + 0.1234567);
    const content = {
      manifest: {
        n, d, m, metric: 'l2', anchorDtype: 'f16', residual: 'none',
        input: { dtype: 'f32', dropped: 0 }, training: { energy: 1, iterations: 3, converged: true, init: 'kmeans++' },
        config: {}, seed: 1, tool: { name: 'vlc', version: 'test' }, device: 'cpu',
      },
      anchors,
      assignments: Uint32Array.from({ length: n }, (_, i) => i % m),
    } as const;
    const stored = storedAnchorsAndHalves(anchors, 'f16');
    expect(stored.halves).toBeDefined();
    expect(Array.from(stored.values)).not.toEqual(Array.from(anchors)); // rounded through f16
    const plain = encodeVlcBytes(content);
    expect(Buffer.compare(encodeVlcBytes({ ...content, anchorHalves: stored.halves }), plain)).toBe(0);
    expect(Buffer.compare(encodeVlcBytes({ ...content, anchors: stored.values }), plain)).toBe(0);
    expect(() => encodeVlcBytes({ ...content, anchorHalves: stored.halves!.subarray(1) })).toThrow(/anchor halves/);
    expect(storedAnchorsAndHalves(anchors, 'f32')).toEqual({ values: anchors });
  });
});
