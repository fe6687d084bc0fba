// Bytes of any size held in memory: a .vlc file read whole, or one section's payload in it. A file
// over 4 GiB cannot be one Uint8Array (nor one Buffer, nor one fs read), so it is read into ONE
// buffer of any size (a SharedArrayBuffer: checksum threads read it too) and everything that reads
// it asks for views of the part it needs: view(offset, length) for a header or a codec's fixed
// fields, pieces() for whatever is as large as the codes (checksums, code range checks), each piece
// at most viewLimitBytes() (1 GiB; tests shrink it, so a small file's sections come in many
// pieces). Offsets are numbers (never 32-bit integer arithmetic): they pass 2^32.
import * as fs from 'node:fs';
import { viewLimitBytes } from '../../vectors/dataset.js';
import { crc32c } from './crc32c.js';

export class Payload {
  constructor(
    readonly buffer: ArrayBufferLike,
    readonly byteOffset: number,
    readonly length: number,
  ) {
    if (!(Number.isSafeInteger(byteOffset) && Number.isSafeInteger(length) && byteOffset >= 0 && length >= 0 && byteOffset + length <= buffer.byteLength))
      throw new RangeError(`a payload of ${length} bytes at ${byteOffset} does not lie in its ${buffer.byteLength}-byte buffer`);
  }

  /** The bytes of one typed array, as a payload (no copy). */
  static of(bytes: Uint8Array): Payload {
    return new Payload(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** Bytes [offset, offset + length) as a view (no copy): for parts one typed array holds (headers, fixed fields, a piece). */
  view(offset: number, length: number): Uint8Array {
    this.assertInside(offset, length);
    return new Uint8Array(this.buffer, this.byteOffset + offset, length);
  }

  /** Bytes [offset, offset + length) (default: to the end) as a payload of their own. */
  sub(offset: number, length = this.length - offset): Payload {
    this.assertInside(offset, length);
    return new Payload(this.buffer, this.byteOffset + offset, length);
  }

  /**
   * Bytes [offset, offset + out.length) copied into `out`: a file's payload reads them on one of
   * libuv's threads (FilePayload), so several reads run at once and the caller's thread goes on.
   */
  async readInto(offset: number, out: Uint8Array): Promise<void> {
    this.readIntoSync(offset, out);
  }

  /** readInto on this thread: a file's bytes go straight into `out` (view() would read them into an array of their own first). */
  readIntoSync(offset: number, out: Uint8Array): void {
    out.set(this.view(offset, out.length));
  }

  /** Refuses bytes [offset, offset + length) that do not lie in the payload. */
  protected assertInside(offset: number, length: number): void {
    if (!(offset >= 0 && length >= 0 && offset + length <= this.length))
      throw new RangeError(`bytes ${offset}..${offset + length} are outside a ${this.length}-byte payload`);
  }

  /** Byte at `offset`. */
  at(offset: number): number {
    return this.view(offset, 1)[0];
  }

  /** The whole payload as one view: only for payloads one typed array holds (a codec's small section, tests). */
  bytes(): Uint8Array {
    return this.view(0, this.length);
  }

  /** The payload as consecutive views of at most `size` bytes (default: the view limit), with where each starts. */
  *pieces(size = viewLimitBytes()): Generator<{ bytes: Uint8Array; at: number }> {
    const step = Math.max(1, size);
    for (let at = 0; at < this.length; at += step) yield { bytes: this.view(at, Math.min(step, this.length - at)), at };
  }

  /** The CRC32C of bytes [from, to), a piece at a time, telling `onPiece(end)` after each. */
  crc(from = 0, to = this.length, onPiece?: (end: number) => void, size = viewLimitBytes()): number {
    let c = 0;
    for (let at = from; at < to; ) {
      const end = Math.min(to, at + Math.max(1, size));
      c = crc32c(this.view(at, end - at), c);
      onPiece?.(end);
      at = end;
    }
    return c;
  }

  /** Whether bytes [from, to) are all zero. */
  zero(from: number, to: number): boolean {
    for (let at = from; at < to; ) {
      const end = Math.min(to, at + viewLimitBytes());
      if (this.view(at, end - at).some((b) => b !== 0)) return false;
      at = end;
    }
    return true;
  }
}

/**
 * A payload that stays in its file: each view is read from the file when asked for (a fresh copy).
 * What a large .vlc is decoded through when its codes are read a block of rows at a time
 * (io/vlc/file.ts openVlcRows): the checks and checksums read it a piece at a time; nothing in it
 * is one buffer (buffer and byteOffset are empty: only view() and what goes through it read it).
 */
export class FilePayload extends Payload {
  constructor(
    readonly fd: number,
    readonly start: number,
    length: number,
  ) {
    super(new ArrayBuffer(0), 0, 0);
    (this as { length: number }).length = length;
  }

  override view(offset: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    this.readIntoSync(offset, out);
    return out;
  }

  override readIntoSync(offset: number, out: Uint8Array): void {
    this.assertInside(offset, out.length);
    for (let done = 0; done < out.length; ) done += this.got(fs.readSync(this.fd, out, done, out.length - done, this.start + offset + done), offset, out.length, done);
  }

  override async readInto(offset: number, out: Uint8Array): Promise<void> {
    this.assertInside(offset, out.length);
    for (let done = 0; done < out.length; ) done += this.got(await readAt(this.fd, out, done, out.length - done, this.start + offset + done), offset, out.length, done);
  }

  /** The `got` bytes a read of bytes [offset, offset + length) returned `done` bytes in; none: the file ended early. */
  private got(got: number, offset: number, length: number, done: number): number {
    if (got === 0) throw new RangeError(`the file ends at ${this.start + offset + done}, inside bytes ${offset}..${offset + length} of a payload`);
    return got;
  }

  override sub(offset: number, length = this.length - offset): Payload {
    this.assertInside(offset, length);
    return new FilePayload(this.fd, this.start + offset, length);
  }
}

/** One positional read on libuv's thread pool (fs.read): the bytes it got. */
function readAt(fd: number, out: Uint8Array, at: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, out, at, length, position, (e, got) => (e ? reject(e) : resolve(got))));
}

/** A payload as section readers take it: a Payload, or bytes in one array (tests, small callers). */
export type PayloadLike = Payload | Uint8Array;

export function asPayload(p: PayloadLike): Payload {
  return p instanceof Payload ? p : Payload.of(p);
}

/** 8-byte alignment of a file offset, in number arithmetic (a bitwise `& ~7` wraps past 2^31). */
export function up8(x: number): number {
  return Math.ceil(x / 8) * 8;
}
