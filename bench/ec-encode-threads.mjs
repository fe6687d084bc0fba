// Seconds the 'ec' encoder takes over a real compress's rows (src/codecs/ec/encode.ts encodeEc): the
// vectors of an input and the anchors and assignments of a .vlc compressed from it, coded to a byte
// target (default: the file's own residual section size) on each thread count asked for, wall and
// CPU time (user + system of every thread of the process) per run, and the section's sha256 — the
// same for every thread count. --dist runs another build's encoder (its dist/: a before/after on the
// same rows; a build whose encodeEc has no threads option runs on one thread whatever is asked).
// Usage: node bench/ec-encode-threads.mjs X.npy FILE.vlc [--threads 1,2] [--bytes B] [--dist DIR] [--rounds R] [--json OUT]
//   --bytes: payload bytes a vector (else the file's residual section); --rounds: each thread count
//   R times, rounds interleaved (a shared machine's load falls on each alike).
// (needs npx tsc -p . first)
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const flag = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : process.argv.splice(i, 2)[1];
};
const threadList = flag('--threads', '1,2').split(',').map(Number);
const perVector = flag('--bytes', undefined);
const dist = path.resolve(flag('--dist', path.join(root, 'dist')));
const rounds = Number(flag('--rounds', 1));
const jsonOut = flag('--json', undefined);
const [xPath, vlcPath] = process.argv.slice(2);
if (!xPath || !vlcPath) {
  console.error('usage: node bench/ec-encode-threads.mjs X.npy FILE.vlc [--threads 1,2] [--bytes B] [--dist DIR] [--rounds R] [--json OUT]');
  process.exit(2);
}

const { readVectors, openVlc } = await import(path.join(root, 'dist/index.js'));
const { encodeEc } = await import(path.join(dist, 'codecs/ec/encode.js'));
const x = await readVectors(xPath);
const file = await openVlc(vlcPath);
const { n, d } = file.manifest;
if (x.n !== n || x.d !== d) throw new Error(`${xPath} is ${x.n} × ${x.d}, ${vlcPath} ${n} × ${d}`);
const input = { x, n, d, anchors: file.anchors, assign: Uint32Array.from(file.assignments) };
const target = perVector ? Math.floor(Number(perVector) * n) : file.residuals.payloadBytes();

const runs = [];
for (let r = 0; r < rounds; r++)
  for (const threads of threadList) {
    const c0 = process.cpuUsage(), t0 = performance.now();
    const out = await encodeEc(input, { payloadBytes: target }, { threads });
    const wall = (performance.now() - t0) / 1000, c = process.cpuUsage(c0);
    const h = createHash('sha256');
    for (const p of out.residuals.payload()) h.update(p);
    const run = {
      threads, wall_s: +wall.toFixed(2), cpu_s: +((c.user + c.system) / 1e6).toFixed(2),
      payload_bytes: out.residuals.payloadBytes(), rotated: out.residuals.layout.rotation !== undefined,
      coded: out.residuals.layout.dims.length, residual_energy: out.residualEnergy, sha256: h.digest('hex'),
    };
    runs.push(run);
    console.log(JSON.stringify(run));
  }
const result = { date: new Date().toISOString(), host: os.hostname(), cpus: os.availableParallelism(), dist, input: xPath, vlc: vlcPath, n, d, target_payload_bytes: target, runs };
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(result, null, 2) + '\n');
