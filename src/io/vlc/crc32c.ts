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
