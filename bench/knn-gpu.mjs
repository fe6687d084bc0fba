// The GPU's exact k-NN (src/backend/cuda/knn.ts, cuda/knn.cu) timed on synthetic data (uniform in
// ±1), against its floor: nq·nb·d multiply-adds in the direct form are 2 FP32 instructions each
// (a subtract and an FMA), at 30·10^12 instructions/s (an H100's ~60 TFLOP/s FP32 counting an
// FMA as 2). Per case: the call's wall time (the base's upload included), the kernels' GPU time
// (events), the floor, and — for the first 100 queries — agreement with the CPU's exact k-NN
// (distances within 1e-5 relative; the share of ids equal, which near-ties may keep under 1).
// Usage (on the GPU machine): npx tsc -p . && node bench/knn-gpu.mjs [--out bench/results/FILE.json] [--quick]
//   --quick: the 10,000 × 1,000,000 × 128 case only.
import { writeFileSync } from 'node:fs';

const { createCudaBackend, probeCuda } = await import('../dist/backend/cuda/index.js');
const { knn: cpuKnn } = await import('../dist/backend/cpu/knn.js');

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const INSTR_PER_SECOND = 30e12;
const CASES = [
  // [nq, nb, d, k, what]
  [10_000, 1_000_000, 128, 10, "issue 11's search size"],
  [1_000, 1_000_000, 128, 11, "compress's and eval's recall (1,000 queries, k + 1)"],
  [10_000, 1_000_000, 128, 100, 'k = 100'],
  [1_000, 200_000, 1_536, 10, 'wide vectors'],
];
const cases = process.argv.includes('--quick') ? CASES.slice(0, 1) : CASES;

const probe = probeCuda();
if (!probe.ok) {
  console.error(`knn-gpu: no usable GPU (${probe.reason})`);
  process.exit(3);
}

function uniform(count, seed) {
  let a = seed >>> 0;
  const out = new Float32Array(new SharedArrayBuffer(count * 4));
  for (let e = 0; e < count; e++) {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[e] = (((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5) * 2;
  }
  return out;
}

const backend = await createCudaBackend(0);
const rows = [];
try {
  for (const [nq, nb, d, k, what] of cases) {
    const base = uniform(nb * d, nb + d), queries = uniform(nq * d, nq + k);
    const gpu = backend.exactKnn;
    await gpu.knn(base, nb, queries, Math.min(nq, 64), d, k); // the PTX's JIT and first allocations
    const walls = [], kernels = [];
    let got;
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      got = await gpu.knn(base, nb, queries, nq, d, k);
      walls.push(performance.now() - t0);
      kernels.push(gpu.lastKernelMs);
    }
    const checked = Math.min(100, nq);
    const want = await cpuKnn(base, nb, queries.subarray(0, checked * d), checked, d, k);
    let sameIds = 0, worstRel = 0;
    for (let e = 0; e < checked * k; e++) {
      if (got.ids[e] === want.ids[e]) sameIds++;
      worstRel = Math.max(worstRel, Math.abs(got.dists[e] - want.dists[e]) / Math.max(want.dists[e], 1e-30));
    }
    const floorMs = ((nq * nb * d * 2) / INSTR_PER_SECOND) * 1000;
    const row = {
      what, nq, nb, d, k,
      wall_ms: Math.min(...walls), kernel_ms: Math.min(...kernels), floor_ms: floorMs,
      kernel_vs_floor: Math.min(...kernels) / floorMs,
      cpu_check: { queries: checked, ids_equal: sameIds / (checked * k), worst_relative_distance_error: worstRel },
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  await backend.close();
}
const out = arg('out');
if (out) writeFileSync(out, JSON.stringify({ device: backend.label, date: new Date().toISOString(), cases: rows }, null, 2) + '\n');
