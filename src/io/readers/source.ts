// Where input bytes come from: a file read by position (so large inputs go straight into the
// destination array, never through a whole-file buffer), or stdin buffered once in memory.
import * as fs from 'node:fs';
import { UsageError } from '../../errors.js';

export interface ByteSource {
  /** How the user named it, for messages: the path, or 'stdin'. */
  readonly name: string;
  readonly size: number;
  /** A real file's path (some libraries want a handle of their own); undefined for stdin. */
  readonly path?: string;
  /** The whole input when it is already in memory (stdin); undefined for files. */
  readonly bytes?: Uint8Array;
  /** Fill all of `dst` from byte `position`; a short read means the file is shorter than promised. */
  readInto(dst: Uint8Array, position: number): void;
  /** A fresh copy of `length` bytes at `position` (small reads: headers, footers). */
  read(position: number, length: number): Uint8Array;
  close(): void;
}

/** UsageError for a problem with the input, always starting with its name. */
export function badInput(src: { name: string } | string, problem: string): UsageError {
  return new UsageError(`${typeof src === 'string' ? src : src.name}: ${problem}`);
}

export function openFileSource(path: string): ByteSource {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw badInput(path, 'no such file (check the path)');
    throw badInput(path, `cannot open (${code ?? (e as Error).message})`);
  }
  if (st.isDirectory()) throw badInput(path, 'is a directory; give an embedding file (.npy, .fvecs, .arrow, .parquet, ...)');
  if (!st.isFile()) throw badInput(path, 'is not a regular file; to read a pipe use - (stdin)');
  if (st.size === 0) throw badInput(path, 'is empty (0 bytes)');
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (e) {
    throw badInput(path, `cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const size = st.size;
  const src: ByteSource = {
    name: path,
    size,
    path,
    readInto(dst, position) {
      let done = 0;
      while (done < dst.length) {
        const got = fs.readSync(fd, dst, done, dst.length - done, position + done);
        if (got === 0)
          throw badInput(path, `truncated: needed ${position + dst.length} bytes, the file has ${position + done}`);
        done += got;
      }
    },
    read(position, length) {
      const out = new Uint8Array(length);
      src.readInto(out, position);
      return out;
    },
    close() {
      fs.closeSync(fd);
    },
  };
  return src;
}

/** A source over bytes already in memory (stdin, tests). */
export function memorySource(name: string, bytes: Uint8Array): ByteSource {
  return {
    name,
    size: bytes.length,
    bytes,
    readInto(dst, position) {
      if (position + dst.length > bytes.length)
        throw badInput(name, `truncated: needed ${position + dst.length} bytes, the input has ${bytes.length}`);
      dst.set(bytes.subarray(position, position + dst.length));
    },
    read(position, length) {
      if (position + length > bytes.length)
        throw badInput(name, `truncated: needed ${position + length} bytes, the input has ${bytes.length}`);
      return bytes.slice(position, position + length);
    },
    close() {},
  };
}

/** Read all of stdin into one buffer: formats are sniffed from the bytes and most need random access. */
export async function readStdin(): Promise<ByteSource> {
  if (process.stdin.isTTY) throw badInput('stdin', 'is a terminal; pipe a file in (vlc ... - < vectors.npy) or give a path');
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    total += (c as Buffer).length;
  }
  if (total === 0) throw badInput('stdin', 'is empty (0 bytes)');
  // Shared memory, so a decoder worker (guard.ts) can read it without a copy.
  const bytes = new Uint8Array(new SharedArrayBuffer(total));
  let at = 0;
  while (chunks.length > 0) {
    const c = chunks.shift()!;
    bytes.set(c, at);
    at += c.length;
  }
  return memorySource('stdin', bytes);
}
