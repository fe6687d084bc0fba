// CSV / TSV / whitespace-separated text: one vector per line (np.savetxt, pandas to_csv, the
// TensorFlow embedding projector's vectors.tsv). An optional header line is recognised by its
// non-numeric fields. Two passes over the bytes: the first counts the rows so the values are
// parsed straight into one array of the right size; the second parses, naming any odd line.
import { allocStore, elements, pieceRows } from '../../vectors/dataset.js';
import { checkpoint } from '../../interrupt.js';
import { log } from '../../log.js';
import { detectDelimiter, isNumericField, parseField, splitFields, type Delimiter } from './csv-sniff.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

/** Bytes read and decoded at a time. */
const CHUNK = 4 << 20;
/** No vector's line comes near this; longer is not one vector per line (and would exhaust memory). */
const MAX_LINE_CHARS = 64 << 20;

/** Calls `onLine(text, lineNumber)` for every line that is not blank (1-based line numbers). */
async function forEachLine(src: ByteSource, onLine: (line: string, lineNumber: number) => boolean | void): Promise<void> {
  const decoder = new TextDecoder('utf-8');
  let carry = '';
  let lineNumber = 0;
  for (let pos = 0; pos < src.size; ) {
    const k = Math.min(CHUNK, src.size - pos);
    const text = carry + decoder.decode(src.read(pos, k), { stream: pos + k < src.size });
    pos += k;
    const lines = text.split('\n');
    carry = pos < src.size ? lines.pop()! : '';
    if (carry.length > MAX_LINE_CHARS) throw badInput(src, `line ${lineNumber + lines.length + 1} is longer than ${MAX_LINE_CHARS} characters; this is not one vector per line`);
    await checkpoint();
    for (const raw of lines) {
      lineNumber++;
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '') continue;
      if (onLine(line, lineNumber) === false) return;
    }
  }
}

interface Layout {
  delimiter: Delimiter;
  header: boolean;
  /** Leading fields to skip: 1 for pandas' index column (a header whose first field is empty). */
  skip: number;
  d: number;
  rows: number;
}

/** First pass: delimiter, header, dimension and row count (rows are counted, not parsed). */
async function survey(src: ByteSource): Promise<Layout> {
  let first: { line: string; lineNumber: number } | undefined;
  let second: string | undefined;
  let lines = 0;
  await forEachLine(src, (line, lineNumber) => {
    lines++;
    if (!first) first = { line, lineNumber };
    else second ??= line;
  });
  if (!first) throw badInput(src, 'CSV input has no rows (only blank lines)');
  const delimiter = detectDelimiter(second !== undefined && !splitFields(first.line, detectDelimiter(first.line)).every(isNumericField) ? second : first.line);
  const fields = splitFields(first.line, delimiter);
  const header = !fields.every(isNumericField);
  const skip = header && fields[0].trim() === '' ? 1 : 0;
  const rows = lines - (header ? 1 : 0);
  if (rows === 0) throw badInput(src, `CSV input has a header line and no rows`);
  const dataFields = header ? splitFields(second!, delimiter) : fields;
  const d = dataFields.length - skip;
  if (d < 1) throw badInput(src, `CSV line ${header ? 'after the header' : first.lineNumber} has no values`);
  return { delimiter, header, skip, d, rows };
}

/** A field as it can be shown on one terminal line (binary read as text would not be). */
const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

export async function readCsv(src: ByteSource): Promise<RawDataset> {
  const layout = await survey(src);
  const { delimiter, header, skip, d, rows } = layout;
  if (header) log().info(`${src.name}: skipping the header line${skip ? ' and the index column (its header field is empty, as pandas writes it)' : ''}`);
  const store = allocStore(rows, d, 'f32');
  const per = pieceRows(d, 'f32');
  let piece = elements(store, 0, Math.min(per, rows) * d); // the view that holds `row`
  let pieceStart = 0;
  let row = 0;
  let firstRowLine = 0;
  let seenHeader = !header;
  await forEachLine(src, (line, lineNumber) => {
    if (!seenHeader) {
      seenHeader = true;
      return;
    }
    if (row === 0) firstRowLine = lineNumber;
    const fields = splitFields(line, delimiter);
    if (fields.length - skip !== d)
      throw badInput(src, `CSV line ${lineNumber} has ${fields.length - skip} values but line ${firstRowLine} (the first row) has ${d}: every row must have the same number of values`);
    if (row >= rows) throw badInput(src, 'CSV input changed while it was read');
    if (row - pieceStart === per) {
      pieceStart = row;
      piece = elements(store, row * d, Math.min(per, rows - row) * d);
    }
    const base = (row - pieceStart) * d - skip;
    for (let j = skip; j < fields.length; j++) {
      const v = parseField(fields[j]);
      if (v === undefined)
        throw badInput(src, `CSV line ${lineNumber}, field ${j + 1}: '${printable(fields[j].trim().slice(0, 40))}' is not a number`);
      piece[base + j] = v;
    }
    row++;
  });
  if (row !== rows) throw badInput(src, 'CSV input changed while it was read');
  const name = delimiter === '\t' ? 'tsv' : delimiter === ' ' ? 'text (space-separated)' : `csv ('${delimiter}')`;
  return { n: rows, d, ...store, format: `${name}${header ? ' with header' : ''}` };
}
