// Checks made before any long work, so a bad output path fails in a second, not after training.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../errors.js';

const WHY: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOENT: 'the directory does not exist',
  ENOTDIR: 'a parent of it is not a directory',
  ENOSPC: 'no space left on the device',
};

/**
 * Fail now if `target` cannot be created: write and remove a probe file beside it (the only test
 * that also holds for root, read-only mounts and pseudo file systems). '-' (stdout) always passes.
 */
export function assertWritable(target: string, option = '-o'): void {
  if (target === '-') return;
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(target);
  } catch {
    /* does not exist yet: the usual case */
  }
  if (st?.isDirectory()) throw new UsageError(`${option} ${target} is a directory; give a file name`);
  const dir = path.dirname(path.resolve(target));
  const probe = path.join(dir, `.${path.basename(target)}.${process.pid}.probe.tmp`);
  try {
    fs.closeSync(fs.openSync(probe, 'wx'));
    fs.rmSync(probe, { force: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new UsageError(`cannot write ${target}: ${WHY[code] ?? code} (${code}); choose another ${option} path`);
  }
}

/** Binary data on a terminal is never what anyone wants (and can garble it): ask for a redirect. */
export function assertNotTerminal(target: string, what: string): void {
  if (target === '-' && process.stdout.isTTY)
    throw new UsageError(`refusing to write ${what} to a terminal; redirect stdout (> file, | vlc ...) or give -o FILE`);
}
