// The device probe shared by `vlc devices`, `--device auto|cuda` and `vlc test-cuda`: can the
// driver be loaded, does it see GPUs, and what are they. Never throws: a failure is a reason.
import { driver, driverLibraryName, DriverLoadError, type CudaDriver } from './driver.js';
import { describeStatus } from './check.js';
import { ATTR, CU } from './status.js';
import { cudaVersionText } from './ptx.js';
import { forgetContext, setCurrentContext } from './context.js';

export interface CudaDeviceInfo {
  index: number;
  name: string;
  /** "9.0" */
  computeCapability: string;
  multiprocessors: number;
  memoryTotalBytes: number;
  /** Only when the probe was asked for memory (it needs a context on each device). */
  memoryFreeBytes?: number;
}

export type CudaProbe =
  | { ok: true; devices: CudaDeviceInfo[]; driverVersion: number; driverVersionText: string }
  | { ok: false; reason: string; kind: 'no-library' | 'no-device' | 'driver-error' };

export interface ProbeOptions {
  /** Also read free memory (creates the primary context of each device: slower). */
  memory?: boolean;
}

export function probeCuda(o: ProbeOptions = {}): CudaProbe {
  let drv: CudaDriver;
  try {
    drv = driver();
  } catch (e) {
    const why = e instanceof DriverLoadError ? e.message : String(e);
    return {
      ok: false,
      kind: 'no-library',
      reason: `no NVIDIA driver library: ${why}; install the NVIDIA driver`,
    };
  }
  try {
    return probeWith(drv, o);
  } catch (e) {
    return { ok: false, kind: 'driver-error', reason: `the CUDA driver failed: ${(e as Error).message}` };
  }
}

function probeWith(drv: CudaDriver, o: ProbeOptions): CudaProbe {
  const init = drv.cuInit(0);
  if (init === CU.NO_DEVICE) return noDevice(`${driverLibraryName()} loaded, but the driver sees no GPU (${describeStatus(drv, init)})`);
  if (init !== CU.SUCCESS) {
    return { ok: false, kind: 'driver-error', reason: `cuInit failed: ${describeStatus(drv, init)}` };
  }
  const i32 = new Int32Array(1);
  let st = drv.cuDriverGetVersion(i32);
  const driverVersion = st === CU.SUCCESS ? i32[0] : 0;
  st = drv.cuDeviceGetCount(i32);
  if (st !== CU.SUCCESS) return { ok: false, kind: 'driver-error', reason: `cuDeviceGetCount failed: ${describeStatus(drv, st)}` };
  const count = i32[0];
  if (count === 0) return noDevice('the NVIDIA driver is installed but reports 0 GPUs');
  const devices: CudaDeviceInfo[] = [];
  for (let index = 0; index < count; index++) devices.push(deviceInfo(drv, index, o));
  return { ok: true, devices, driverVersion, driverVersionText: cudaVersionText(driverVersion) };
}

function noDevice(why: string): CudaProbe {
  return { ok: false, kind: 'no-device', reason: `no CUDA device: ${why}` };
}

function must(drv: CudaDriver, st: number, what: string): void {
  if (st !== CU.SUCCESS) throw new Error(`${what}: ${describeStatus(drv, st)}`);
}

function deviceInfo(drv: CudaDriver, index: number, o: ProbeOptions): CudaDeviceInfo {
  const i32 = new Int32Array(1);
  must(drv, drv.cuDeviceGet(i32, index), `cuDeviceGet(${index})`);
  const dev = i32[0];
  const nameBuf = new Uint8Array(256);
  must(drv, drv.cuDeviceGetName(nameBuf, nameBuf.length, dev), 'cuDeviceGetName');
  const end = nameBuf.indexOf(0);
  const name = Buffer.from(nameBuf.subarray(0, end < 0 ? nameBuf.length : end)).toString('utf8');
  const attr = (a: number) => {
    must(drv, drv.cuDeviceGetAttribute(i32, a, dev), 'cuDeviceGetAttribute');
    return i32[0];
  };
  const major = attr(ATTR.COMPUTE_CAPABILITY_MAJOR);
  const minor = attr(ATTR.COMPUTE_CAPABILITY_MINOR);
  const multiprocessors = attr(ATTR.MULTIPROCESSOR_COUNT);
  const u64 = new BigUint64Array(1);
  must(drv, drv.cuDeviceTotalMem_v2(u64, dev), 'cuDeviceTotalMem');
  const info: CudaDeviceInfo = {
    index,
    name,
    computeCapability: `${major}.${minor}`,
    multiprocessors,
    memoryTotalBytes: Number(u64[0]),
  };
  if (o.memory) info.memoryFreeBytes = freeMemory(drv, dev);
  return info;
}

/** Free bytes on one device: retains its primary context just long enough to ask. */
function freeMemory(drv: CudaDriver, dev: number): number {
  const ctx = new BigUint64Array(1);
  must(drv, drv.cuDevicePrimaryCtxRetain(ctx, dev), 'cuDevicePrimaryCtxRetain');
  try {
    setCurrentContext(drv, ctx[0]);
    const free = new BigUint64Array(1);
    const total = new BigUint64Array(1);
    must(drv, drv.cuMemGetInfo_v2(free, total), 'cuMemGetInfo');
    return Number(free[0]);
  } finally {
    drv.cuDevicePrimaryCtxRelease_v2(dev);
    forgetContext(ctx[0]);
  }
}
