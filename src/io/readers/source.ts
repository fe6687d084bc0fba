// Where input bytes come from: a file (or stdin redirected from a file) read by position, so
// large inputs go straight into the destination array; or a stream (stream.ts) held once in
// shared memory blocks (formats are sniffed from the bytes and most need random access).
import * as fs from 'node:fs';
import { UsageError } from '../../errors.js';
import { quoteName } from '../names.js';

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
  /** Bytes read by worker threads from `ref` (parallel-read.ts), counted for progress as readInto counts its own. */
  counted?(bytes: number): void;
  close(): void;
}

/** UsageError for a problem with the input, always starting with its name (quoted when odd). */
export function badInput(src: { name: string } | string, problem: string): UsageError {
  return new UsageError(`${quoteName(typeof src === 'string' ? src : src.name)}: ${problem}`);
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

/**
 * Positional reads from an open descriptor; `owned` descriptors are closed by close().
 * `onBytes` hears the bytes read so far (progress).
 */
export function fdSource(name: string, fd: number, size: number, owned: boolean, onBytes?: (read: number) => void): ByteSource {
  let total = 0;
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
      total += done;
      onBytes?.(total);
    },
    counted(bytes) {
      total += bytes;
      onBytes?.(total);
    },
    close() {
      if (owned) fs.closeSync(fd);
    },
  });
}

/** A source over bytes in memory, held as one or more consecutive blocks. */
export function memorySource(name: string, blocks: Uint8Array | Uint8Array[]): ByteSource {
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

/** A regular file, read by position (tests and tools; commands go through stream.ts openInput). */
export function openFileSource(path: string): ByteSource {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (e) {
    throw badInput(path, `cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!st.isFile()) throw badInput(path, 'is not a regular file');
  return fdSource(path, fs.openSync(path, 'r'), st.size, true);
}
