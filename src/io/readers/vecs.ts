// .fvecs / .bvecs (the TEXMEX/FAISS formats): each record is an int32 dimension d followed by
// d float32 (fvecs) or d uint8 (bvecs) values. Every record must repeat the same d.
import { checkpoint } from '../../interrupt.js';
import { allocStore, elements, pieceRows } from '../../vectors/dataset.js';
import { CHUNK_BYTES, decodeElements, type ElementType } from './elements.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

/** The first record's dimension (from its first 4 bytes), refused when 0, negative or absurd. */
export function checkVecsDimension(name: string, first4: Uint8Array, kind: 'fvecs' | 'bvecs'): number {
  if (first4.length < 4) throw badInput(name, `truncated .${kind}: ${first4.length} bytes, not even one record header`);
  const d = new DataView(first4.buffer, first4.byteOffset, 4).getInt32(0, true);
  if (d === 0) throw badInput(name, `first .${kind} record has dimension 0`);
  if (d < 0) throw badInput(name, `first .${kind} record has a negative dimension (${d}); is this really a .${kind} file? (use --format to force another)`);
  if (d > MAX_DIM) throw badInput(name, `first .${kind} record has dimension ${d}, more than any embedding (at most ${MAX_DIM}); is this really a .${kind} file? (use --format to force another)`);
  return d;
}

/** Far beyond any embedding model's width; a larger first word is not a dimension. */
const MAX_DIM = 1 << 20;

export async function readVecs(src: ByteSource, kind: 'fvecs' | 'bvecs'): Promise<RawDataset> {
  const elem: ElementType = kind === 'fvecs' ? 'f32' : 'u8';
  const eb = kind === 'fvecs' ? 4 : 1;
  if (src.size < 4) throw badInput(src, `truncated .${kind}: ${src.size} bytes, not even one record header`);
  const d = checkVecsDimension(src.name, src.read(0, 4), kind);
  const record = 4 + d * eb;
  const n = Math.floor(src.size / record);
  if (n === 0) throw badInput(src, `truncated .${kind}: one ${d}-dim record needs ${record} bytes, the file has ${src.size}`);

  const store = allocStore(n, d, 'f32');
  const perChunk = Math.max(1, Math.min(Math.floor(CHUNK_BYTES / record), pieceRows(d, 'f32')));
  const buf = new Uint8Array(Math.min(n, perChunk) * record);
  const view = new DataView(buf.buffer);
  for (let r0 = 0; r0 < n; r0 += perChunk) {
    const k = Math.min(perChunk, n - r0);
    src.readInto(buf.subarray(0, k * record), r0 * record);
    const data = elements(store, r0 * d, k * d);
    for (let i = 0; i < k; i++) {
      const dimHere = view.getInt32(i * record, true);
      if (dimHere !== d)
        throw badInput(src, `record ${r0 + i} has dimension ${dimHere} but record 0 has ${d}: all vectors in a .${kind} file must have the same dimension`);
      decodeElements(buf.subarray(i * record + 4, (i + 1) * record), elem, d, data, i * d);
    }
    await checkpoint();
  }
  const extra = src.size - n * record;
  if (extra > 0) {
    // Either the last record was cut off, or a later record has another dimension.
    if (extra >= 4) {
      const dimHere = new DataView(src.read(n * record, 4).buffer).getInt32(0, true);
      if (dimHere !== d)
        throw badInput(src, `record ${n} has dimension ${dimHere} but record 0 has ${d}: all vectors in a .${kind} file must have the same dimension`);
    }
    throw badInput(src, `truncated .${kind}: ${n + 1} records of dimension ${d} need ${(n + 1) * record} bytes, the file has ${src.size}`);
  }
  return { n, d, ...store, format: kind, inputDtype: elem };
}
