// `vlc test-cuda`: the seed's parity test (docs/cuda.md). The same synthetic data and the seed's config
// run through CUDA, then the CPU, from one k-means++ init (computed once, passed to both), and
// the two results are compared: energy within 0.5 %, assignments agreeing on at least 99 %.
import { SEED_CONFIG, type AnnealConfig } from '../anneal/config.js';
import type { AnnealResult } from '../anneal/types.js';
import type { Backend, Engine } from '../backend/types.js';
import { seedRatio } from '../io/vlc/stats.js';
import { interruptSignal } from '../interrupt.js';
import { InterruptedError } from '../errors.js';
import { seedData } from './data.js';

export const PARITY = { energyRelDiff: 0.005, agreement: 0.99 } as const;

const SIZES = {
  small: { n: 1000, d: 64, m: 32 },
  large: { n: 10000, d: 128, m: 256 },
} as const;

export interface DeviceRun {
  device: string;
  /** Wall ms of the compress on this device: k-means++ init + annealing loop + final pass. */
  ms: number;
  initMs: number;
  loopMs: number;
  /** Upload of the vectors and buffer allocation (engine open). */
  openMs: number;
  iterations: number;
  iterMsMedian: number;
  energy: number;
  /** The seed's compression ratio (m·d·2 + n·4) / (n·d·4). */
  seedRatio: number;
  /** Where the time went inside the engine (CUDA only): wall and GPU ms of the passes, seeding. */
  engineProfile?: unknown;
}

export interface ParityReport {
  size: 'small' | 'large';
  n: number;
  d: number;
  m: number;
  config: AnnealConfig;
  cuda?: DeviceRun;
  /** Why the CUDA half did not run. */
  cudaUnavailable?: string;
  cpu: DeviceRun;
  speedup?: number;
  energyRelDiff?: number;
  agreement?: number;
  pass?: boolean;
}

/**
 * One compress on one device: open, k-means++ init (timed), then the annealing loop from `init`
 * when given (the shared init of the parity test; the device's own init is then only timed),
 * else from the device's own init.
 */
async function compressOn(
  backend: Backend,
  data: ReturnType<typeof seedData>,
  cfg: AnnealConfig,
  init: Float32Array | undefined,
): Promise<{ run: DeviceRun; result: AnnealResult; init: Float32Array }> {
  const { anneal, kmeansPlusPlus, Rng } = await import('../anneal/index.js');
  const t0 = performance.now();
  let engine: Engine | undefined;
  try {
    engine = await backend.open(data, cfg.m);
    const t1 = performance.now();
    const check = () => {
      if (interruptSignal.aborted) throw new InterruptedError();
    };
    const own = (await kmeansPlusPlus(engine, cfg.m, new Rng(cfg.seed), cfg.initCandidates, check)).anchors;
    const anchors = init ?? own;
    const t2 = performance.now();
    const result = await anneal(engine, cfg, { initAnchors: anchors, signal: interruptSignal });
    const t3 = performance.now();
    return {
      result,
      init: anchors,
      run: {
        device: backend.label,
        ms: t3 - t1,
        initMs: t2 - t1,
        loopMs: t3 - t2,
        openMs: t1 - t0,
        iterations: result.iterations,
        iterMsMedian: result.iterMsMedian,
        energy: result.energy,
        seedRatio: seedRatio(data.n, data.d, cfg.m),
        engineProfile: (engine as { profile?: unknown }).profile,
      },
    };
  } finally {
    await engine?.dispose();
  }
}

/**
 * Run the parity test. `cuda` is the opened CUDA backend, or the reason it is unavailable (then
 * only the CPU half runs, and computes the init itself).
 */
export async function runParity(size: 'small' | 'large', cuda: Backend | string, cpu: Backend): Promise<ParityReport> {
  const { n, d, m } = SIZES[size];
  const data = seedData(n, d);
  const config: AnnealConfig = { ...SEED_CONFIG, m };
  const report: Partial<ParityReport> = { size, n, d, m, config };
  if (typeof cuda === 'string') {
    report.cudaUnavailable = cuda;
    await compressOn(cpu, data, config, undefined); // untimed warm-up, as below
    report.cpu = (await compressOn(cpu, data, config, undefined)).run;
    return report as ParityReport;
  }
  // The init is computed once, on the GPU, and given to both; each device still times its own
  // k-means++ so that both times are those of a whole compress. Each device first runs once
  // untimed (module load, JIT of the JavaScript, worker start-up), then the timed run.
  await compressOn(cuda, data, config, undefined);
  const g = await compressOn(cuda, data, config, undefined);
  await compressOn(cpu, data, config, g.init);
  const c = await compressOn(cpu, data, config, g.init);
  let same = 0;
  for (let i = 0; i < n; i++) if (g.result.assignments[i] === c.result.assignments[i]) same++;
  report.cuda = g.run;
  report.cpu = c.run;
  report.speedup = c.run.ms / g.run.ms;
  report.energyRelDiff = Math.abs(g.run.energy - c.run.energy) / Math.max(c.run.energy, Number.MIN_VALUE);
  report.agreement = same / n;
  report.pass = report.energyRelDiff <= PARITY.energyRelDiff && report.agreement >= PARITY.agreement;
  return report as ParityReport;
}
