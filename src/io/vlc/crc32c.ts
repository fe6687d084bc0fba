// CRC32C (Castagnoli polynomial, as in iSCSI, ext4 and SSE4.2's crc32 instruction), the checksum of
// every .vlc section. Written here rather than pulled in as a dependency: it is 50 lines.
// Slicing-by-16 (16 lookup tables, 16 bytes per step) over 32-bit little-endian word reads: about
// twice the speed of slicing-by-8 over single bytes; its throughput, measured by
// bench/host_costs.mjs, is in bench/results/host_costs.json.

const POLY = 0x82f63b78; // reflected 0x1EDC6F41
const SLICES = 16;

/** TABLE[s * 256 + b]: the CRC of byte b followed by s zero bytes (slicing-by-16's tables, flat). */
const TABLE: Int32Array = (() => {
  const t = new Int32Array(SLICES * 256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[i] = c;
  }
  for (let s = 1; s < SLICES; s++) {
    for (let i = 0; i < 256; i++) t[s * 256 + i] = (t[(s - 1) * 256 + i] >>> 8) ^ t[t[(s - 1) * 256 + i] & 0xff];
  }
  return t;
})();

/**
 * CRC32C of `bytes`, continuing from `crc` (the value a previous call returned) so a checksum
 * can run over several pieces. crc32c(ascii '123456789') = 0xe3069283.
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const t = TABLE;
  let c = ~crc;
  let i = 0;
  const n = bytes.length;
  // Single bytes up to a 4-byte boundary, so the words below can be read through an Int32Array
  // (little-endian: every platform Node.js ships for).
  for (; i < n && ((bytes.byteOffset + i) & 3) !== 0; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  const blocks = (n - i) >>> 4;
  if (blocks > 0) {
    const w = new Int32Array(bytes.buffer, bytes.byteOffset + i, blocks * 4);
    for (let j = 0; j < w.length; j += 4) {
      const a = c ^ w[j];
      const b = w[j + 1];
      const d = w[j + 2];
      const e = w[j + 3];
      c =
        t[3840 + (a & 0xff)] ^ t[3584 + ((a >>> 8) & 0xff)] ^ t[3328 + ((a >>> 16) & 0xff)] ^ t[3072 + (a >>> 24)] ^
        t[2816 + (b & 0xff)] ^ t[2560 + ((b >>> 8) & 0xff)] ^ t[2304 + ((b >>> 16) & 0xff)] ^ t[2048 + (b >>> 24)] ^
        t[1792 + (d & 0xff)] ^ t[1536 + ((d >>> 8) & 0xff)] ^ t[1280 + ((d >>> 16) & 0xff)] ^ t[1024 + (d >>> 24)] ^
        t[768 + (e & 0xff)] ^ t[512 + ((e >>> 8) & 0xff)] ^ t[256 + ((e >>> 16) & 0xff)] ^ t[e >>> 24];
    }
    i += blocks * 16;
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

// Combining: the CRC of A‖B from crc(A), crc(B) and |B| (zlib's crc32_combine, for this polynomial),
// so that pieces checksummed on several threads give the checksum of the whole.

function gf2Times(mat: Uint32Array, vec: number): number {
  let sum = 0;
  for (let i = 0; vec !== 0; i++, vec >>>= 1) if (vec & 1) sum ^= mat[i];
  return sum >>> 0;
}

function gf2Square(square: Uint32Array, mat: Uint32Array): void {
  for (let n = 0; n < 32; n++) square[n] = gf2Times(mat, mat[n]);
}

/** CRC32C of A followed by B, given crc1 = crc32c(A), crc2 = crc32c(B) and len2 = |B| bytes. */
export function crc32cCombine(crc1: number, crc2: number, len2: number): number {
  if (len2 <= 0) return crc1 >>> 0;
  const even = new Uint32Array(32); // the operator for 2^k zero bits, squared as k grows
  const odd = new Uint32Array(32);
  odd[0] = POLY; // one zero bit
  for (let n = 1, row = 1; n < 32; n++, row = (row << 1) >>> 0) odd[n] = row;
  gf2Square(even, odd); // 2 zero bits
  gf2Square(odd, even); // 4 zero bits: one zero byte is applied first below
  let c = crc1 >>> 0;
  let len = len2;
  for (;;) {
    gf2Square(even, odd);
    if (len % 2) c = gf2Times(even, c);
    len = Math.floor(len / 2);
    if (len === 0) break;
    gf2Square(odd, even);
    if (len % 2) c = gf2Times(odd, c);
    len = Math.floor(len / 2);
    if (len === 0) break;
  }
  return (c ^ crc2) >>> 0;
}

/**
 * The CRC32C of a prefix (crc, as crc32c returns it) followed by pieces of `slice` bytes whose own
 * CRCs are `crcs` (the last piece `total` − (count − 1)·slice bytes long): what the GPU's int8
 * encoder hands over instead of its codes being read again (cuda/residual.cu crc_slices). Shifting
 * a CRC past `slice` zero bytes is linear, so it is built once from the 32 unit vectors and each
 * piece then costs 32 conditional XORs.
 */
export function crc32cJoin(crc: number, crcs: ArrayLike<number>, slice: number, total: number): number {
  if (crcs.length === 0) return crc >>> 0;
  const shift = new Uint32Array(32);
  for (let b = 0; b < 32; b++) shift[b] = crc32cCombine((1 << b) >>> 0, 0, slice);
  let c = crc >>> 0;
  for (let s = 0; s < crcs.length - 1; s++) c = (gf2Times(shift, c) ^ crcs[s]) >>> 0;
  return crc32cCombine(c, crcs[crcs.length - 1], total - (crcs.length - 1) * slice);
}
