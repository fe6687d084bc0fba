// Output files appear whole or not at all: write to a temp file beside the target, fsync, rename.
// The temp file is removed on any failure and on Ctrl-C (via src/interrupt.ts). '-' means stdout.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../errors.js';
import { onCleanup } from '../interrupt.js';

/** Something that writes bytes, in order. Return value of write() is awaited for backpressure. */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
}

/**
 * Run `produce` against a sink that ends up at `target` atomically ('-' streams to stdout).
 * If produce throws (or the process is interrupted), nothing is left at `target`'s temp path and
 * an existing `target` is untouched.
 */
export async function writeAtomic(target: string, produce: (sink: ByteSink) => Promise<void>): Promise<void> {
  if (target === '-') {
    await produce({ write: (c) => writeStdout(c) });
    return;
  }
  const dir = path.dirname(path.resolve(target));
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(target);
  } catch {
    /* does not exist yet: fine */
  }
  if (st?.isDirectory()) throw new UsageError(`output ${target} is a directory; give a file name`);
  if (!fs.existsSync(dir)) throw new UsageError(`output directory ${dir} does not exist`);
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${Date.now()}.tmp`);
  let fd: number;
  try {
    fd = fs.openSync(tmp, 'wx', 0o644);
  } catch (e) {
    throw new UsageError(`cannot write ${target}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  // Close and delete the temp file: on failure, or from the Ctrl-C cleanup.
  const discard = () => {
    try {
      fs.closeSync(fd);
    } catch {
      /* already closed */
    }
    fs.rmSync(tmp, { force: true });
  };
  const unregister = onCleanup(discard);
  try {
    await produce({
      write: async (c) => {
        let off = 0;
        while (off < c.length) off += fs.writeSync(fd, c, off, c.length - off);
      },
    });
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, target);
    unregister();
  } catch (e) {
    unregister();
    discard();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EACCES' || code === 'EROFS' || code === 'EDQUOT')
      throw new UsageError(`cannot write ${target}: ${code}`);
    throw e;
  }
}

function writeStdout(c: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(c, (err) => (err ? reject(err) : resolve()));
  });
}
