#!/usr/bin/env node
// Per-iteration time of vlc's CUDA engine against the GPU peers, on the same data in the same
// command (issue 17's table): PyTorch Lloyd fp32 and TF32 (torch_kmeans.py) and Flash-KMeans fp32
// and fp16 (flash_peer.py), from the peers folder (on the GPU machine .gpu/peers/, put there by
// ../shared/gpu/pack.sh; absent: the peers are skipped and the JSON says so).
//
// Each workload's data are written once as .npy by python3 (numpy on the GPU machine; seeded
// gaussian clusters like src/bench/data.ts: 512 centres N(0, 1), spread 0.35), then:
//   vlc: the file read by vlc's own reader, the CUDA engine opened on it, m seeded rows as anchors,
//        2 warm-up Lloyd iterations (T = 0, step 1), then the median of --iters (CUDA events);
//   peers: the same file, their own init (m random rows), their own timing (see each script).
// Usage (repository root, after npm run build / source .gpu/activate.sh):
//   node bench/speed-vs-peers.mjs [--workloads prod,mnemo,...] [--iters 20] [--peers DIR] [--out FILE]
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync, unlinkSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { readDataset } from '../dist/io/read.js';
import { createCudaBackend } from '../dist/backend/cuda/index.js';
import { sampleRows } from '../dist/bench/data.js';

const WORKLOADS = {
  prod: { n: 1_000_000, d: 128, m: 2048 },
  'prod-f16': { n: 1_000_000, d: 128, m: 2048, f16: true },
  mnemo: { n: 100_000, d: 384, m: 1024 },
  'wide-1536': { n: 200_000, d: 1536, m: 1024 },
  'm20k-768': { n: 500_000, d: 768, m: 20_000 },
  'm20k-256': { n: 1_000_000, d: 256, m: 20_000 },
};

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const names = opt('workloads', Object.keys(WORKLOADS).join(',')).split(',');
const iters = Number(opt('iters', '20'));
const peers = opt('peers', '.gpu/peers');
const outFile = opt('out', 'bench/out/speed-vs-peers.json');
const havePeers = existsSync(`${peers}/torch_kmeans.py`) && existsSync(`${peers}/flash_peer.py`);

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

function makeNpy(path, w) {
  const py = `
import numpy as np
rng = np.random.default_rng(7)
c = rng.standard_normal((512, ${w.d})).astype(np.float32)
x = np.empty((${w.n}, ${w.d}), np.float32)
for s in range(0, ${w.n}, 1 << 18):
    e = min(${w.n}, s + (1 << 18))
    x[s:e] = c[rng.integers(0, 512, e - s)] + 0.35 * rng.standard_normal((e - s, ${w.d}), dtype=np.float32)
np.save('${path}', x.astype(np.${w.f16 ? 'float16' : 'float32'}))
`;
  const r = spawnSync('python3', ['-c', py], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`data generation failed: ${r.stderr}`);
}

function runPeer(script, file, w, extra = []) {
  const r = spawnSync('python3', [`${peers}/${script}`, file, '--m', String(w.m), '--iters', String(iters), ...extra], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return [{ error: `exit ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}` }];
  return r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

async function vlcTimes(backend, file, w) {
  const ds = await readDataset(file);
  const t0 = performance.now();
  const engine = await backend.open(ds, w.m);
  const openMs = performance.now() - t0;
  try {
    await engine.setAnchors(sampleRows(ds, w.m, 1234));
    const lloyd = { temperature: 0, step: 1, huber: 0 };
    for (let k = 0; k < 2; k++) await engine.iterate(lloyd);
    const ms = [], assign = [];
    for (let k = 0; k < iters; k++) {
      const s = await engine.iterate(lloyd);
      ms.push(s.ms);
      assign.push(engine.lastTimes.assignMs);
    }
    const p = { ...engine.profile };
    // Where an iteration's GPU time goes: 3 more iterations with events around every launch
    // (after the timed ones: the events cost a little).
    engine.timeKernels(true);
    for (let k = 0; k < 3; k++) await engine.iterate(lloyd);
    const kernels = Object.fromEntries(Object.entries(await engine.kernelTimes())
      .map(([k, t]) => [k, { ms_per_iter: t.ms / 3, launches_per_iter: t.launches / 3 }]));
    engine.timeKernels(false);
    const energy = (await engine.finalize()).energy;
    return {
      iter_ms: median(ms), assign_ms: median(assign), open_ms: openMs, energy, screen_kernel: engine.screenKernel,
      fallback_rate: p.screenPasses ? p.screenFallbacks / (p.screenPasses * ds.n) : 0,
      assign_tflops: (2 * ds.n * w.m * w.d) / (median(assign) * 1e9), kernels,
    };
  } finally {
    await engine.dispose();
  }
}

const commit = (() => {
  try {
    return process.env.VLC_COMMIT ?? execSync('git rev-parse HEAD', { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const backend = await createCudaBackend(0);
const rows = [];
// Written after every workload, so that a run stopped by a time limit keeps what it measured.
const save = () =>
  writeFileSync(outFile, JSON.stringify({
    date: new Date().toISOString().slice(0, 10), device: backend.label, commit, iters,
    peers: havePeers ? peers : `absent (${peers}): peers not measured`, workloads: rows,
  }, null, 1) + '\n');
for (const name of names) {
  const w = WORKLOADS[name];
  if (!w) throw new Error(`unknown workload ${name}: ${Object.keys(WORKLOADS).join(', ')}`);
  const file = `/tmp/vlc-speed-${name}.npy`;
  makeNpy(file, w);
  const row = { workload: name, ...w, dtype: w.f16 ? 'f16' : 'f32' };
  row.vlc = await vlcTimes(backend, file, w);
  if (havePeers) {
    row.torch_fp32 = runPeer('torch_kmeans.py', file, w)[0];
    row.torch_tf32 = runPeer('torch_kmeans.py', file, w, ['--tf32'])[0];
    for (const r of runPeer('flash_peer.py', file, w)) row[`flash_${r.dtype ?? 'error'}`] = r;
  }
  unlinkSync(file);
  const ms = (r) => r?.iter_ms ?? r?.iter_ms_median;
  console.log(
    `${name}: vlc ${row.vlc.iter_ms.toFixed(3)} ms/iter (assign ${row.vlc.assign_ms.toFixed(3)}, ${row.vlc.screen_kernel}, fallback ${(100 * row.vlc.fallback_rate).toFixed(3)}%)` +
      (havePeers ? ` | torch fp32 ${ms(row.torch_fp32)} tf32 ${ms(row.torch_tf32)} | flash fp32 ${ms(row.flash_fp32)} fp16 ${ms(row.flash_fp16)}` : ' | peers absent'),
  );
  const top = Object.entries(row.vlc.kernels).sort((a, b) => b[1].ms_per_iter - a[1].ms_per_iter).slice(0, 8);
  console.log(`  kernels (ms/iter): ${top.map(([k, t]) => `${k} ${t.ms_per_iter.toFixed(3)}`).join(', ')}`);
  rows.push(row);
  save();
}
await backend.close();
