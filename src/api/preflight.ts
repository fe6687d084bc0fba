// What a command may write, decided before any long work so a bad output fails in a second, not
// after training (the rules live in io/output.ts), and the default output names, as gzip derives
// them: `vlc compress x.npy` writes x.vlc beside its input, `vlc decompress x.vlc` writes x.npy.
import * as path from 'node:path';
import { UsageError } from '../errors.js';
import { quoteName } from '../io/names.js';

export { checkRoom, planOutput, type OutputPlan, type OutputRules } from '../io/output.js';

/**
 * The output named after `input`: its directory, its name without `strip` (or without its last
 * extension when `strip` is undefined), then `suffix`. stdin has no name: it needs -o.
 */
export function defaultOutput(input: string, suffix: string, strip?: string): string {
  if (input === '-') throw new UsageError('reading stdin (-) needs -o FILE, or -o - for stdout');
  const dir = path.dirname(input);
  const base = path.basename(input);
  let stem: string;
  if (strip !== undefined) {
    if (!base.toLowerCase().endsWith(strip) || base.length === strip.length)
      throw new UsageError(`cannot name the output after ${quoteName(input)}: it does not end in ${strip}; give -o FILE`);
    stem = base.slice(0, base.length - strip.length);
  } else {
    const ext = path.extname(base);
    stem = ext && ext !== base ? base.slice(0, base.length - ext.length) : base;
  }
  return path.join(dir, stem + suffix);
}
