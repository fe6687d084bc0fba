// The command-line entry: builds the commander program from src/commands/ and is the single place
// that turns errors into exit codes (README "Exit codes").
import { Command, CommanderError } from 'commander';
import { EXIT, ReportedElsewhere, UsageError, VlcError } from './errors.js';
import { installInterruptHandlers, interruptExitCode, interruptSignal, runCleanups } from './interrupt.js';
import * as path from 'node:path';
import { escapeLine, quoteName } from './io/names.js';
import { withLimit } from './limits.js';
import { log } from './log.js';
import { commands } from './commands/index.js';
import { addExamples, helpFirst, hintsFor, markRequired } from './commands/help.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('vlc')
    .description('Compress embedding vectors with an annealing vector quantizer (CUDA GPU or CPU).')
    .version(VERSION, '-V, --version')
    // Usage errors are one stderr line, like every other error ("vlc: <what> (run with --help ...)").
    .configureOutput({
      outputError: (str, write) => write(`vlc: ${str.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')} (run with --help for usage)\n`),
    })
    .exitOverride();
  for (const register of commands) register(program);
  markRequired(program);
  // A first session, in order: each line uses what the one before made.
  addExamples(program, [
    ['vlc compress emb.npy', 'writes emb.vlc beside it: the smallest file that keeps recall@10 >= 0.9 (what it chose goes to stderr)'],
    ['vlc info emb.vlc', 'what the file holds: sizes, the quality compress measured, training'],
    ['vlc decompress emb.vlc -o emb-rebuilt.npy', 'the vectors rebuilt, in the input\'s element type'],
    ['vlc search emb.vlc --queries queries.npy -k 10 | head -3', 'nearest neighbours over the compressed file, one JSON line per query'],
  ]);
  program.addHelpText('after', '\nEvery command has --help with its own options and examples (vlc help CMD).');
  return program;
}

function exitCodeOf(err: unknown): number {
  if (err instanceof VlcError) return err.exitCode;
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT.usage;
  return EXIT.failure;
}

/**
 * A working directory that was deleted (a build dir cleaned under a running shell) fails every
 * worker thread Node starts (it asks for the cwd: ENOENT uv_cwd). vlc then moves to / — so that
 * absolute paths work as anywhere — and refuses each relative path it is given, which would now
 * name something under / rather than what the user meant.
 */
function leaveDeletedCwd(program: Command): void {
  try {
    process.cwd();
    return;
  } catch {
    process.chdir('/');
  }
  program.hook('preAction', (_program, command) => {
    const opts = command.opts() as Record<string, unknown>;
    const paths = [...command.args, ...PATH_OPTIONS.map((k) => opts[k])].filter((p): p is string => typeof p === 'string');
    const relative = paths.find((p) => p !== '-' && p !== '' && !path.isAbsolute(p));
    if (relative !== undefined)
      throw new UsageError(`the working directory no longer exists (deleted?), so the relative path ${quoteName(relative)} names nothing; cd to an existing directory or give absolute paths`);
  });
}

/** The options whose values are paths (the positional arguments all are). */
const PATH_OPTIONS = ['output', 'stats', 'out', 'queries'];

export async function main(argv: string[]): Promise<number> {
  installInterruptHandlers();
  // A closed stdout (e.g. `vlc ... | head`) ends quietly.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
  });
  const program = buildProgram();
  const args = helpFirst(argv, program.commands.map((c) => c.name()));
  try {
    leaveDeletedCwd(program);
    await program.parseAsync(args);
    return EXIT.ok;
  } catch (err) {
    runCleanups();
    if (interruptSignal.aborted) return interruptExitCode();
    if (err instanceof CommanderError) return exitCodeOf(err); // commander already printed it
    if (err instanceof ReportedElsewhere) return err.exitCode; // another MPI rank printed it
    // One line, whatever the message holds (a name or header text from a hostile file); hints only
    // name options the running command has.
    const running = program.commands.find((c) => c.name() === args[2]);
    const raw = err instanceof Error ? err.message : String(err);
    const msg = escapeLine(hintsFor(running, err instanceof VlcError ? raw : withLimit(raw)));
    process.stderr.write(`vlc: ${msg}\n`);
    if (!(err instanceof VlcError) && err instanceof Error && err.stack) log().debug(err.stack);
    return exitCodeOf(err); // InterruptedError carries exit 130 itself
  }
}
