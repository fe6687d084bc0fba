// The central directory of a zip archive (what .npz files are): member names, compression method,
// sizes and where each member's bytes start, zip64 included (numpy writes large members as zip64).
// Every size and offset is checked against the bytes present before anything is read or allocated.
import { badInput, type ByteSource } from './source.js';

export interface ZipMember {
  name: string;
  /** 0: stored, 8: deflated (the two methods numpy and Python's zipfile write). */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Where the member's (possibly compressed) bytes start in the archive. */
  dataOffset: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** End-of-central-directory record (22 bytes) plus the longest comment it may carry. */
const EOCD_SEARCH = 22 + 0xffff;
const U32_MAX = 0xffffffff;

type Reader = { u16(at: number): number; u32(at: number): number; u64(at: number): number };
function reader(bytes: Uint8Array): Reader {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    u16: (at) => dv.getUint16(at, true),
    u32: (at) => dv.getUint32(at, true),
    // Sizes past 2^53 are not real files; Number() keeps the check below honest for the rest.
    u64: (at) => Number(dv.getBigUint64(at, true)),
  };
}

/** The archive's members, in central-directory order. */
export function readZipDirectory(src: ByteSource): ZipMember[] {
  const bad = (what: string) => badInput(src, `not a valid zip/.npz archive: ${what}`);
  const tailLength = Math.min(src.size, EOCD_SEARCH);
  const tail = src.read(src.size - tailLength, tailLength);
  const t = reader(tail);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0 && eocd < 0; i--) if (t.u32(i) === EOCD) eocd = i;
  if (eocd < 0) throw bad('no end-of-central-directory record (truncated?)');
  let entries = t.u16(eocd + 10);
  let cdSize = t.u32(eocd + 12);
  let cdOffset = t.u32(eocd + 16);
  if (entries === 0xffff || cdSize === U32_MAX || cdOffset === U32_MAX) {
    // zip64: a locator right before the record points at the 64-bit end record.
    const locatorAt = src.size - tailLength + eocd - 20;
    if (locatorAt < 0) throw bad('zip64 locator missing');
    const loc = reader(src.read(locatorAt, 20));
    if (loc.u32(0) !== ZIP64_LOCATOR) throw bad('zip64 locator missing');
    const recordAt = loc.u64(8);
    if (recordAt + 56 > locatorAt) throw bad('zip64 end record lies outside the archive');
    const rec = reader(src.read(recordAt, 56));
    if (rec.u32(0) !== ZIP64_EOCD) throw bad('zip64 end record missing');
    entries = rec.u64(32);
    cdSize = rec.u64(40);
    cdOffset = rec.u64(48);
  }
  if (cdOffset + cdSize > src.size) throw bad(`central directory (${cdSize} bytes at ${cdOffset}) runs past the end (${src.size} bytes)`);
  if (entries * 46 > cdSize) throw bad(`${entries} entries cannot fit in a ${cdSize}-byte central directory`);
  const cd = src.read(cdOffset, cdSize);
  const c = reader(cd);
  const members: ZipMember[] = [];
  let at = 0;
  for (let k = 0; k < entries; k++) {
    if (at + 46 > cd.length || c.u32(at) !== CENTRAL) throw bad(`central directory entry ${k} is damaged`);
    const flags = c.u16(at + 8);
    const nameLength = c.u16(at + 28);
    const extraLength = c.u16(at + 30);
    const commentLength = c.u16(at + 32);
    const end = at + 46 + nameLength + extraLength + commentLength;
    if (end > cd.length) throw bad(`central directory entry ${k} runs past the directory`);
    const name = new TextDecoder().decode(cd.subarray(at + 46, at + 46 + nameLength));
    if (flags & 1) throw badInput(src, `member '${name}' is encrypted; vlc reads unencrypted .npz files only`);
    let size = c.u32(at + 24);
    let compressedSize = c.u32(at + 20);
    let localOffset = c.u32(at + 42);
    if (size === U32_MAX || compressedSize === U32_MAX || localOffset === U32_MAX) {
      // The zip64 extra field (id 1) holds, in this order, exactly the fields saturated above.
      const wide = zip64Extra(cd.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength));
      if (!wide) throw bad(`member '${name}' has 32-bit fields saturated but no zip64 extra field`);
      let i = 0;
      const next = () => {
        if (i + 8 > wide.length) throw bad(`member '${name}' has a short zip64 extra field`);
        const v = reader(wide).u64(i);
        i += 8;
        return v;
      };
      if (size === U32_MAX) size = next();
      if (compressedSize === U32_MAX) compressedSize = next();
      if (localOffset === U32_MAX) localOffset = next();
    }
    members.push({ name, method: c.u16(at + 10), crc32: c.u32(at + 16), compressedSize, size, dataOffset: dataStart(src, name, localOffset, compressedSize, bad) });
    at = end;
  }
  return members;
}

/** The zip64 extended-information field among a header's extra fields, or undefined. */
function zip64Extra(extra: Uint8Array): Uint8Array | undefined {
  const e = reader(extra);
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = e.u16(at);
    const length = e.u16(at + 2);
    if (id === 1) return extra.subarray(at + 4, Math.min(extra.length, at + 4 + length));
    at += 4 + length;
  }
  return undefined;
}

/** A member's data follows its local header, whose name and extra lengths may differ from the directory's. */
function dataStart(src: ByteSource, name: string, localOffset: number, compressedSize: number, bad: (what: string) => Error): number {
  if (localOffset + 30 > src.size) throw bad(`member '${name}' starts past the end of the archive`);
  const h = reader(src.read(localOffset, 30));
  if (h.u32(0) !== LOCAL) throw bad(`member '${name}' has no local header at offset ${localOffset}`);
  const start = localOffset + 30 + h.u16(26) + h.u16(28);
  if (start + compressedSize > src.size)
    throw badInput(src, `truncated .npz: member '${name}' needs ${compressedSize} bytes at offset ${start}, the archive has ${src.size}`);
  return start;
}
