// f16 against f32 inputs on the CPU: k-means++ init time (init_seconds of `compress --json`) on
// the same vectors stored both ways, --residual none, for two builds of vlc run alternately (so a
// busy machine slows both alike). Writes one JSON record.
//   node bench/f16-init.mjs --before /work/main/bin/vlc.js --after bin/vlc.js --rounds 2 --out results.json
// The data: 20,000 x 768 unit vectors around 64 centres (seeded numpy), as the issue measured.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const arg = (k, dflt) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : dflt; };
const builds = { before: arg('--before'), after: arg('--after', 'bin/vlc.js') };
const rounds = Number(arg('--rounds', '2'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlc-bench-f16-'));
try {
  execFileSync('python3', ['-c', `
import numpy as np
rng = np.random.default_rng(7)
c = rng.normal(0, 1, (64, 768)).astype(np.float32)
x = (c[rng.integers(0, 64, 20000)] + rng.normal(0, 0.5, (20000, 768))).astype(np.float32)
x /= np.linalg.norm(x, axis=1, keepdims=True)
np.save('${dir}/x32.npy', x); np.save('${dir}/x16.npy', x.astype(np.float16))`]);
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    for (const [build, bin] of Object.entries(builds)) {
      if (!bin) continue;
      for (const dtype of ['f16', 'f32']) {
        const out = path.join(dir, `${build}-${dtype}.vlc`);
        const p = spawnSync(process.execPath, [bin, 'compress', path.join(dir, `x${dtype.slice(1)}.npy`), '-o', out, '-f', '--residual', 'none', '--device', 'cpu', '--json', '-q'], { encoding: 'utf8' });
        if (p.status !== 0) throw new Error(`${build} ${dtype}: ${p.stderr}`);
        const j = JSON.parse(p.stdout);
        const rec = { round: r, build, dtype, init_seconds: +j.init_seconds.toFixed(2), loop_seconds: +j.loop_seconds.toFixed(2), energy: j.energy, m: j.m, load: +os.loadavg()[0].toFixed(1) };
        runs.push(rec);
        console.error(JSON.stringify(rec));
      }
    }
  }
  const same = builds.before ? fs.readFileSync(path.join(dir, 'before-f16.vlc')).equals(fs.readFileSync(path.join(dir, 'after-f16.vlc'))) : null;
  const record = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${os.cpus().length}-core ${os.arch()} (${os.cpus()[0]?.model ?? 'cpu'}), shared: load average given per run`,
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    what: 'k-means++ init of 20,000 x 768 (m = 512) on the CPU, --residual none, the same vectors as f16 and as f32; before: decoding f16 rows on every seeding pass; after: each worker decodes its rows once per seeding phase (src/backend/cpu/worker.ts seedRows)',
    builds,
    f16_file_identical_before_after: same,
    runs,
  };
  const outFile = arg('--out');
  if (outFile) fs.writeFileSync(outFile, JSON.stringify(record, null, 1) + '\n');
  console.log(JSON.stringify(record, null, 1));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
