// Small host-side costs that code comments rely on: how long the optional reader/writer
// libraries take to import (why they load only when a file needs them: src/io/write.ts,
// src/io/readers/decode-worker.ts) and the CRC32C throughput (why checksumming every .vlc
// section is cheap: src/io/vlc/crc32c.ts).
// Usage: npx tsc -p . && node bench/host_costs.mjs [--out bench/results/host_costs.json]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { crc32c } from '../dist/io/vlc/crc32c.js';

/** Median wall ms of importing `spec` in a fresh node process (so nothing is cached), over `runs`. */
function importMs(spec, runs = 5) {
  const code = `const t = performance.now(); await import(${JSON.stringify(spec)}); console.log(performance.now() - t);`;
  const ms = Array.from({ length: runs }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', code]).toString()));
  return ms.sort((a, b) => a - b)[runs >> 1];
}

const imports = Object.fromEntries(['apache-arrow', 'hyparquet', 'hyparquet-compressors'].map((p) => [p, importMs(p)]));

const buf = new Uint8Array(64 << 20);
for (let i = 0; i < buf.length; i++) buf[i] = (i * 2654435761) >>> 24;
crc32c(buf.subarray(0, 1 << 20)); // warm-up
const rounds = [];
for (let r = 0; r < 5; r++) {
  const t = performance.now();
  crc32c(buf);
  rounds.push(buf.length / 1e6 / ((performance.now() - t) / 1000));
}
const result = {
  bench: 'host_costs',
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.availableParallelism(), node: process.version, load: os.loadavg() },
  import_ms_median_of_5: imports,
  crc32c_mb_per_s: rounds.sort((a, b) => a - b)[2],
};
const json = JSON.stringify(result, null, 2) + '\n';
const out = process.argv.indexOf('--out');
if (out > 0) writeFileSync(process.argv[out + 1], json);
process.stdout.write(json);
