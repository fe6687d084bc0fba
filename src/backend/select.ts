// Picks the backend for --device auto|cuda|cpu and --gpu N. `auto` falls back to the CPU with one
// log line saying why; `cuda` never falls back (DeviceError, exit 3).
import { DeviceError, UsageError } from '../errors.js';
import { log } from '../log.js';
import type { Backend } from './types.js';
import type { ExactKnn } from './device.js';
import { createCpuBackend, cpuKnn } from './cpu/index.js';
import { checkGpuIndex, probeCuda, createCudaBackend, type CudaBackend, type CudaProbe } from './cuda/index.js';
import { splitKnn } from './cuda/split-knn.js';
import { shardedBackend } from './sharded/backend.js';
import { peerGroup } from './cuda/peer.js';

export type DeviceChoice = 'auto' | 'cuda' | 'cpu';

export interface SelectOptions {
  device: DeviceChoice;
  /** A GPU index, or several: the rows split over them (a sharded backend, one CUDA context per GPU). */
  gpu: number | number[];
  /** Of several GPUs (each checked to exist), the ones to use: the first few that pay (api/gpu-count.ts); default all. */
  worthUsing?: (listed: number[]) => number[];
  threads?: number;
}

/**
 * Tests (until --gpu takes a list of GPUs): every backend selectBackend makes is sharded over this
 * many engines — CUDA: GPUs gpu, gpu + 1, ... (modulo the GPUs present); CPU: that many CPU
 * engines sharing the threads — so the real commands run sharded. 1 (the default) turns it off.
 */
let shardsForTests = 1;
export function setShardsForTests(shards = 1): void {
  shardsForTests = shards;
}

function cpuBackend(o: SelectOptions): BackendParts {
  if (shardsForTests <= 1) {
    const one = createCpuBackend({ threads: o.threads });
    return { backend: one, parts: [one] };
  }
  const threads = o.threads === undefined ? undefined : Math.max(1, Math.floor(o.threads / shardsForTests));
  const members = Array.from({ length: shardsForTests }, () => createCpuBackend({ threads }));
  return { backend: shardedBackend(members), parts: members };
}

/** The CUDA backend, and the backends of its GPUs (its members when several, which it closes; else itself). */
async function cudaParts(o: SelectOptions, probe: CudaProbe & { ok: true }): Promise<BackendParts> {
  let listed = Array.isArray(o.gpu) ? o.gpu : [o.gpu];
  if (listed.length > 1 && o.worthUsing) {
    for (const id of listed) checkGpuIndex(id, probe); // a GPU that does not exist is an error even where fewer would be used
    listed = o.worthUsing(listed);
  }
  if (listed.length === 1 && shardsForTests <= 1) {
    const one = await createCudaBackend(listed[0]);
    return { backend: one, parts: [one] };
  }
  const ids = listed.length > 1 ? listed : Array.from({ length: shardsForTests }, (_, k) => (k === 0 ? listed[0] : (listed[0] + k) % probe.devices.length));
  const members: Backend[] = [];
  try {
    for (const id of ids) members.push(await createCudaBackend(id));
  } catch (e) {
    await Promise.allSettled(members.map((b) => b.close()));
    throw e;
  }
  return { backend: shardedBackend(members, undefined, peerGroup), parts: members };
}

const FALLBACK = {
  'no-library': 'no NVIDIA driver found',
  'no-device': 'no CUDA GPU found',
  'driver-error': 'the CUDA driver failed',
} as const;

export async function selectBackend(o: SelectOptions): Promise<Backend> {
  return (await selectBackendParts(o)).backend;
}

/** Whether `device` would give a GPU: auto or cuda, with a CUDA device present (before any is opened). */
export function cudaUsable(device: DeviceChoice): boolean {
  return device !== 'cpu' && probeCuda().ok;
}

/** A backend, and the backends it runs on: each GPU's own for several GPUs (a streamed compress spreads blocks of rows over them; tests' shards too), else the backend itself. */
export interface BackendParts {
  backend: Backend;
  /** Closed by backend.close(). */
  parts: Backend[];
}

/** selectBackend, with the backends of its GPUs. */
export async function selectBackendParts(o: SelectOptions): Promise<BackendParts> {
  const cpu = () => cpuBackend(o);
  if (o.device === 'cpu') return cpu();
  const probe = probeCuda();
  if (!probe.ok) {
    if (o.device === 'cuda') throw new DeviceError(`--device cuda: ${probe.reason}, or use --device cpu`);
    // Most machines without a GPU never had one: one short line (the whole reason under -v).
    log().info(`${FALLBACK[probe.kind]}: using the CPU (-v says why)`);
    log().debug(probe.reason);
    return cpu();
  }
  if (o.device === 'cuda') return cudaParts(o, probe);
  // auto: a GPU that is seen but cannot be used (PTX too new for the driver, no memory...) also
  // falls back, with one line saying why; a bad --gpu index stays a usage error.
  try {
    return await cudaParts(o, probe);
  } catch (e) {
    if (!(e instanceof DeviceError)) throw e;
    log().info(`using the CPU: ${e.message}`);
    return cpu();
  }
}

/** An exact k-NN and what holds it open (a GPU's context): close() when done. */
export interface OpenedKnn {
  knn: ExactKnn;
  /** "cpu", or the GPU's label. */
  label: string;
  /** Whether a GPU runs it (up to its maxK). */
  onGpu: boolean;
  /** The largest k the device takes (Infinity on the CPU). */
  maxK: number;
  close(): Promise<void>;
}

/**
 * The exact k-NN for a command that only searches (`search`, `eval`): a GPU's (cuda/knn.ts; above
 * its k limit the CPU's) for --device cuda, or for auto when a GPU is usable; else the CPU's. Of a
 * list of GPUs, every one (each checked to exist): the search over decoded vectors splits the rows
 * over them (cuda/split-knn.ts). Unlike selectBackend, auto falls back quietly (-v says why): the
 * CPU path prints what it always did.
 */
export async function selectExactKnn(o: SelectOptions): Promise<OpenedKnn> {
  const cpu: OpenedKnn = { knn: cpuKnn, label: 'cpu', onGpu: false, maxK: Infinity, close: async () => undefined };
  if (o.device === 'cpu') return cpu;
  const probe = probeCuda();
  if (!probe.ok) {
    if (o.device === 'cuda') throw new DeviceError(`--device cuda: ${probe.reason}, or use --device cpu`);
    log().debug(`exact search on the CPU: ${probe.reason}`);
    return cpu;
  }
  const listed = Array.isArray(o.gpu) ? o.gpu : [o.gpu];
  if (listed.length === 0 || new Set(listed).size !== listed.length) throw new UsageError(`--gpu ${listed.join(',')}: name one GPU or more, each once`);
  if (listed.length > 1) for (const id of listed) checkGpuIndex(id, probe); // a GPU that does not exist is an error before any opens
  const opened: CudaBackend[] = [];
  const closeAll = async () => {
    await Promise.allSettled(opened.map((b) => b.close()));
  };
  try {
    for (const id of listed) opened.push(await createCudaBackend(id));
  } catch (e) {
    await closeAll();
    if (!(e instanceof DeviceError) || o.device === 'cuda') throw e;
    log().debug(`exact search on the CPU: ${e.message}`);
    return cpu;
  }
  const maxK = Math.min(...opened.map((b) => b.gpuKnn.maxK));
  if (opened.length === 1) return { knn: opened[0].exactKnn, label: opened[0].label, onGpu: true, maxK, close: closeAll };
  const label = `${opened.length} GPUs: ${opened.map((b) => b.ctx.where).join(', ')}`;
  return { knn: splitKnn(opened), label, onGpu: true, maxK, close: closeAll };
}
