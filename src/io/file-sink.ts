// The sink of a regular file that compress and decompress write (io/output.ts writeFile): every
// chunk at its own position, a large one in pieces written at once on libuv's threads.
import * as fs from 'node:fs';
import type { ByteSink, WriteSync } from './output.js';

/** Bytes per write call: Node refuses more than 2 GiB in one (a .vlc section may be larger). */
export const WRITE_MAX = 2 ** 30;

/** Chunks at least this large go to a regular file in pieces written at once (fileSink). */
const PARALLEL_WRITE_MIN = 64 << 20;
/** The pieces' size, and how many are written at a time (libuv's thread pool holds 4 threads). */
const WRITE_PIECE = 16 << 20;
const WRITES_AT_ONCE = 4;

/**
 * A regular file's sink: each chunk at its position. A large chunk is cut into pieces written at
 * once on libuv's threads, each a copy into the page cache that one thread would make in turn (a
 * 2.5 GB .vlc took most of a second on one). The chunk is whole in the file when write resolves.
 * An injected writeSync (tests) takes every chunk itself.
 */
export function fileSink(fd: number, writeSync: WriteSync): ByteSink {
  let pos = 0;
  return {
    write: async (c) => {
      if (c.length >= PARALLEL_WRITE_MIN && writeSync === fs.writeSync) await writePieces(fd, c, pos);
      else for (let off = 0; off < c.length; ) off += writeSync(fd, c, off, Math.min(WRITE_MAX, c.length - off), pos + off);
      pos += c.length;
    },
  };
}

/**
 * `c` written at `pos` as WRITE_PIECE pieces, WRITES_AT_ONCE at a time (a short write goes on where
 * it stopped). A failure stops the pieces not yet begun, and is thrown once no write is in flight:
 * the caller closes the file next, and a write still running could land in whatever file takes
 * its descriptor's number.
 */
async function writePieces(fd: number, c: Uint8Array, pos: number): Promise<void> {
  let next = 0, failed = false;
  const writer = async () => {
    for (let at = next; at < c.length && !failed; at = next) {
      next += WRITE_PIECE;
      const end = Math.min(c.length, at + WRITE_PIECE);
      try {
        for (let off = at; off < end; ) off += await writeAsync(fd, c, off, end - off, pos + off);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const done = await Promise.allSettled(Array.from({ length: WRITES_AT_ONCE }, writer));
  const failure = done.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
}

const writeAsync = (fd: number, c: Uint8Array, off: number, length: number, position: number) =>
  new Promise<number>((resolve, reject) => fs.write(fd, c, off, length, position, (e, n) => (e ? reject(e) : resolve(n))));
