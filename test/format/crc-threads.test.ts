// The int8 section's checksum made on the encoder's threads (per block, then combined: crc32c.ts
// crc32cCombine) equals the checksum of the whole payload; combine equals one pass on any split.
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cCombine } from '../../dist/io/vlc/crc32c.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { datasetFromF32 } from '../../dist/vectors/dataset.js';
import { rng } from '../rng.js';

describe('CRC32C from pieces', () => {
  it('combine(crc(A), crc(B), |B|) = crc(A‖B) on random lengths and splits', () => {
    const r = rng(9);
    for (let t = 0; t < 300; t++) {
      const bytes = Uint8Array.from({ length: Math.floor(r() * 3000) }, () => Math.floor(r() * 256));
      const k = Math.floor(r() * (bytes.length + 1));
      expect(crc32cCombine(crc32c(bytes.subarray(0, k)), crc32c(bytes.subarray(k)), bytes.length - k)).toBe(crc32c(bytes));
    }
  });

  it("the int8 encoder's threads: the payload's checksum, over 3 blocks of rows", async () => {
    const r = rng(4);
    const n = 40_001, d = 9, m = 7;
    const x = Float32Array.from({ length: n * d }, () => r() * 4 - 2);
    const anchors = Float32Array.from({ length: m * d }, () => r() - 0.5);
    const assign = Uint32Array.from({ length: n }, () => Math.floor(r() * m));
    const { residuals } = await encodeScalar('int8', { x: datasetFromF32(x, n, d), n, d, anchors, assign }, 2);
    expect(residuals.payloadCrc).toBeTypeOf('number');
    const pieces = residuals.payload() as Uint8Array[];
    expect(residuals.payloadCrc).toBe(pieces.reduce((c, p) => crc32c(p, c), 0));
    const one = await encodeScalar('int8', { x: datasetFromF32(x, n, d), n, d, anchors, assign }, 1);
    expect(one.residuals.payloadCrc).toBeUndefined(); // one thread: the writer checksums
    expect(Buffer.concat(one.residuals.payload() as Uint8Array[]).equals(Buffer.concat(pieces))).toBe(true);
  });
});
