// One member of a zip archive as a ByteSource of its own, so the .npy reader runs on it unchanged:
// a stored member is a window onto the archive (read in place, no copy); a deflated one is
// inflated on the fly by fflate as the reader moves forward. Both check the member's CRC-32 when
// the reader has gone through every byte in order (the usual case) and its length always.
import { crc32 } from 'node:zlib';
import { Inflate } from 'fflate';
import { badInput, type ByteSource, type SourceRef } from './source.js';
import type { ZipMember } from './zip.js';

/** Compressed bytes fed to the inflater at a time. */
const INFLATE_INPUT = 1 << 20;
/** Output kept from the start of a deflated member, so the .npy header can be read more than once. */
const KEPT_HEAD = 64 << 10;

/**
 * Deflate cannot expand by more than 1032:1 (a 258-byte match costs at least 2 bits), so a
 * directory promising more is lying: caught before the .npy reader allocates what it promises.
 */
const MAX_DEFLATE_RATIO = 1032;

/** Thrown when a reader seeks backwards in a deflated member (the Fortran-order .npy path does). */
export class BackwardRead extends Error {}

/** CRC-32 of the bytes read so far, as long as they were read in order from the start. */
class SequentialCrc {
  private crc = 0;
  private covered = 0;
  private inOrder = true;
  constructor(private readonly member: ZipMember, private readonly name: string) {}

  see(bytes: Uint8Array, position: number): void {
    if (!this.inOrder || position + bytes.length <= this.covered) return;
    if (position > this.covered) {
      this.inOrder = false; // a gap: the reader skipped bytes, so there is nothing to compare
      return;
    }
    this.crc = crc32(bytes.subarray(this.covered - position), this.crc);
    this.covered = position + bytes.length;
  }

  /** After the last read: a complete in-order pass must match the directory's CRC. */
  check(): void {
    if (this.inOrder && this.covered === this.member.size && this.crc >>> 0 !== this.member.crc32)
      throw badInput(this.name, `member '${this.member.name}' fails its CRC-32 check: the archive is corrupted`);
  }
}

export interface MemberSource extends ByteSource {
  /** Call once the reader is done: checks length and CRC-32. */
  finish(): void;
}

/** The ByteSource around a member's readInto (the archive stays open: close() is the caller's). */
function asMemberSource(archive: ByteSource, m: ZipMember, readInto: (dst: Uint8Array, at: number) => void, finish: () => void): MemberSource {
  return {
    name: archive.name,
    size: m.size,
    readInto,
    read: (at, length) => {
      const out = new Uint8Array(length);
      readInto(out, at);
      return out;
    },
    get ref(): SourceRef {
      throw new Error('a zip member source cannot be handed to a decoder worker');
    },
    finish,
    close: () => {},
  };
}

/** A stored member: reads go straight to the archive, at the member's offset. */
export function storedMember(archive: ByteSource, m: ZipMember): MemberSource {
  if (m.compressedSize !== m.size)
    throw badInput(archive, `member '${m.name}' is stored but its sizes differ (${m.compressedSize} vs ${m.size}): the archive is corrupted`);
  const crc = new SequentialCrc(m, archive.name);
  const readInto = (dst: Uint8Array, position: number) => {
    if (position + dst.length > m.size) throw badInput(archive, `truncated member '${m.name}': needed ${position + dst.length} bytes, it has ${m.size}`);
    archive.readInto(dst, m.dataOffset + position);
    crc.see(dst, position);
  };
  return asMemberSource(archive, m, readInto, () => crc.check());
}

/**
 * A deflated member, inflated as it is read: memory stays at a few MiB whatever the member's
 * size. Reads must move forward, except within the first KEPT_HEAD bytes (the header).
 */
export function deflatedMember(archive: ByteSource, m: ZipMember): MemberSource {
  const corrupt = (why: string) => badInput(archive, `member '${m.name}' cannot be inflated (${why}): the archive is corrupted`);
  if (m.size > m.compressedSize * MAX_DEFLATE_RATIO + 64)
    throw corrupt(`the directory says ${m.size} bytes from ${m.compressedSize} compressed, more than deflate can produce`);
  const pending: Uint8Array[] = []; // inflated, not yet consumed
  let pendingAt = 0; // offset into pending[0]
  let produced = 0; // bytes the inflater has given so far
  let position = 0; // member offset of the next unconsumed byte
  let fed = 0; // compressed bytes pushed
  let ended = false;
  const head = new Uint8Array(Math.min(KEPT_HEAD, m.size));
  const crc = new SequentialCrc(m, archive.name);
  const inflater = new Inflate((chunk, final) => {
    if (produced < head.length) head.set(chunk.subarray(0, head.length - produced), produced);
    crc.see(chunk, produced);
    produced += chunk.length;
    if (produced > m.size) throw corrupt(`it inflates past the ${m.size} bytes the directory promises`);
    if (chunk.length > 0) pending.push(chunk);
    if (final) ended = true;
  });

  /** Push the next compressed piece; false when there is nothing left to push. */
  const pump = (): boolean => {
    if (fed >= m.compressedSize) return false;
    const k = Math.min(INFLATE_INPUT, m.compressedSize - fed);
    const piece = archive.read(m.dataOffset + fed, k);
    fed += k;
    try {
      inflater.push(piece, fed === m.compressedSize);
    } catch (e) {
      if ((e as Error).name === 'UsageError') throw e;
      throw corrupt((e as Error).message);
    }
    return true;
  };

  /** Move `length` bytes from the inflated stream to dst (or drop them when dst is undefined). */
  const take = (dst: Uint8Array | undefined, length: number) => {
    let done = 0;
    while (done < length) {
      if (pending.length === 0) {
        if (!pump()) throw corrupt(`it ends after ${produced} of ${m.size} bytes`);
        continue;
      }
      const chunk = pending[0];
      const k = Math.min(chunk.length - pendingAt, length - done);
      dst?.set(chunk.subarray(pendingAt, pendingAt + k), done);
      done += k;
      pendingAt += k;
      if (pendingAt === chunk.length) {
        pending.shift();
        pendingAt = 0;
      }
    }
    position += length;
  };

  const readInto = (dst: Uint8Array, at: number) => {
    if (at + dst.length > m.size) throw badInput(archive, `truncated member '${m.name}': needed ${at + dst.length} bytes, it has ${m.size}`);
    if (at < position) {
      if (at + dst.length > head.length) throw new BackwardRead();
      while (produced < Math.min(at + dst.length, head.length)) if (!pump()) throw corrupt(`it ends after ${produced} of ${m.size} bytes`);
      dst.set(head.subarray(at, at + dst.length));
      return;
    }
    take(undefined, at - position);
    take(dst, dst.length);
  };

  return asMemberSource(archive, m, readInto, () => {
    while (!ended && pump());
    if (!ended || produced !== m.size) throw corrupt(`it inflates to ${produced} bytes, the directory says ${m.size}`);
    crc.check();
  });
}
