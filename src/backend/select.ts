// Picks the backend for --device auto|cuda|cpu and --gpu N. `auto` falls back to the CPU with one
// log line saying why; `cuda` never falls back (DeviceError, exit 3).
import { DeviceError } from '../errors.js';
import { log } from '../log.js';
import type { Backend } from './types.js';
import { createCpuBackend } from './cpu/index.js';
import { probeCuda, createCudaBackend } from './cuda/index.js';

export type DeviceChoice = 'auto' | 'cuda' | 'cpu';

export interface SelectOptions {
  device: DeviceChoice;
  gpu: number;
  threads?: number;
}

export async function selectBackend(o: SelectOptions): Promise<Backend> {
  if (o.device === 'cpu') return createCpuBackend({ threads: o.threads });
  const probe = probeCuda();
  if (!probe.ok) {
    if (o.device === 'cuda') throw new DeviceError(`--device cuda: ${probe.reason}`);
    log().info(`using the CPU: ${probe.reason}`);
    return createCpuBackend({ threads: o.threads });
  }
  if (o.device === 'cuda') return createCudaBackend(o.gpu);
  // auto: a GPU that is seen but cannot be used (PTX too new for the driver, no memory...) also
  // falls back, with one line saying why; a bad --gpu index stays a usage error.
  try {
    return await createCudaBackend(o.gpu);
  } catch (e) {
    if (!(e instanceof DeviceError)) throw e;
    log().info(`using the CPU: ${e.message}`);
    return createCpuBackend({ threads: o.threads });
  }
}
