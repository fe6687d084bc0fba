// One place that turns a CUresult into an error a user can act on: the driver's own name and
// text, plus specific advice for the failures people actually meet (no device, out of memory,
// PTX too new, a failed kernel).
import { DeviceError } from '../../errors.js';
import type { CudaDriver } from './driver.js';
import { CU, LAUNCH_FAILURES } from './status.js';

/** A CUDA failure: exit 3 like every device problem, with the status kept for tests and callers. */
export class CudaError extends DeviceError {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (or the bare number when the driver cannot say). */
export function describeStatus(drv: CudaDriver, status: number): string {
  const name: Array<string | null> = [null];
  const text: Array<string | null> = [null];
  const okName = safe(() => drv.cuGetErrorName(status, name)) === CU.SUCCESS && typeof name[0] === 'string';
  const okText = safe(() => drv.cuGetErrorString(status, text)) === CU.SUCCESS && typeof text[0] === 'string';
  if (!okName) return `CUDA error ${status}`;
  return okText ? `${name[0]}: ${text[0]}` : (name[0] as string);
}

function safe(f: () => number): number {
  try {
    return f();
  } catch {
    return -1;
  }
}

/** Throw a CudaError naming `what` when `status` is not success. */
export function check(drv: CudaDriver, status: number, what: string): void {
  if (status === CU.SUCCESS) return;
  const detail = describeStatus(drv, status);
  if (status === CU.NO_DEVICE) throw new CudaError(`no CUDA device: the NVIDIA driver sees no GPU (${detail})`, status);
  if (LAUNCH_FAILURES.has(status)) {
    throw new CudaError(
      `GPU kernel failed during ${what} (${detail}); the GPU context cannot be used further — ` +
        `run again with --device cpu, and please report this with \`vlc devices\` output`,
      status,
    );
  }
  throw new CudaError(`${what} failed: ${detail}`, status);
}
