// pq residuals with a projection (--pq-dims, format version 4): the section's round trip, the
// decoded residual s · Pᵀĉ along the directions made orthonormal, and every kind of damage named.
import { describe, expect, it } from 'vitest';
import { PQ_PROJECTION_VERSION, pqPayloadBytes, usableProjection, type PqResiduals } from '../../dist/codecs/pq.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { decodeVlc, encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { decodeError } from './damage.js';
import { pqContent } from './pq-content.js';
import { itRefusesEveryFlipAndCut, payloadEditor } from './pq-rewrite.js';

/** The file's format version, set (with its header checksum fixed). */
function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const b = bytes.slice();
  const v = new DataView(b.buffer);
  v.setUint32(8, version, true);
  v.setUint32(20, crc32c(b.subarray(24, 24 + v.getUint32(12, true)), crc32c(b.subarray(8, 20))), true);
  return b;
}

describe('.vlc pq section with a projection', () => {
  it.each([
    [8, 3, 7, 11],
    [4, 5, 5, 9],
    [8, 1, 1, 4],
  ] as const)('%i-bit codes, M = %i, k = %i of d = %i: round trip at version 4, decoded along the directions', (bits, M, k, d) => {
    const n = 29;
    const m = 4;
    const { content, residuals } = pqContent(n, d, m, M, bits, k);
    const bytes = encodeVlcBytes(content);
    expect(new DataView(bytes.buffer).getUint32(8, true)).toBe(PQ_PROJECTION_VERSION);
    const f = decodeVlc(bytes, 'p.vlc');
    const got = f.residuals as PqResiduals;
    expect([got.M, got.bits, got.dims]).toEqual([M, bits, k]);
    expect(Array.from(got.projectionHalf!)).toEqual(Array.from(residuals.projectionHalf!));
    expect(Array.from(got.codebooks)).toEqual(Array.from(residuals.codebooks));
    expect(Array.from(got.codes)).toEqual(Array.from(residuals.codes));
    expect(f.sections[2].bytes).toBe(pqPayloadBytes(n, d, m, M, bits, k));
    expect(f.sections[2].bytes).toBe(16 + 4 * m + ((2 * k * d + 3) & ~3) + ((2 * 2 ** bits * k + 3) & ~3) + n * (bits === 8 ? M : Math.ceil(M / 2)));

    // The directions used are orthonormal (to f32) and span what was stored, in order.
    const P = got.projection!;
    for (let a = 0; a < k; a++)
      for (let b = 0; b < k; b++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += P[a * d + j] * P[b * d + j];
        expect(s).toBeCloseTo(a === b ? 1 : 0, 6);
      }
    expect(Array.from(P)).toEqual(Array.from(usableProjection(residuals.projectionHalf!, k, d)));

    // Vector i = anchor + scale × Σ_r ĉ_r p_r, computed here independently.
    const rec = reconstruct(f);
    const bounds = got.bounds;
    for (const i of [0, 1, 5, n - 1]) {
      const j = f.assignments[i];
      const c = new Float64Array(k);
      for (let t = 0; t < M; t++) {
        const w = bounds[t + 1] - bounds[t];
        for (let e = 0; e < w; e++) c[bounds[t] + e] = got.codebooks[2 ** bits * bounds[t] + got.codes.get(i, t) * w + e];
      }
      for (let x = 0; x < d; x++) {
        let r = 0;
        for (let e = 0; e < k; e++) r += c[e] * P[e * d + x];
        expect(rec[i * d + x]).toBeCloseTo(content.anchors[j * d + x] + got.scales[j] * r, 5);
      }
    }
    // Anchor 1 has scale 0: its vectors decode to the anchor exactly.
    expect(Array.from(rec.subarray(1 * d, 2 * d))).toEqual(Array.from(content.anchors.subarray(d, 2 * d)));
  });

  const { content } = pqContent(12, 5, 3, 2, 4, 3);
  const good = encodeVlcBytes(content);

  itRefusesEveryFlipAndCut(good);

  it('names values that checksum correctly but make no sense', () => {
    const { say, pre } = payloadEditor(good);
    expect(say((v) => v.setUint32(12, 6, true))).toBe(`${pre} says k = 6 projected dimensions, but d = 5 allows 0..5: file is corrupted`);
    expect(say((v) => v.setUint32(0, 4, true))).toBe(`${pre} says M = 4 subspaces, but k = 3 projected dimensions allow 1..3: file is corrupted`);
    expect(say((v) => v.setUint32(12, 2, true))).toMatch(/k = 2 need \d+: file is corrupted/);
    // The first direction value sits after the 16-byte header and 3 anchor scales.
    expect(say((v) => v.setUint16(28, 0x7c00, true))).toBe(`${pre} has a projection value that is not finite: file is corrupted`);
    // 3 × 5 directions take 30 bytes: two of padding follow.
    expect(say((_, p) => (p[28 + 30] = 1))).toBe(`${pre} has non-zero padding: file is corrupted`);
  });

  it('refuses a projection in a file of a version before 4, and an older vlc is told to upgrade', () => {
    expect(decodeError(withVersion(good, 3))).toBe(
      "x.vlc: section 'residuals' (pq) says k = 3 projected dimensions, but a format version 3 file has none (the header field is reserved, 0): file is corrupted",
    );
    // Files without a projection keep version 2 and their bytes.
    expect(new DataView(encodeVlcBytes(pqContent(12, 5, 3, 2, 4).content).buffer).getUint32(8, true)).toBe(2);
  });
});
