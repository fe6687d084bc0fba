// Damage to a test file's pq section (test/format/pq*.test.ts): every flip and cut refused, and
// payload edits behind the checksums — the payload changed, both CRCs fixed, so that only the
// decoder's sense checks can object.
import { it } from 'vitest';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { decodeError, expectEveryCutFails, expectEveryFlipFails } from './damage.js';
import { FILE_HEADER_BYTES, SECTION_HEADER_BYTES } from '../../dist/io/vlc/format.js';

/** Offset of the residual section's header (the third section). */
function residualHeader(bytes: Uint8Array): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  let off = (FILE_HEADER_BYTES + v.getUint32(12, true) + 7) & ~7;
  for (let s = 0; s < 2; s++) off = (off + SECTION_HEADER_BYTES + Number(v.getBigUint64(off + 8, true)) + 7) & ~7;
  return off;
}

/** Change the residual payload through `edit` and fix both checksums, so only the decoder's sense checks can object. */
export function rewritePayload(bytes: Uint8Array, edit: (payload: DataView, p: Uint8Array) => void): Uint8Array {
  const b = bytes.slice();
  const h = residualHeader(b);
  const v = new DataView(b.buffer);
  const size = Number(v.getBigUint64(h + 8, true));
  const p = b.subarray(h + SECTION_HEADER_BYTES, h + SECTION_HEADER_BYTES + size);
  edit(new DataView(b.buffer, p.byteOffset, p.byteLength), p);
  v.setUint32(h + 16, crc32c(p), true);
  v.setUint32(h + 20, crc32c(b.subarray(h, h + 20)), true);
  return b;
}

/** The two tests every section's file gets: any single flipped byte, and a cut at every length, is an error. */
export function itRefusesEveryFlipAndCut(good: Uint8Array): void {
  it('flipping any single byte anywhere is an error', () => expectEveryFlipFails(good, 0x10));
  it('truncation at every length is an error', () => expectEveryCutFails(good));
}

/** The decoder's one-line error for `good` with its residual payload edited (checksums fixed), and that line's prefix. */
export function payloadEditor(good: Uint8Array) {
  return {
    pre: "x.vlc: section 'residuals' (pq)",
    say: (edit: (v: DataView, p: Uint8Array) => void) => decodeError(rewritePayload(good, edit)),
  };
}
