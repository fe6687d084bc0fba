// CRC32C (Castagnoli polynomial, as in iSCSI, ext4 and SSE4.2's crc32 instruction), the checksum of
// every .vlc section. Written here rather than pulled in as a dependency: it is 40 lines.
// Slicing-by-8 (8 lookup tables, 8 bytes per step); its throughput, measured by
// bench/host_costs.mjs, is in bench/results/host_costs.json.

const POLY = 0x82f63b78; // reflected 0x1EDC6F41

const TABLES: Uint32Array[] = (() => {
  const t = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[0][i] = c >>> 0;
  }
  for (let i = 0; i < 256; i++) {
    for (let s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >>> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
})();

/**
 * CRC32C of `bytes`, continuing from `crc` (the value a previous call returned) so a checksum
 * can run over several pieces. crc32c(ascii '123456789') = 0xe3069283.
 */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n % 8);
  for (; i < end8; i += 8) {
    const lo = (c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24))) >>> 0;
    c =
      t7[lo & 0xff] ^
      t6[(lo >>> 8) & 0xff] ^
      t5[(lo >>> 16) & 0xff] ^
      t4[lo >>> 24] ^
      t3[bytes[i + 4]] ^
      t2[bytes[i + 5]] ^
      t1[bytes[i + 6]] ^
      t0[bytes[i + 7]];
  }
  for (; i < n; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
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
