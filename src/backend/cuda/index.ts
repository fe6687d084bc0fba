// PLACEHOLDER (being written): the CUDA backend.
import type { Backend } from '../types.js';
export type CudaProbe = { ok: true; devices: unknown[]; driverVersion: number } | { ok: false; reason: string };
export function probeCuda(): CudaProbe {
  return { ok: false, reason: 'CUDA backend not written yet' };
}
export function createCudaBackend(_gpu: number): Promise<Backend> {
  throw new Error('CUDA backend not written yet');
}
