// The 'RSDB' section in a whole .vlc file (format version 3): written and read back to the same
// reconstruction, every flipped bit and every cut refused, and a 'bits' manifest in a version 2
// file refused (version 2 readers cannot know the section; the writer never makes one).
import { describe, expect, it } from 'vitest';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { decodeVlc, encodeVlcBytes, type VlcContent } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { decodeError, expectEveryCutFails, expectEveryFlipFails } from './damage.js';
import { testManifest } from './pq-content.js';
import { rng } from '../rng.js';

async function bitsFile() {
  const n = 30, d = 5, m = 3;
  const r = rng(17);
  const anchors = Float32Array.from({ length: m * d }, () => Math.round(r() * 64) / 16);
  const assignments = Uint32Array.from({ length: n }, (_, i) => i % m);
  const x = Float32Array.from({ length: n * d }, (_, i) => anchors[assignments[Math.floor(i / d)] * d + (i % d)] + (r() - 0.5) * (i % d));
  const { residuals } = await encodeBits({ x, n, d, anchors, assign: assignments }, 2);
  const content: VlcContent = {
    manifest: testManifest(n, d, m, 'bits'),
    anchors,
    assignments,
    residuals,
  };
  return { content, bytes: encodeVlcBytes(content), x };
}

describe("the 'bits' section in a .vlc file", () => {
  it('round-trips at format version 3 to the reconstruction the codec gives', async () => {
    const { content, bytes } = await bitsFile();
    const f = decodeVlc(bytes, 'x.vlc');
    expect(f.version).toBe(3);
    expect(f.manifest.residual).toBe('bits');
    const { d, n } = content.manifest;
    const want = new Float32Array(n * d);
    for (let i = 0; i < n; i++) {
      want.set(content.anchors.subarray(content.assignments[i] * d, content.assignments[i] * d + d), i * d);
      content.residuals!.addTo(i, want, i * d);
    }
    expect(Array.from(reconstruct(f))).toEqual(Array.from(want));
  });

  it('refuses every flipped bit and every cut', async () => {
    const { bytes } = await bitsFile();
    expectEveryFlipFails(bytes, 0x10);
    expectEveryCutFails(bytes);
  });

  it('refuses bits residuals in a format version 2 file', async () => {
    const b = (await bitsFile()).bytes.slice();
    const v = new DataView(b.buffer);
    v.setUint32(8, 2, true);
    v.setUint32(20, crc32c(b.subarray(24, 24 + v.getUint32(12, true)), crc32c(b.subarray(8, 20))), true);
    expect(decodeError(b)).toBe("x.vlc: residual mode 'bits' in a format version 2 file (bits needs version 3): file is corrupted");
  });
});
