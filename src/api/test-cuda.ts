// testCuda(): the seed's parity test (bench/parity.ts) — CUDA then the CPU on the same synthetic data,
// config and init, compared (energy within PARITY.energyRelDiff, assignments agreeing on at least
// PARITY.agreement). Without a usable GPU the CPU half still runs and the report says why the CUDA
// half did not. What `vlc test-cuda` runs; parityJson() is what its --json prints.
import { createCpuBackend } from '../backend/cpu/index.js';
import { createCudaBackend } from '../backend/cuda/index.js';
import type { Backend } from '../backend/types.js';
import { runParity, PARITY, type DeviceRun, type ParityReport } from '../bench/parity.js';
import { DeviceError } from '../errors.js';
import { snakeKeys } from './json.js';

export { PARITY, type DeviceRun, type ParityReport };

export interface TestCudaOptions {
  /** n=10000 d=128 m=256 instead of n=1000 d=64 m=32. */
  large?: boolean;
  /** GPU index (default 0). */
  gpu?: number;
  /** Words the reason the CUDA half was not run (the CLI adds its hints). */
  explain?: (reason: string) => string;
}

export async function testCuda(o: TestCudaOptions = {}): Promise<ParityReport> {
  let cuda: Backend | string;
  try {
    cuda = await createCudaBackend(o.gpu ?? 0);
  } catch (e) {
    if (!(e instanceof DeviceError)) throw e; // a bad --gpu is a usage error (exit 2)
    cuda = o.explain ? o.explain(e.message) : e.message;
  }
  const cpu = createCpuBackend({});
  try {
    return await runParity(o.large ? 'large' : 'small', cuda, cpu);
  } finally {
    if (typeof cuda !== 'string') await cuda.close();
    await cpu.close();
  }
}

/** The report with the key style and units of every other command (docs/json.md). */
export function parityJson(r: ParityReport) {
  const run = (x: DeviceRun) => ({
    device: x.device,
    train_seconds: x.ms / 1000,
    init_seconds: x.initMs / 1000,
    loop_seconds: x.loopMs / 1000,
    open_seconds: x.openMs / 1000,
    iterations: x.iterations,
    iter_ms_median: x.iterMsMedian,
    energy: x.energy,
    seed_ratio: x.seedRatio,
    engine_profile: x.engineProfile ? snakeKeys(x.engineProfile as Record<string, number>) : null,
  });
  return {
    size: r.size,
    n: r.n,
    d: r.d,
    m: r.m,
    config: snakeKeys(r.config as unknown as Record<string, number>),
    cuda: r.cuda ? run(r.cuda) : null,
    cuda_unavailable: r.cudaUnavailable ?? null,
    cpu: run(r.cpu),
    speedup: r.speedup ?? null,
    energy_rel_diff: r.energyRelDiff ?? null,
    agreement: r.agreement ?? null,
    pass: r.pass ?? null,
  };
}
