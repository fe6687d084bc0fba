// Product-quantized residuals: the layout of subspaces, the 'RSPQ' section's round trip at 8 and 4
// bits (odd M, d not a multiple of M), and every kind of damage to it named as such.
import { describe, expect, it } from 'vitest';
import { subspaceBounds, type PqResiduals } from '../../dist/codecs/pq.js';
import { residualMse } from '../../dist/codecs/index.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { decodeVlc, encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { decodeError } from './damage.js';
import { pqContent } from './pq-content.js';
import { itRefusesEveryFlipAndCut, payloadEditor } from './pq-rewrite.js';

describe('pq subspaces', () => {
  it('split d into M runs of consecutive dimensions, the first d mod M one longer', () => {
    expect(Array.from(subspaceBounds(10, 4))).toEqual([0, 3, 6, 8, 10]);
    expect(Array.from(subspaceBounds(8, 8))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Array.from(subspaceBounds(5, 1))).toEqual([0, 5]);
  });
});

describe('.vlc pq section', () => {
  it.each([
    [8, 4, 10],
    [4, 3, 10],
    [4, 4, 7],
    [8, 1, 3],
  ] as const)('%i-bit codes, M = %i, d = %i: round trip and decoding', (bits, M, d) => {
    const n = 37;
    const { content, residuals } = pqContent(n, d, 5, M, bits);
    const bytes = encodeVlcBytes(content);
    expect(new DataView(bytes.buffer).getUint32(8, true)).toBe(2);
    const f = decodeVlc(bytes, 'p.vlc');
    const got = f.residuals as PqResiduals;
    expect(got.mode).toBe('pq');
    expect([got.M, got.bits]).toEqual([M, bits]);
    expect(Array.from(got.codes)).toEqual(Array.from(residuals.codes));
    expect(Array.from(got.scales)).toEqual(Array.from(residuals.scales));
    expect(Array.from(got.codebooks)).toEqual(Array.from(residuals.codebooks));
    const codeBytes = bits === 8 ? M : Math.ceil(M / 2);
    expect(f.sections[2]).toMatchObject({ name: 'residuals', tag: 'RSPQ' });
    expect(f.sections[2].bytes).toBe(16 + 4 * 5 + ((2 * 2 ** bits * d + 3) & ~3) + n * codeBytes);
    // Vector i = anchor + scale × its centroids, dimension by dimension.
    const rec = reconstruct(f);
    const bounds = subspaceBounds(d, M);
    for (const i of [0, 1, 6, n - 1]) {
      const j = f.assignments[i];
      for (let t = 0; t < M; t++)
        for (let k = bounds[t]; k < bounds[t + 1]; k++) {
          const c = residuals.codebooks[2 ** bits * bounds[t] + residuals.codes.get(i, t) * (bounds[t + 1] - bounds[t]) + k - bounds[t]];
          expect(rec[i * d + k]).toBe(Math.fround(content.anchors[j * d + k] + residuals.scales[j] * c));
        }
    }
    // Anchor 1 has scale 0: its vectors decode to the anchor exactly.
    expect(Array.from(rec.subarray(1 * d, 2 * d))).toEqual(Array.from(content.anchors.subarray(d, 2 * d)));
  });

  it('measures its error through the decoder (residualMse = the error of the decoded file)', () => {
    const { content, residuals } = pqContent(20, 6, 4, 3, 8);
    const x = Float32Array.from({ length: 20 * 6 }, (_, i) => Math.sin(i));
    const input = { x, n: 20, d: 6, anchors: content.anchors, assign: content.assignments };
    const rec = reconstruct(decodeVlc(encodeVlcBytes(content)));
    let err = 0;
    for (let i = 0; i < x.length; i++) err += (x[i] - rec[i]) ** 2;
    expect(residualMse(residuals, input)).toBeCloseTo(err / 20, 10);
  });

  const { content } = pqContent(24, 6, 4, 3, 4);
  const good = encodeVlcBytes(content);

  itRefusesEveryFlipAndCut(good);

  it('names values that checksum correctly but make no sense', () => {
    const { say, pre } = payloadEditor(good);
    expect(say((v) => v.setUint32(0, 1, true))).toBe(
      `${pre} has 272 bytes, but n = 24, d = 6, m = 4, M = 1, 4-bit codes need 248: file is corrupted`,
    );
    expect(say((v) => v.setUint32(4, 8, true))).toMatch(/M = 3, 8-bit codes need 3(\d+): file is corrupted/);
    expect(say((v) => v.setUint32(0, 7, true))).toBe(`${pre} says M = 7 subspaces, but d = 6 allows 1..6: file is corrupted`);
    expect(say((v) => v.setUint32(0, 0, true))).toBe(`${pre} says M = 0 subspaces, but d = 6 allows 1..6: file is corrupted`);
    expect(say((v) => v.setUint32(4, 5, true))).toBe(`${pre} says 5 bits per code; 8 or 4 are defined: file is corrupted`);
    expect(say((v) => v.setUint32(8, 5, true))).toBe(`${pre} holds 5 anchor scales, but m = 4: file is corrupted`);
    expect(say((v) => v.setUint32(12, 1, true))).toBe(
      `${pre} says k = 1 projected dimensions, but a format version 2 file has none (the header field is reserved, 0): file is corrupted`,
    );
    expect(say((v) => v.setFloat32(16, -1, true))).toBe(`${pre} has an anchor scale that is not a finite number >= 0: file is corrupted`);
    expect(say((v) => v.setFloat32(20, NaN, true))).toMatch(/anchor scale that is not a finite/);
    expect(say((v) => v.setUint16(32, 0x7c00, true))).toBe(`${pre} has a codebook value that is not finite: file is corrupted`);
    // M = 3 at 4 bits: the second byte of each vector's codes uses only its low half.
    expect(say((_, p) => (p[p.length - 1] |= 0x30))).toBe(`${pre} has a non-zero unused half byte in vector 23's codes: file is corrupted`);
  });

  it('refuses pq residuals in a format version 1 file', () => {
    const b = good.slice();
    const v = new DataView(b.buffer);
    v.setUint32(8, 1, true);
    v.setUint32(20, crc32c(b.subarray(24, 24 + v.getUint32(12, true)), crc32c(b.subarray(8, 20))), true);
    expect(decodeError(b)).toBe("x.vlc: residual mode 'pq' in a format version 1 file (pq needs version 2): file is corrupted");
  });
});
