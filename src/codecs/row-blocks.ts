// A section whose payload is a head then the same bytes for every row (int8, int4, bits, pq) read a
// block of rows at a time: rows [r0, r1) are the payload of r1 − r0 rows — the head, then their
// bytes — handed to the section's own reader, so each block is checked as the whole section is.
import { Payload } from '../io/vlc/payload.js';
import type { ResidualSection, RowBlocks, SectionContext } from './types.js';

/** Code bytes a block of rows holds by default (a few MiB: one positional read, one section read). */
const BLOCK_BYTES = 16 << 20;

/**
 * The rows of `payload` (n rows of `rowBytes` after `head` bytes) in blocks of about `rowsHint`
 * rows (default: BLOCK_BYTES of codes), each read by `section.read`.
 */
export function fixedRowBlocks(
  section: ResidualSection, payload: Payload, context: Omit<SectionContext, 'assignments'>, corrupt: (what: string) => Error,
  head: number, rowBytes: number, rowsHint?: number,
): RowBlocks {
  const { n } = context;
  const want = head + n * rowBytes;
  if (payload.length !== want)
    throw corrupt(`section 'residuals' has ${payload.length} bytes, but n = ${n} rows of ${rowBytes} bytes after its ${head}-byte head need ${want}`);
  const headBytes = payload.view(0, head).slice();
  const rows = Math.max(1, Math.min(n, rowsHint ?? Math.floor(BLOCK_BYTES / Math.max(1, rowBytes))));
  const span = (b: number) => {
    const r0 = b * rows, r1 = Math.min(n, r0 + rows);
    return { r0, count: r1 - r0, bytes: head + (r1 - r0) * rowBytes };
  };
  // The block's payload (the head, then its rows' bytes) read by the section's own reader.
  const read = (bytes: Uint8Array, count: number, assignments: ArrayLike<number>) => section.read(Payload.of(bytes), { ...context, n: count, assignments }, corrupt);
  return {
    rows,
    blockBytes: head + rows * rowBytes,
    block(b, assignments) {
      const { r0, count, bytes: size } = span(b);
      const bytes = new Uint8Array(size);
      bytes.set(headBytes, 0);
      payload.readIntoSync(head + r0 * rowBytes, bytes.subarray(head));
      return read(bytes, count, assignments);
    },
    async blockAsync(b, assignments, into) {
      const { r0, count, bytes: size } = span(b);
      if (into && into.length < size) throw new RangeError(`blockAsync: block ${b} needs ${size} bytes, the buffer holds ${into.length}`);
      const bytes = into ? into.subarray(0, size) : new Uint8Array(size);
      bytes.set(headBytes, 0);
      await payload.readInto(head + r0 * rowBytes, bytes.subarray(head));
      return read(bytes, count, assignments);
    },
  };
}
