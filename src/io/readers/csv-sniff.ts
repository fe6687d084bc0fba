// How vlc reads a line of numbers (CSV, TSV, whitespace-separated text as np.savetxt writes it),
// shared by the sniffer and the CSV reader so both agree on what a numeric row is.

/** Field separators, in the order they are looked for on the first data line. */
export type Delimiter = '\t' | ',' | ';' | ' ';

export function detectDelimiter(line: string): Delimiter {
  if (line.includes('\t')) return '\t';
  if (line.includes(',')) return ',';
  if (line.includes(';')) return ';';
  return ' '; // runs of spaces, as np.savetxt's default delimiter writes
}

/** The fields of one line (a trailing separator, as some exporters write, ends no empty field). */
export function splitFields(line: string, delimiter: Delimiter): string[] {
  const fields = delimiter === ' ' ? line.trim().split(/[ \t]+/) : line.split(delimiter);
  if (fields.length > 1 && fields[fields.length - 1].trim() === '') fields.pop();
  return fields;
}

const NUMBER = /^\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|nan|inf|infinity)\s*$/i;

/**
 * A decimal number as numpy / pandas / C printf write it (nan and inf included), or undefined
 * when the field is not one. Number() does the common case (it is the fast, exact parser); only
 * what it refuses or misreads ('' is 0 to it) is looked at again.
 */
export function parseField(field: string): number | undefined {
  const v = Number(field);
  if (!Number.isNaN(v)) return v === 0 && field.trim() === '' ? undefined : v;
  if (!NUMBER.test(field)) return undefined;
  const t = field.trim().toLowerCase();
  if (t.endsWith('nan')) return Number.NaN;
  return t.startsWith('-') ? -Infinity : Infinity;
}

export const isNumericField = (field: string): boolean => NUMBER.test(field);

/**
 * True when the first bytes read as numeric text: printable characters only, an optional header
 * line, then at least one line of two or more numbers split by one separator. Binary files
 * (raw floats, vecs) fail the first test; JSON lines start with '{' and fail the second.
 */
export function looksLikeCsv(head: Uint8Array, size: number): boolean {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
  let lines = text.split('\n');
  const complete = head.length >= size; // the whole input is in `head`
  if (!complete) {
    // The last line is cut; a very wide first row may have no line end at all: keep its whole fields.
    const last = lines.pop()!;
    if (lines.length === 0) lines = [last.slice(0, Math.max(0, last.search(/[^,\t; ]*$/) - 1))];
  }
  lines = lines.map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
  if (lines.length === 0) return false;
  for (let i = 0; i < head.length; i++) {
    const b = head[i];
    // Control bytes other than tab / LF / CR mean binary; bytes >= 0x80 (UTF-8) only in a header.
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f) return false;
  }
  const numeric = (line: string) => {
    if (/[^\x20-\x7e\t]/.test(line)) return false;
    const fields = splitFields(line, detectDelimiter(line));
    return fields.length >= 2 && fields.every(isNumericField);
  };
  const data = numeric(lines[0]) ? lines : lines.slice(1); // the first line may be a header
  return data.length > 0 && data.every(numeric);
}
