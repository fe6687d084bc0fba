#!/usr/bin/env node
// The screen's uncertain points on a GPU (measurement only; reads the CUDA engine's internal
// buffers): after each of 4 Lloyd iterations on seeded clustered data (as speed-vs-peers.mjs: 512
// centres, spread 0.35), how many points exact_h could not certify, and for those how many
// anchors lie under their collect threshold (collect_h90's counts) — the number of keys a row
// would need to certify them. Session 9 sized the 16-key rows by it (bench/kernels/NOTES.md).
// Usage (repository root, after npm run build): node bench/screen-uncertain.mjs n d m
import { spawnSync } from 'node:child_process';
import { readDataset } from '../dist/io/read.js';
import { createCudaBackend } from '../dist/backend/cuda/index.js';
import { sampleRows } from '../dist/bench/data.js';
const [n, d, m] = process.argv.slice(2).map(Number);
const file = `/tmp/cc-${n}-${d}.npy`;
const py = `
import numpy as np
rng = np.random.default_rng(7)
c = rng.standard_normal((512, ${d})).astype(np.float32)
x = np.empty((${n}, ${d}), np.float32)
for s in range(0, ${n}, 1 << 18):
    e = min(${n}, s + (1 << 18))
    x[s:e] = c[rng.integers(0, 512, e - s)] + 0.35 * rng.standard_normal((e - s, ${d}), dtype=np.float32)
np.save('${file}', x)
`;
if (spawnSync('python3', ['-c', py]).status !== 0) throw new Error('data');
const ds = await readDataset(file);
const backend = await createCudaBackend(0);
const engine = await backend.open(ds, m);
await engine.setAnchors(sampleRows(ds, m, 1234));
const lloyd = { temperature: 0, step: 1, huber: 0 };
const out = [];
for (let it = 0; it < 4; it++) {
  await engine.iterate(lloyd);
  const scr = engine.pass.screener;
  const ctx = scr.e.ctx;
  const sc = new Uint32Array(8);
  ctx.download(sc, scr.bufs.scalars);
  const listed = sc[2], cap = scr.g.collectCap;
  const cc = new Uint32Array(Math.max(1, Math.min(listed, cap)));
  if (listed) ctx.download(cc, scr.bufs.ccount);
  const edges = [2, 4, 8, 12, 16, 24, 32, 64, 128, 256, Infinity];
  const hist = Object.fromEntries(edges.map((e) => [String(e), 0]));
  for (const c of cc.subarray(0, Math.min(listed, cap))) hist[String(edges.find((e) => c <= e))]++;
  out.push({ iteration: it + 1, kernel: engine.screenKernel, uncertain: listed, share: listed / n, list2: sc[4], ccount_hist: hist });
  console.log(JSON.stringify(out[out.length - 1]));
}
await engine.dispose();
await backend.close();
