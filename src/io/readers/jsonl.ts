// JSON Lines: one object per line holding the vector in a numeric array field ("embedding" by
// default, else the only array field). Read in chunks, so the file is never one big string.
import { StringDecoder } from 'node:string_decoder';
import { checkpoint } from '../../interrupt.js';
import { CHUNK_BYTES } from './elements.js';
import { RowCollector } from './collect.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

/** No vector's line comes near this; a longer one would exhaust memory before it ends. */
const MAX_LINE_CHARS = 64 << 20;

export async function readJsonl(src: ByteSource, wanted: string | undefined): Promise<RawDataset> {
  let field = wanted;
  let rows: RowCollector | undefined;
  let lineNo = 0;

  const takeLine = (line: string) => {
    lineNo++;
    if (line.trim() === '') return;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw badInput(src, `line ${lineNo} is not valid JSON (${(e as Error).message})`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj))
      throw badInput(src, `line ${lineNo} is not a JSON object; each line must be like {"embedding": [0.1, 0.2, ...]}`);
    const rec = obj as Record<string, unknown>;
    if (field === undefined) field = chooseField(src, rec, lineNo);
    const v = rec[field];
    if (!Array.isArray(v)) throw badInput(src, `line ${lineNo} has no array field '${field}' (fields: ${Object.keys(rec).join(', ') || 'none'})`);
    if (!rows) {
      if (v.length === 0) throw badInput(src, `line ${lineNo}: field '${field}' is an empty array (dimension 0)`);
      rows = new RowCollector(v.length, 'f32');
    }
    if (v.length !== rows.d)
      throw badInput(src, `line ${lineNo}: field '${field}' has ${v.length} values but the first vector has ${rows.d}: all vectors must have the same dimension`);
    for (let k = 0; k < v.length; k++) {
      // null is how JSON writers spell NaN/Inf; let the finite check name it (and --drop-invalid skip it).
      if (v[k] === null) v[k] = NaN;
      else if (typeof v[k] !== 'number') throw badInput(src, `line ${lineNo}: field '${field}' value ${k} is not a number (${JSON.stringify(v[k])})`);
    }
    rows.append(v as number[], 0, 1);
  };

  const decoder = new StringDecoder('utf8');
  const buf = new Uint8Array(Math.min(src.size, CHUNK_BYTES));
  let pending = '';
  for (let pos = 0; pos < src.size; pos += buf.length) {
    const k = Math.min(buf.length, src.size - pos);
    src.readInto(buf.subarray(0, k), pos);
    const text = pending + decoder.write(Buffer.from(buf.buffer, 0, k));
    const lines = text.split('\n');
    pending = lines.pop()!;
    for (const line of lines) takeLine(line);
    if (pending.length > MAX_LINE_CHARS)
      throw badInput(src, `line ${lineNo + 1} is longer than ${MAX_LINE_CHARS} characters; no JSON line holding one vector is that long`);
    await checkpoint();
  }
  pending += decoder.end();
  if (pending !== '') takeLine(pending);
  if (!rows) throw badInput(src, 'has no JSON lines with vectors; nothing to read');
  // A field vlc picked (no "embedding" field, none asked for) is said, as npz, HDF5 and CSV say theirs.
  const note = wanted === undefined && field !== 'embedding' ? `${src.name}: reading field '${field}' (the only array field; --field picks another)` : undefined;
  return { n: rows.rows, d: rows.d, ...rows.finish(), format: `jsonl '${field}'`, firstBadRow: rows.firstBadRow, ...(note ? { note } : {}) };
}

function chooseField(src: ByteSource, rec: Record<string, unknown>, lineNo: number): string {
  if (Array.isArray(rec.embedding)) return 'embedding';
  const arrays = Object.keys(rec).filter((k) => Array.isArray(rec[k]));
  if (arrays.length === 1) return arrays[0];
  const fields = Object.keys(rec).join(', ') || 'none';
  throw badInput(src, arrays.length === 0
    ? `line ${lineNo} has no array field to read vectors from (fields: ${fields}); pass --field NAME`
    : `line ${lineNo} has several array fields (${arrays.join(', ')}); pick one with --field NAME`);
}
