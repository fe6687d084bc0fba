// Every command's --json result carries the same two leading fields, so a consumer can check what
// it reads: `schema` (the version of the JSON layout, docs/json.md; raised when a field is renamed
// or removed, not when one is added) and `command`. Keys are snake_case everywhere.

export const JSON_SCHEMA = 1;

export function jsonResult<T extends object>(command: string, fields: T): { schema: number; command: string } & T {
  return roundFloats({ schema: JSON_SCHEMA, command, ...fields });
}

/** Significant digits every non-integer in the JSON keeps: past what anything here measures, and enough to give an f32 back exactly (9). */
const FLOAT_DIGITS = 10;

/**
 * Every non-integer number, however deep, rounded to FLOAT_DIGITS significant digits: the one
 * place JSON figures are rounded, so a recall of 0.8526 is written 0.8526, not 0.8525999999999907.
 */
export function roundFloats<T>(v: T): T {
  if (typeof v === 'number') return (Number.isInteger(v) || !Number.isFinite(v) ? v : Number(v.toPrecision(FLOAT_DIGITS))) as T;
  if (Array.isArray(v)) return v.map(roundFloats) as T;
  if (typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundFloats(x)])) as T;
  return v;
}
