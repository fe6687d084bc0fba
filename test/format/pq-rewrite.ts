// Editing a test file's residual section behind the checksums: the payload changed, both CRCs
// fixed, so that only the decoder's sense checks can object (test/format/pq*.test.ts).
import { crc32c } from '../../dist/io/vlc/crc32c.js';
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
