#!/usr/bin/env node
// Assemble the committed GPU result (bench/results/*-gpu.json) from one run of bench/run-gpu.sh:
// the bench JSON (with the PyTorch peer and speedup_vs_torch), test-cuda --large, and the
// end-to-end compress. Usage: node bench/merge-gpu-results.mjs OUTDIR > result.json
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'bench/out';
const read = (f) => (existsSync(join(dir, f)) ? JSON.parse(readFileSync(join(dir, f), 'utf8')) : undefined);
const bench = read('bench-gpu.json') ?? {};
const direct = read('bench-gpu-direct.json');
const tc = read('test-cuda-large.json');
const compress = read('compress-prod.json');
let wall;
try {
  const m = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):(\d+(?:\.\d+)?)/.exec(readFileSync(join(dir, 'run.log'), 'utf8'));
  if (m) wall = (Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]));
} catch {
  /* no log */
}
const out = {
  ...bench,
  test_cuda_large_gpu_ms: tc?.cuda?.ms,
  test_cuda_large: tc && {
    pass: tc.pass,
    gpu: tc.cuda,
    cpu: tc.cpu,
    speedup: tc.speedup,
    energy_rel_diff: tc.energyRelDiff,
    agreement: tc.agreement,
  },
  compress_prod_npy: compress && { wall_seconds: wall, ...compress },
  direct_assign_only: direct && direct.workloads?.map((w) => ({ name: w.name, iter_ms_median: w.iter_ms_median, assign_ms_median: w.assign_ms_median, assign_tflops: w.assign_tflops })),
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
