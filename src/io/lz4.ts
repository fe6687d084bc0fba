// LZ4 frame format (https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md), decoder and a
// small greedy encoder. apache-arrow's JS reader decompresses IPC buffers only through codecs
// registered by the application, and ships none; Feather v2 files are LZ4-frame compressed by
// default when written by pyarrow, so vlc brings its own.

const FRAME_MAGIC = 0x184d2204;
const MIN_MATCH = 4;
/** The last 5 bytes of a block are always literals, and the last match starts 12 bytes before the end. */
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const BLOCK_SIZES: Record<number, number> = { 4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20 };

class Lz4Error extends Error {}

/** Growable output buffer. */
class Out {
  buf: Uint8Array;
  len = 0;
  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(64, capacity));
  }
  reserve(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}

/** Decode one or more concatenated LZ4 frames (skippable frames are skipped). */
export function lz4FrameDecode(input: Uint8Array): Uint8Array {
  const dv = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const out = new Out(input.length * 3);
  let p = 0;
  while (p < input.length) {
    if (p + 4 > input.length) throw new Lz4Error('truncated LZ4 frame header');
    const magic = dv.getUint32(p, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // Skippable frame: magic, u32 size, payload.
      p += 8 + dv.getUint32(p + 4, true);
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new Lz4Error(`not an LZ4 frame (magic 0x${magic.toString(16)})`);
    const flg = input[p + 4];
    if (flg >> 6 !== 1) throw new Lz4Error(`unsupported LZ4 frame version ${flg >> 6}`);
    const blockChecksum = (flg & 0x10) !== 0;
    const hasContentSize = (flg & 0x08) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    const hasDictId = (flg & 0x01) !== 0;
    if (hasDictId) throw new Lz4Error('LZ4 frames with a dictionary are not supported');
    p += 6; // magic, FLG, BD
    if (hasContentSize) {
      // A hint only: trust it for preallocation when plausible (LZ4 expands at most ~255x).
      const size = Number(dv.getBigUint64(p, true));
      if (size <= input.length * 255) out.reserve(size);
      p += 8;
    }
    p += 1; // header checksum (not verified: Arrow checks buffer lengths itself)
    for (;;) {
      if (p + 4 > input.length) throw new Lz4Error('truncated LZ4 block');
      const word = dv.getUint32(p, true);
      p += 4;
      if (word === 0) break; // EndMark
      const size = word & 0x7fffffff;
      if (p + size > input.length) throw new Lz4Error('truncated LZ4 block');
      if (word & 0x80000000) {
        out.reserve(size);
        out.buf.set(input.subarray(p, p + size), out.len);
        out.len += size;
      } else {
        decodeBlock(input, p, p + size, out);
      }
      p += size + (blockChecksum ? 4 : 0);
    }
    if (contentChecksum) p += 4;
  }
  return out.buf.subarray(0, out.len);
}

function decodeBlock(src: Uint8Array, p: number, end: number, out: Out): void {
  while (p < end) {
    const token = src[p++];
    let litLen = token >> 4;
    if (litLen === 15) {
      let b: number;
      do {
        if (p >= end) throw new Lz4Error('corrupt LZ4 block (literal length past the end)');
        litLen += b = src[p++];
      } while (b === 255);
    }
    if (p + litLen > end) throw new Lz4Error('corrupt LZ4 block (literals past the end)');
    out.reserve(litLen);
    out.buf.set(src.subarray(p, p + litLen), out.len);
    out.len += litLen;
    p += litLen;
    if (p >= end) break; // the last sequence has literals only
    if (p + 2 > end) throw new Lz4Error('corrupt LZ4 block (match offset past the end)');
    const offset = src[p] | (src[p + 1] << 8);
    p += 2;
    if (offset === 0 || offset > out.len) throw new Lz4Error('corrupt LZ4 block (bad match offset)');
    let matchLen = (token & 15) + MIN_MATCH;
    if ((token & 15) === 15) {
      let b: number;
      do {
        if (p >= end) throw new Lz4Error('corrupt LZ4 block (match length past the end)');
        matchLen += b = src[p++];
      } while (b === 255);
    }
    out.reserve(matchLen);
    const buf = out.buf;
    let from = out.len - offset;
    // Byte by byte: a match may overlap the bytes it produces (offset < length repeats a pattern).
    for (let i = 0; i < matchLen; i++) buf[out.len++] = buf[from++];
  }
}

/** Encode as one LZ4 frame of independent 4 MiB blocks, with the content size in the header. */
export function lz4FrameEncode(input: Uint8Array): Uint8Array {
  const blockMax = BLOCK_SIZES[7];
  const out = new Out(input.length + (input.length >> 8) + 64);
  const header = new Uint8Array(14);
  const hdv = new DataView(header.buffer);
  hdv.setUint32(0, FRAME_MAGIC, true);
  header[4] = 0x40 | 0x20 | 0x08; // version 01, independent blocks, content size present
  header[5] = 7 << 4; // 4 MiB blocks
  hdv.setBigUint64(6, BigInt(input.length), true);
  const descriptor = header.subarray(4, 14);
  out.buf.set(header, 0);
  out.buf[14] = (xxh32(descriptor, 0) >>> 8) & 0xff;
  out.len = 15;
  const table = new Int32Array(1 << 16);
  for (let start = 0; start < input.length; start += blockMax) {
    const end = Math.min(input.length, start + blockMax);
    out.reserve(4 + (end - start) + ((end - start) >> 8) + 16);
    const sizeAt = out.len;
    out.len += 4;
    const written = encodeBlock(input, start, end, out, table);
    const dv = new DataView(out.buf.buffer);
    if (written >= end - start) {
      // Did not shrink: store raw (high bit set = uncompressed block).
      out.len = sizeAt + 4;
      out.buf.set(input.subarray(start, end), out.len);
      out.len += end - start;
      dv.setUint32(sizeAt, (end - start) | 0x80000000, true);
    } else {
      dv.setUint32(sizeAt, written, true);
    }
  }
  out.reserve(4);
  new DataView(out.buf.buffer).setUint32(out.len, 0, true); // EndMark
  out.len += 4;
  return out.buf.slice(0, out.len);
}

/** Greedy LZ4 block compressor: a hash of each 4-byte sequence remembers its last position. */
function encodeBlock(src: Uint8Array, start: number, end: number, out: Out, table: Int32Array): number {
  table.fill(-1);
  const outStart = out.len;
  const buf = out.buf; // capacity was reserved for the worst case
  let anchor = start;
  let p = start;
  const matchLimit = end - LAST_LITERALS;
  const read32 = (i: number) => (src[i] | (src[i + 1] << 8) | (src[i + 2] << 16) | (src[i + 3] << 24)) >>> 0;
  while (p < end - MF_LIMIT) {
    const seq = read32(p);
    const h = Math.imul(seq, 2654435761) >>> 16;
    const ref = table[h];
    table[h] = p;
    if (ref < start || p - ref > 65535 || read32(ref) !== seq) {
      p++;
      continue;
    }
    let len = MIN_MATCH;
    while (p + len < matchLimit && src[ref + len] === src[p + len]) len++;
    const lit = p - anchor;
    let o = out.len;
    const tokenAt = o++;
    buf[tokenAt] = (Math.min(lit, 15) << 4) | Math.min(len - MIN_MATCH, 15);
    if (lit >= 15) o = writeLength(buf, o, lit - 15);
    buf.set(src.subarray(anchor, p), o);
    o += lit;
    buf[o++] = (p - ref) & 0xff;
    buf[o++] = (p - ref) >> 8;
    if (len - MIN_MATCH >= 15) o = writeLength(buf, o, len - MIN_MATCH - 15);
    out.len = o;
    p += len;
    anchor = p;
  }
  const lit = end - anchor;
  let o = out.len;
  buf[o++] = Math.min(lit, 15) << 4;
  if (lit >= 15) o = writeLength(buf, o, lit - 15);
  buf.set(src.subarray(anchor, end), o);
  o += lit;
  out.len = o;
  return out.len - outStart;
}

function writeLength(buf: Uint8Array, o: number, n: number): number {
  while (n >= 255) {
    buf[o++] = 255;
    n -= 255;
  }
  buf[o++] = n;
  return o;
}

/** xxHash32, used by the frame header checksum. */
function xxh32(data: Uint8Array, seed: number): number {
  const P1 = 2654435761, P2 = 2246822519, P3 = 3266489917, P4 = 668265263, P5 = 374761393;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  const u32 = (i: number) => (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)) >>> 0;
  const round = (acc: number, v: number) => Math.imul(rotl((acc + Math.imul(v, P2)) >>> 0, 13), P1) >>> 0;
  const len = data.length;
  let i = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) >>> 0, v2 = (seed + P2) >>> 0, v3 = seed >>> 0, v4 = (seed - P1) >>> 0;
    for (; i + 16 <= len; i += 16) {
      v1 = round(v1, u32(i));
      v2 = round(v2, u32(i + 4));
      v3 = round(v3, u32(i + 8));
      v4 = round(v4, u32(i + 12));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) >>> 0;
  } else {
    h = (seed + P5) >>> 0;
  }
  h = (h + len) >>> 0;
  for (; i + 4 <= len; i += 4) h = Math.imul(rotl((h + Math.imul(u32(i), P3)) >>> 0, 17), P4) >>> 0;
  for (; i < len; i++) h = Math.imul(rotl((h + Math.imul(data[i], P5)) >>> 0, 11), P1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), P2) >>> 0;
  h = Math.imul(h ^ (h >>> 13), P3) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
