// Where input bytes come from: a file (or stdin redirected from a file) read by position, so
// large inputs go straight into the destination array; or a piped stdin, buffered once in shared
// memory blocks (formats are sniffed from the bytes and most need random access).
import * as fs from 'node:fs';
import { isatty } from 'node:tty';
import { UsageError } from '../../errors.js';

/** How a worker thread can reach the same bytes: the fd table and shared memory are per process. */
export type SourceRef = { fd: number; size: number } | { blocks: Uint8Array[]; size: number };

export interface ByteSource {
  /** How the user named it, for messages: the path, or 'stdin'. */
  readonly name: string;
  readonly size: number;
  /** Fill all of `dst` from byte `position`; a short read means the file is shorter than promised. */
  readInto(dst: Uint8Array, position: number): void;
  /** A fresh copy of `length` bytes at `position` (small reads: headers, footers). */
  read(position: number, length: number): Uint8Array;
  /** For decoder workers (guard.ts): valid until close(). */
  readonly ref: SourceRef;
  close(): void;
}

/** UsageError for a problem with the input, always starting with its name. */
export function badInput(src: { name: string } | string, problem: string): UsageError {
  return new UsageError(`${typeof src === 'string' ? src : src.name}: ${problem}`);
}

function truncated(name: string, needed: number, has: number): UsageError {
  return badInput(name, `truncated: needed ${needed} bytes, the input has ${has}`);
}

/** Completes a source with read(), a fresh copy made through its readInto(). */
function withRead(src: Omit<ByteSource, 'read'>): ByteSource {
  return {
    ...src,
    read(position, length) {
      const out = new Uint8Array(length);
      src.readInto(out, position);
      return out;
    },
  };
}

/** Positional reads from an open descriptor; `owned` descriptors are closed by close(). */
function fdSource(name: string, fd: number, size: number, owned: boolean): ByteSource {
  return withRead({
    name,
    size,
    ref: { fd, size },
    readInto(dst, position) {
      if (position + dst.length > size) throw truncated(name, position + dst.length, size);
      let done = 0;
      while (done < dst.length) {
        const got = fs.readSync(fd, dst, done, dst.length - done, position + done);
        if (got === 0) throw truncated(name, position + dst.length, position + done);
        done += got;
      }
    },
    close() {
      if (owned) fs.closeSync(fd);
    },
  });
}

/** A source over bytes in memory, held as one or more consecutive blocks. */
function memorySource(name: string, blocks: Uint8Array | Uint8Array[]): ByteSource {
  const list = Array.isArray(blocks) ? blocks : [blocks];
  const starts: number[] = [];
  let size = 0;
  for (const b of list) {
    starts.push(size);
    size += b.length;
  }
  return withRead({
    name,
    size,
    ref: { blocks: list, size },
    readInto(dst, position) {
      if (position + dst.length > size) throw truncated(name, position + dst.length, size);
      let done = 0;
      // Find the block holding `position`, then copy across as many blocks as needed.
      let i = starts.length - 1;
      while (starts[i] > position) i--;
      while (done < dst.length) {
        const b = list[i];
        const from = position + done - starts[i];
        const k = Math.min(b.length - from, dst.length - done);
        dst.set(b.subarray(from, from + k), done);
        done += k;
        i++;
      }
    },
    close() {},
  });
}

/** Rebuild a source in a worker thread from the main thread's ref (nothing is copied or reopened). */
export function sourceFromRef(name: string, ref: SourceRef): ByteSource {
  return 'fd' in ref ? fdSource(name, ref.fd, ref.size, false) : memorySource(name, ref.blocks);
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
  return fdSource(path, fd, st.size, true);
}

const STDIN_BLOCK = 16 << 20;

/**
 * stdin redirected from a file is read by position like any file (no copy in memory). A pipe is
 * read to its end into 16 MiB shared-memory blocks: one copy, no concatenation.
 */
export function readStdin(): ByteSource {
  if (isatty(0)) throw badInput('stdin', 'is a terminal; pipe a file in (vlc ... - < vectors.npy) or give a path');
  const st = fs.fstatSync(0);
  if (st.isFile()) {
    if (st.size === 0) throw badInput('stdin', 'is empty (0 bytes)');
    return fdSource('stdin', 0, st.size, false);
  }
  const blocks: Uint8Array[] = [];
  let block = new Uint8Array(new SharedArrayBuffer(STDIN_BLOCK));
  let filled = 0;
  for (;;) {
    if (filled === block.length) {
      blocks.push(block);
      block = new Uint8Array(new SharedArrayBuffer(STDIN_BLOCK));
      filled = 0;
    }
    const got = readSome(block, filled);
    if (got === 0) break;
    filled += got;
  }
  if (filled > 0) blocks.push(block.subarray(0, filled));
  if (blocks.length === 0) throw badInput('stdin', 'is empty (0 bytes)');
  return memorySource('stdin', blocks);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** One read(2) from fd 0; a non-blocking pipe with nothing yet is waited on briefly and retried. */
function readSome(buf: Uint8Array, at: number): number {
  for (;;) {
    try {
      return fs.readSync(0, buf, at, buf.length - at, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 5);
      else if (code === 'EOF') return 0;
      else throw badInput('stdin', `cannot read (${code ?? (e as Error).message})`);
    }
  }
}
