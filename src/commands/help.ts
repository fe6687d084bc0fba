// Help that teaches: each command's --help ends with a few real examples (test/cli/help.test.ts
// runs them), required options say so, and `vlc -h CMD` means `vlc CMD --help`.
import type { Command } from 'commander';

/** One example: a shell line as a user would type it (after `$ `), and what it does. */
export type Example = [line: string, what: string];

/** Appends "Examples:" with each line and its comment to the command's --help. */
export function addExamples(cmd: Command, examples: Example[]): Command {
  const text = examples.map(([line, what]) => `  $ ${line}\n      ${what}`).join('\n');
  return cmd.addHelpText('after', `\nExamples:\n${text}`);
}

/** Marks every mandatory option of every command "(required)" in its help line. */
export function markRequired(program: Command): void {
  for (const cmd of program.commands)
    for (const opt of cmd.options)
      if (opt.mandatory && !/\(required\)$/.test(opt.description)) opt.description = `${opt.description} (required)`;
}

/**
 * `vlc -h compress` / `vlc --help compress` → `vlc compress --help` (commander would print the
 * top-level help and ignore the command name). Other argument lists are returned unchanged.
 */
export function helpFirst(argv: string[], commandNames: string[]): string[] {
  const [node, script, first, second, ...rest] = argv;
  if ((first === '-h' || first === '--help') && second !== undefined && commandNames.includes(second))
    return [node, script, second, '--help', ...rest];
  return argv;
}

/** How the backend's messages suggest the CPU; each phrase, and what it becomes without --device. */
const DEVICE_CPU_HINTS: Array<[RegExp, string]> = [
  [/ \(or use --device cpu\)/g, ''],
  [/,? or use --device cpu/g, ''],
  [/,? or --device cpu/g, ''],
  [/run again with --device cpu, and please report/g, 'please report'],
];

/**
 * Hints only suggest options that exist: a message shown by a command without --device (devices,
 * test-cuda) loses its "--device cpu" suggestion.
 */
export function hintsFor(cmd: Command | undefined, message: string): string {
  if (!cmd || cmd.options.some((o) => o.long === '--device')) return message;
  return DEVICE_CPU_HINTS.reduce((m, [re, by]) => m.replace(re, by), message);
}
