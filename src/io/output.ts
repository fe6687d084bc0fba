// Where outputs go, and the rules that keep a user's files safe (README.md, "Your files are safe"), for every
// command that writes (compress, decompress, --stats, bench --out):
//   - never over an input: a target that is the same file as an input (device + inode, links
//     followed; stdin compared through its descriptor) is refused, --force or not;
//   - never over an existing file without --force, which then replaces it atomically;
//   - regular files are written to a temp file beside the target, fsynced, and moved into place
//     only when complete: linked (without --force, so a file that appeared meanwhile — another vlc
//     writing the same name — is not replaced) or renamed (--force). A failure or Ctrl-C removes
//     the temp file; an existing target is untouched;
//   - character devices, FIFOs, sockets and '-' (stdout) are streamed to, never renamed over (as
//     root, `-o /dev/null` must not replace /dev/null); binary data never goes to a terminal;
//   - a new file takes the input's permission bits (stdin: 0666 & ~umask), as gzip does;
//   - a name that is a symbolic link to a regular file is replaced itself (with --force), as gzip -f
//     does: the file it points to is never written through, since the user named the link;
//   - vlc's own temp and probe files have short names (tempBeside), so they fit wherever the
//     user's name fits (NAME_MAX is 255 bytes).
// planOutput() checks all of this before any long work; writeOutput() writes.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { isatty } from 'node:tty';
import { InterruptedError, UsageError } from '../errors.js';
import { checkpoint, interruptSignal, onCleanup } from '../interrupt.js';
import { log } from '../log.js';
import { quoteName } from './names.js';

/** Something that writes bytes, in order. Return value of write() is awaited for backpressure. */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
  /** Regular files only: `chunk` written over bytes already written at `position` (a header completed after its payload). */
  writeAt?(position: number, chunk: Uint8Array): void;
}

/** What an output's messages call its options. */
export interface OptionNames {
  output: string;
  force: string;
  /** How to name another output instead. */
  other: string;
}

/** A program calling vlc's functions sets options, not flags: its messages name those. */
export const LIBRARY_NAMES: OptionNames = { output: 'output', force: 'force: true', other: 'set output to another path' };

/** The command line's flags. */
export const CLI_NAMES: OptionNames = { output: '-o', force: '-f (--force)', other: 'give -o FILE for another name' };

export interface OutputRules {
  /** How the user named this output, for messages: '-o' (default), '--stats', '--out'. */
  option?: string;
  /** The target is the name vlc chose (no -o was given): messages call it "the default output" and point to -o. */
  defaulted?: boolean;
  /** How messages name the output and force options: the CLI's flags (default), or a library's (LIBRARY_NAMES). */
  names?: OptionNames;
  /** What is written, when it is binary (never sent to a terminal): 'the .vlc file'. */
  binary?: string;
  /** Replace an existing regular file. */
  force?: boolean;
  /** The command's inputs (paths, '-' for stdin): never written over. */
  inputs?: string[];
  /** Bytes the output will take, when known in advance: refused at once if the disk has less. */
  expectedBytes?: number;
  /** Outputs of the same command already planned: two may not name one file. */
  others?: OutputPlan[];
}

export interface OutputPlan {
  /** As the user gave it ('-' for stdout). */
  readonly target: string;
  readonly kind: 'stdout' | 'device' | 'fifo' | 'file';
  /** For 'file': the path written (the name itself: a link there is replaced, not written through), and whether it may replace an existing file. */
  readonly path: string;
  readonly force: boolean;
  /** Permission bits of a new file (undefined: 0666 & ~umask). */
  readonly mode: number | undefined;
  readonly option: string;
}

const WHY: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOENT: 'the directory does not exist',
  ENOTDIR: 'a parent of it is not a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large for this file system or process limit',
  EIO: 'input/output error',
  EPIPE: 'the reader went away',
  ENAMETOOLONG: 'the name is longer than its file system allows (255 bytes a name)',
};

function explain(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  return WHY[code] ? `${WHY[code]} (${code})` : code || (e as Error).message;
}

/** Identity of a file: device and inode, links followed. */
function identity(st: fs.Stats): string {
  return `${st.dev}:${st.ino}`;
}

function inputIdentity(input: string): string | undefined {
  try {
    return identity(input === '-' ? fs.fstatSync(0) : fs.statSync(input));
  } catch {
    return undefined; // missing or unreadable: its reader says so
  }
}

/**
 * Every refusal, before any long work: a bad output fails in a second, not after training.
 * Returns the plan writeOutput() follows.
 */
export function planOutput(target: string, rules: OutputRules = {}): OutputPlan {
  // How messages name the output: the flag that gave it, or, when vlc chose the name, what it is.
  const names = rules.names ?? CLI_NAMES;
  const option = rules.option ?? (rules.defaulted ? 'the default output' : names.output);
  const force = rules.force ?? false;
  const mode = modeOf(rules.inputs);
  const named = quoteName(target);
  assertNamed(target, option);
  if (target === '-') {
    if (rules.binary && process.stdout.isTTY)
      throw new UsageError(`refusing to write ${rules.binary} to a terminal; redirect stdout (> file, | vlc ...) or give ${option} FILE`);
    for (const o of rules.others ?? []) if (o.kind === 'stdout') throw new UsageError(`${o.option} - and ${option} - both want stdout; give one of them a file name`);
    return { target, kind: 'stdout', path: target, force, mode, option };
  }
  let st: fs.Stats | undefined;
  let isLink = false;
  try {
    isLink = fs.lstatSync(target).isSymbolicLink();
  } catch (e) {
    // Does not exist yet (the usual case) — or cannot: a name longer than its file system holds
    // is refused now, not when the finished file is moved into place after the long work.
    if ((e as NodeJS.ErrnoException).code === 'ENAMETOOLONG') throw new UsageError(`cannot write ${named}: ${explain(e)}; choose a shorter ${option} name`);
  }
  try {
    st = fs.statSync(target);
  } catch {
    /* missing, or a link to nothing (isLink) */
  }
  const linkOnly = isLink && !st;
  if (st) {
    const id = identity(st);
    const clash = (rules.inputs ?? []).find((i) => inputIdentity(i) === id);
    if (clash !== undefined)
      throw new UsageError(`${option} ${named} is the same file as the input${clash === '-' ? ' (stdin)' : clash === target ? '' : ` ${quoteName(clash)}`}; refusing to write over it`);
    for (const o of rules.others ?? [])
      if (o.kind !== 'stdout' && inputIdentity(o.path) === id) throw new UsageError(`${option} and ${o.option} both name ${named}; give them different files`);
    if (st.isDirectory()) throw new UsageError(`${option} ${named} is a directory; give a file name`);
    if (st.isCharacterDevice() || st.isFIFO()) {
      if (rules.binary && st.isCharacterDevice() && isTerminal(st))
        throw new UsageError(`refusing to write ${rules.binary} to a terminal (${named}); give ${option} FILE`);
      return { target, kind: st.isFIFO() ? 'fifo' : 'device', path: target, force, mode, option };
    }
    if (!st.isFile()) throw new UsageError(`${option} ${named} is neither a regular file, a FIFO nor a character device; refusing to write to it`);
    if (!force) throw new UsageError(`${option} ${named} already exists; use ${names.force} to replace it${rules.defaulted ? `, or ${names.other}` : ''}`);
  } else if (linkOnly && !force) {
    throw new UsageError(`${option} ${named} is a link to a file that does not exist; use -f (--force) to replace the link`);
  }
  for (const o of rules.others ?? [])
    if (o.kind === 'file' && path.resolve(o.path) === path.resolve(target))
      throw new UsageError(`${option} and ${o.option} both name ${named}; give them different files`);
  // A regular file (or a link to one, or to nothing) is replaced by name: the new file is renamed
  // over the name the user gave, so a link there is replaced itself and its target is untouched —
  // gzip -f's rule. (Following the link would overwrite a file the user never named.)
  const file = target;
  if (isLink && st) log().debug(`${option} ${named} is a symbolic link: it is replaced by the new file; the file it points to is left as it is`);
  assertCreatable(file, target, option);
  if (rules.expectedBytes !== undefined) assertRoom(file, target, rules.expectedBytes);
  return { target, kind: 'file', path: file, force, mode, option };
}

/** An empty name (`-o ''`, often an unset shell variable) is refused as such, before anything looks it up. */
export function assertNamed(target: string, option = '-o'): void {
  if (target === '') throw new UsageError(`the ${option} name is empty; give a file name, or - for stdout`);
}

/** Permission bits for a new output: those of the first input that is a regular file. */
function modeOf(inputs: string[] | undefined): number | undefined {
  const first = inputs?.[0];
  if (first === undefined || first === '-') return undefined;
  try {
    const st = fs.statSync(first);
    return st.isFile() ? st.mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}

/** A terminal device, told by its major number (Linux: 4 virtual consoles, 5 tty/console, 136-143 ptys). */
function isTerminal(st: fs.Stats): boolean {
  const major = Number((BigInt(st.rdev) >> 8n) & 0xfffn);
  return major === 4 || major === 5 || (major >= 136 && major <= 143);
}

/**
 * Fail now if a file cannot be created beside `file`: create and remove a probe (the only test
 * that also holds for root, read-only mounts and pseudo file systems).
 */
function assertCreatable(file: string, target: string, option: string): void {
  const probe = tempBeside(file, 'probe');
  try {
    fs.closeSync(fs.openSync(probe, 'wx'));
    fs.rmSync(probe, { force: true });
  } catch (e) {
    throw new UsageError(`cannot write ${quoteName(target)}: ${explain(e)}; choose another ${option.startsWith('-') ? `${option} path` : 'path with -o'}`);
  }
}

let tempCount = 0;

/**
 * A fresh name in `file`'s directory for vlc's own temp or probe file: `.vlc-<pid>-<n>.<what>.tmp`,
 * at most about 40 bytes whatever the user's name is, so it fits wherever that name fits (a
 * 251-byte input gives a 255-byte default output, legal; a longer temp name would not be). The
 * same directory keeps the final rename atomic. path.dirname, not path.resolve: a relative name
 * needs no working directory to be looked up (it may have been deleted).
 */
function tempBeside(file: string, what: 'tmp' | 'probe'): string {
  return path.join(path.dirname(file), `.vlc-${process.pid}-${++tempCount}.${what === 'tmp' ? '' : 'probe.'}tmp`);
}

/** Refuse now a file output that cannot fit in the space left on its file system (once its size is known). */
export function checkRoom(plan: OutputPlan, bytes: number): void {
  if (plan.kind === 'file') assertRoom(plan.path, plan.target, bytes);
}

function assertRoom(file: string, target: string, bytes: number): void {
  let free: number;
  try {
    const s = fs.statfsSync(path.dirname(file));
    free = s.bavail * s.bsize;
  } catch {
    return; // unknown: the write itself will say
  }
  if (bytes > free) throw new UsageError(`cannot write ${quoteName(target)}: it needs ${bytes} bytes and its file system has ${free} free`);
}

/** For tests: how bytes reach a file descriptor (a fault injected here stands for a full disk). */
export type WriteSync = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/**
 * Run `produce` against a sink that ends up where `plan` says. Returns the bytes written. If
 * produce throws, or the process is interrupted, a file target is untouched and no temp file is
 * left. `onBytes` hears the bytes written so far.
 */
export async function writeOutput(
  plan: OutputPlan | string,
  produce: (sink: ByteSink) => Promise<void>,
  o: { onBytes?: (written: number) => void; writeSync?: WriteSync } = {},
): Promise<number> {
  const p = typeof plan === 'string' ? planOutput(plan) : plan;
  let written = 0;
  const counted = (sink: ByteSink): ByteSink => ({
    write: async (c) => {
      await sink.write(c);
      written += c.length;
      o.onBytes?.(written);
      await checkpoint(); // a long write yields now and then, so Ctrl-C is heard
    },
    writeAt: sink.writeAt,
  });
  const fail = (e: unknown): never => {
    if (e instanceof UsageError || e instanceof InterruptedError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code && (WHY[code] || code === 'ENXIO')) throw new UsageError(`cannot write ${p.target === '-' ? 'stdout' : quoteName(p.target)}: ${explain(e)}`);
    throw e;
  };
  if (p.kind === 'stdout') {
    await produce(counted({ write: writeStdout })).catch(fail);
    return written;
  }
  if (p.kind === 'device') {
    let fd: number;
    try {
      fd = fs.openSync(p.path, fs.constants.O_WRONLY); // no O_CREAT, no O_TRUNC: the device stays
    } catch (e) {
      return fail(e);
    }
    try {
      await produce(counted(fdSink(fd, o.writeSync ?? fs.writeSync)));
    } catch (e) {
      fail(e);
    } finally {
      fs.closeSync(fd);
    }
    return written;
  }
  if (p.kind === 'fifo') {
    const sock = await openFifoForWriting(p.path);
    try {
      await produce(counted(socketSink(sock)));
      await new Promise<void>((resolve, reject) => sock.end(() => resolve()).once('error', reject));
    } catch (e) {
      fail(e);
    } finally {
      sock.destroy();
    }
    return written;
  }
  await writeFile(p, (sink) => produce(counted(sink)), o.writeSync ?? fs.writeSync).catch(fail);
  return written;
}

/** Temp file beside the target, fsync, then link (no replacing) or rename (--force) into place. */
async function writeFile(p: OutputPlan, produce: (sink: ByteSink) => Promise<void>, writeSync: WriteSync): Promise<void> {
  const tmp = tempBeside(p.path, 'tmp');
  // A new file is created 0600 while written when it will take an input's bits (set at the end),
  // else 0666, from which the umask takes what it takes.
  let fd: number | undefined = fs.openSync(tmp, 'wx', p.mode === undefined ? 0o666 : 0o600);
  const discard = () => {
    if (fd !== undefined) fs.closeSync(fd);
    fd = undefined;
    fs.rmSync(tmp, { force: true });
  };
  const unregister = onCleanup(discard);
  try {
    const t0 = performance.now();
    const at = fd;
    await produce({ ...fdSink(fd, writeSync), writeAt: (position, c) => void fs.writeSync(at, c, 0, c.length, position) });
    const t1 = performance.now();
    fs.fsyncSync(fd);
    if (p.mode !== undefined) fs.fchmodSync(fd, p.mode);
    fs.closeSync(fd);
    fd = undefined;
    commit(tmp, p);
    unregister();
    // -v: the bytes' time apart from the rest (a file replaced with --force has its pages freed by the rename).
    log().debug(`${quoteName(p.target)}: written in ${((t1 - t0) / 1000).toFixed(3)} s, then synced, closed and moved into place in ${((performance.now() - t1) / 1000).toFixed(3)} s`);
  } catch (e) {
    unregister();
    discard();
    throw e;
  }
}

function commit(tmp: string, p: OutputPlan): void {
  if (p.force) {
    fs.renameSync(tmp, p.path);
    return;
  }
  try {
    fs.linkSync(tmp, p.path); // atomic and never replaces: EEXIST if the name appeared meanwhile
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new UsageError(`${p.option} ${quoteName(p.target)} appeared while vlc was writing (another process?); not replaced — use -f (--force) to replace it`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK') throw e;
    // A file system without hard links: check once more, then rename (a narrow race remains).
    if (fs.existsSync(p.path)) throw new UsageError(`${p.option} ${quoteName(p.target)} appeared while vlc was writing; not replaced — use -f (--force) to replace it`);
    fs.renameSync(tmp, p.path);
    return;
  }
  fs.rmSync(tmp, { force: true });
}

/** Bytes per write call: Node refuses more than 2 GiB in one (a .vlc section may be larger). */
const WRITE_MAX = 2 ** 30;

function fdSink(fd: number, writeSync: WriteSync): ByteSink {
  return {
    write: async (c) => {
      let off = 0;
      while (off < c.length) off += writeSync(fd, c, off, Math.min(WRITE_MAX, c.length - off));
    },
  };
}

/**
 * Open a FIFO for writing without blocking the event loop: O_NONBLOCK fails with ENXIO until a
 * reader opens the other end, so it is retried (Ctrl-C and SIGTERM work while vlc waits).
 */
async function openFifoForWriting(p: string): Promise<net.Socket> {
  for (;;) {
    if (interruptSignal.aborted) throw new InterruptedError();
    try {
      const fd = fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      return new net.Socket({ fd, readable: false, writable: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENXIO') throw e;
    }
    await new Promise((r) => setTimeout(r, FIFO_POLL_MS));
  }
}

/** How often to look for a FIFO's reader. */
const FIFO_POLL_MS = 50;

function socketSink(sock: net.Socket): ByteSink {
  let failed: Error | undefined;
  sock.on('error', (e) => (failed = e));
  return {
    write: (c) =>
      new Promise((resolve, reject) => {
        if (failed) return reject(failed);
        sock.write(c, (err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function writeStdout(c: Uint8Array): Promise<void> {
  for (let off = 0; off < c.length; off += WRITE_MAX) {
    const piece = c.subarray(off, Math.min(c.length, off + WRITE_MAX));
    await new Promise<void>((resolve, reject) => {
      process.stdout.write(piece, (err) => (err ? reject(err) : resolve()));
    });
  }
}
