// The JSON layouts of docs/json.md, read from its tables, and a checker: every documented field is
// present with a documented type (unless marked optional), and no field is undocumented. Used by
// test/cli/json.test.ts and the fake-GPU tests (devices, test-cuda and bench with a GPU).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

type JsonType = 'integer' | 'number' | 'string' | 'boolean' | 'null' | 'object' | 'array';
interface Field {
  path: string;
  types: JsonType[];
  optional: boolean;
}

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'json.md');

/** Each command's fields, from the table under its `## name` heading. */
export function jsonLayouts(): Map<string, Field[]> {
  const out = new Map<string, Field[]>();
  let command: string | undefined;
  for (const line of fs.readFileSync(DOC, 'utf8').split('\n')) {
    const h = /^## (\S+)$/.exec(line);
    if (h) command = h[1];
    const row = /^\| `([^`]+)` \| ([^|]+) \|/.exec(line);
    if (!row || !command) continue;
    const spec = row[2].trim();
    const types = spec.replace(/, optional$/, '').split(' or ').map((t) => t.trim());
    for (const t of types) if (!['integer', 'number', 'string', 'boolean', 'null', 'object', 'array'].includes(t)) throw new Error(`docs/json.md, ${command}.${row[1]}: unknown type '${t}'`);
    out.set(command, [...(out.get(command) ?? []), { path: row[1], types: types as JsonType[], optional: spec.endsWith(', optional') }]);
  }
  return out;
}

function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as JsonType;
}

/** Problems of `value` against the layout of `command` (empty: it conforms). */
export function checkJson(command: string, value: unknown): string[] {
  const fields = jsonLayouts().get(command);
  if (!fields) return [`docs/json.md has no section for ${command}`];
  const documented = new Map(fields.map((f) => [f.path, f]));
  const problems: string[] = [];
  // Walk the value: every key must be documented, with a documented type.
  const walk = (v: unknown, at: string) => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      for (const e of v) walk(e, `${at}[]`);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const p = at ? `${at}.${k}` : k;
      const f = documented.get(p);
      if (!f) {
        problems.push(`${command}: field '${p}' is not in docs/json.md`);
        continue;
      }
      const t = typeOf(x);
      if (!f.types.includes(t) && !(t === 'integer' && f.types.includes('number'))) problems.push(`${command}: '${p}' is ${t}, docs/json.md says ${f.types.join(' or ')}`);
      // An object with no documented sub-fields is a map of data keys: not walked.
      if (fields.some((g) => g.path.startsWith(`${p}.`) || g.path.startsWith(`${p}[].`))) walk(x, p);
    }
  };
  walk(value, '');
  // Every documented field must be there, where its parent is.
  for (const f of fields) {
    if (f.optional) continue;
    for (const parent of parentsOf(value, f.path)) {
      const key = f.path.split(/\.|\[\]\./).at(-1)!;
      if (!(key in parent)) problems.push(`${command}: field '${f.path}' is missing`);
    }
  }
  return problems;
}

/** The objects that should hold the field at `p` ("a.b", "a[].b"); a null or absent parent holds none. */
function parentsOf(root: unknown, p: string): Array<Record<string, unknown>> {
  const steps = p.split('.');
  steps.pop();
  let level: unknown[] = [root];
  for (const s of steps) {
    const arr = s.endsWith('[]');
    const key = arr ? s.slice(0, -2) : s;
    level = level.flatMap((o) => {
      const v = o && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined;
      if (v === null || v === undefined) return [];
      return arr ? (Array.isArray(v) ? v : []) : [v];
    });
  }
  return level.filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o));
}
