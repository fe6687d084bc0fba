// Every command's --json result carries the same two leading fields, so a consumer can check what
// it reads: `schema` (the version of the JSON layout, docs/json.md; raised when a field is renamed
// or removed, not when one is added) and `command`. Keys are snake_case everywhere.

export const JSON_SCHEMA = 1;

export function jsonResult<T extends object>(command: string, fields: T): { schema: number; command: string } & T {
  return { schema: JSON_SCHEMA, command, ...fields };
}
