// Reading speed and memory of the .npy reader (the path every large compress starts with).
// Usage: npx tsc -p . && node bench/read_speed.mjs [n=1000000] [d=384]
// Writes an n×d f32 .npy under the OS temp dir, times readDataset() on it, prints one JSON line
// (ms, peak RSS, RSS / file size; the target is peak RSS under 2× the file), then deletes it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readDataset } from '../dist/io/read.js';

const n = Number(process.argv[2] ?? 1_000_000);
const d = Number(process.argv[3] ?? 384);
const file = path.join(os.tmpdir(), `vlc-read-speed-${process.pid}.npy`);

// A v1 .npy header padded to 64 bytes, then the rows, written in slices to keep memory flat.
let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${n}, ${d}), }`;
header = header.padEnd(64 * Math.ceil((header.length + 11) / 64) - 11, ' ') + '\n';
const fd = fs.openSync(file, 'w');
fs.writeSync(fd, Buffer.concat([Buffer.from([0x93]), Buffer.from('NUMPY'), Buffer.from([1, 0]),
  Buffer.from(new Uint16Array([header.length]).buffer), Buffer.from(header, 'latin1')]));
const rows = 10_000;
const slice = new Float32Array(rows * d);
for (let i0 = 0; i0 < n; i0 += rows) {
  const k = Math.min(rows, n - i0);
  for (let q = 0; q < k * d; q++) slice[q] = Math.sin(i0 * d + q);
  fs.writeSync(fd, new Uint8Array(slice.buffer, 0, k * d * 4));
}
fs.closeSync(fd);
const bytes = fs.statSync(file).size;

try {
  const t0 = performance.now();
  const ds = await readDataset(file);
  const ms = performance.now() - t0;
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ bench: 'read_speed', n: ds.n, d: ds.d, file_bytes: bytes, ms: Math.round(ms),
    peak_rss_bytes: peak, rss_over_file: +(peak / bytes).toFixed(3) }));
} finally {
  fs.rmSync(file, { force: true });
}
