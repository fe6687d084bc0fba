// `vlc bench`: per-iteration time of the standard workloads on one device. Each workload runs
// plain Lloyd iterations (T = 0, step 1) from m seeded random rows — the same loop as the
// PyTorch peer, so the two per-iteration times compare — then, optionally, a whole anneal
// (k-means++ init + the default schedule). Times are the backend's own (CUDA events on the GPU).
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../anneal/config.js';
import type { Backend, Engine } from '../backend/types.js';
import { forEachPiece, rowBytes, type Dataset } from '../vectors/dataset.js';
import { npyHeader } from '../io/writers/npy.js';
import { interruptSignal } from '../interrupt.js';
import { log } from '../log.js';
import { sampleRows } from './data.js';
import { WORKLOADS, cpuSubsample, type Workload } from './workloads.js';

export interface BenchOptions {
  workloads: string[];
  iters: number;
  /** Run the whole anneal (k-means++ + default schedule) after the Lloyd timing. */
  anneal: boolean;
  /** Path of the PyTorch peer (torch_kmeans.py): run it on the same data in the same process tree. */
  peer?: string;
  /** Subsample n (the CPU benchmark). */
  subsample: boolean;
}

export interface PeerResult {
  iter_ms_median: number;
  energy: number;
  device?: string;
  [k: string]: unknown;
}

export interface WorkloadResult {
  name: string;
  n: number;
  d: number;
  m: number;
  dtype: string;
  /** n of the workload as docs/algorithm.md §5 lists it (differs from n when subsampled). */
  n_full: number;
  iters: number;
  /** Engine open: buffers allocated and the vectors uploaded. */
  open_seconds: number;
  iter_ms_median: number;
  iter_ms_min: number;
  assign_ms_median?: number;
  /** 2·n·m·d / assign time: what the distance work achieved (CUDA only: kernel timed alone). */
  assign_tflops?: number;
  /** 2·n·m·d / whole iteration time. */
  iter_tflops: number;
  energy: number;
  /** The CUDA engine's screen (cuda/screen.cu): passes screened and points it left to the exact fallback. */
  screen?: { passes: number; fallback_rate: number };
  /** A whole anneal (--anneal): init (k-means++ and its polishing passes) apart from the loop's iterations. */
  anneal?: {
    train_seconds: number; init_seconds: number; loop_seconds: number; init_iterations: number; iterations: number;
    iter_ms_median: number; energy: number; converged: boolean;
  };
  torch?: PeerResult | { error: string };
  speedup_vs_torch?: number;
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

function writeNpyFile(path: string, ds: Dataset): void {
  const header = npyHeader(ds.dtype === 'f16' ? '<f2' : '<f4', [ds.n, ds.d]);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    forEachPiece(ds, (_, r0, r1) => {
      const bytes = rowBytes(ds, r0, r1);
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    });
  } finally {
    closeSync(fd);
  }
}

function runPeer(peer: string, ds: Dataset, w: Workload, iters: number): PeerResult | { error: string } {
  const file = join(tmpdir(), `vlc-bench-${w.name}-${process.pid}.npy`);
  try {
    writeNpyFile(file, ds);
    const r = spawnSync('python3', [peer, file, '--m', String(w.m), '--iters', String(iters)], { encoding: 'utf8' });
    if (r.status !== 0) return { error: `peer exited ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}` };
    const line = r.stdout.trim().split('\n').pop() ?? '';
    return JSON.parse(line) as PeerResult;
  } catch (e) {
    return { error: (e as Error).message };
  } finally {
    try {
      unlinkSync(file);
    } catch {
      /* never written */
    }
  }
}

async function benchOne(backend: Backend, w: Workload, o: BenchOptions): Promise<WorkloadResult> {
  const n = o.subsample ? cpuSubsample(w) : w.n;
  const ds = w.make(n);
  const { d, m } = w;
  const t0 = performance.now();
  let engine: Engine | undefined;
  const res: Partial<WorkloadResult> = { name: w.name, n, d, m, dtype: ds.dtype, n_full: w.n, iters: o.iters };
  try {
    engine = await backend.open(ds, m);
    res.open_seconds = (performance.now() - t0) / 1000;
    await engine.setAnchors(sampleRows(ds, m, 1234));
    const lloyd = { temperature: 0, step: 1, huber: 0 };
    for (let k = 0; k < 2; k++) await engine.iterate(lloyd); // warm-up
    const ms: number[] = [];
    const assignMs: number[] = [];
    let energy = NaN;
    for (let k = 0; k < o.iters; k++) {
      if (interruptSignal.aborted) break;
      const s = await engine.iterate(lloyd);
      ms.push(s.ms);
      energy = s.energy;
      const times = (engine as { lastTimes?: { assignMs: number } }).lastTimes;
      if (times) assignMs.push(times.assignMs);
    }
    energy = (await engine.finalize()).energy;
    const prof = (engine as { profile?: { screenPasses?: number; screenFallbacks?: number } }).profile;
    // Only the CUDA engine screens (the CPU engine's profile has other fields).
    if (prof?.screenPasses !== undefined && prof.screenFallbacks !== undefined) res.screen = { passes: prof.screenPasses, fallback_rate: prof.screenPasses ? prof.screenFallbacks / (prof.screenPasses * n) : 0 };
    const flops = 2 * n * m * d;
    res.iter_ms_median = median(ms);
    res.iter_ms_min = Math.min(...ms);
    res.iter_tflops = flops / (res.iter_ms_median * 1e9);
    if (assignMs.length) {
      res.assign_ms_median = median(assignMs);
      res.assign_tflops = flops / (res.assign_ms_median * 1e9);
    }
    res.energy = energy;
    if (o.anneal) {
      const { anneal } = await import('../anneal/index.js');
      const r = await anneal(engine, { ...DEFAULT_CONFIG, m }, { signal: interruptSignal });
      res.anneal = {
        train_seconds: r.seconds,
        init_seconds: r.initSeconds,
        loop_seconds: r.seconds - r.initSeconds,
        init_iterations: r.initIterations,
        iterations: r.iterations - r.initIterations,
        iter_ms_median: r.iterMsMedian,
        energy: r.energy,
        converged: r.converged,
      };
    }
  } finally {
    await engine?.dispose();
  }
  if (o.peer) {
    res.torch = runPeer(o.peer, ds, w, 20);
    if ('iter_ms_median' in res.torch) res.speedup_vs_torch = res.torch.iter_ms_median / res.iter_ms_median!;
  }
  log().info(
    `${w.name}: ${n}x${d} m=${m} ${res.iter_ms_median!.toFixed(3)} ms/iter` +
      (res.assign_tflops ? `, assign ${res.assign_tflops.toFixed(1)} TFLOP/s` : '') +
      (res.speedup_vs_torch ? `, ${res.speedup_vs_torch.toFixed(2)}x torch` : ''),
  );
  return res as WorkloadResult;
}

export async function runBench(backend: Backend, o: BenchOptions): Promise<WorkloadResult[]> {
  const out: WorkloadResult[] = [];
  for (const w of WORKLOADS) {
    if (!o.workloads.includes(w.name)) continue;
    out.push(await benchOne(backend, w, o));
  }
  return out;
}
