// The CUDA driver API as a plain object of bound functions (driver API only: no runtime library,
// no toolkit). Loaded lazily, once, through koffi from libcuda.so.1. Tests replace the whole
// object with a fake (test/cuda-host/fake-driver.ts) through setDriverForTests(), which is why
// everything above this file talks to the `CudaDriver` interface and never to koffi.
//
// Conventions: every function returns the CUresult status (0 = success); outputs are written
// into typed arrays passed by the caller; device pointers and handles are bigint.
import { createRequire } from 'node:module';

export type Handle = bigint;

export interface CudaDriver {
  cuInit(flags: number): number;
  cuDriverGetVersion(out: Int32Array): number;
  cuDeviceGetCount(out: Int32Array): number;
  cuDeviceGet(out: Int32Array, ordinal: number): number;
  cuDeviceGetName(buf: Uint8Array, len: number, dev: number): number;
  cuDeviceGetAttribute(out: Int32Array, attrib: number, dev: number): number;
  cuDeviceTotalMem_v2(out: BigUint64Array, dev: number): number;
  cuDevicePrimaryCtxRetain(out: BigUint64Array, dev: number): number;
  cuDevicePrimaryCtxRelease_v2(dev: number): number;
  cuCtxSetCurrent(ctx: Handle): number;
  cuMemGetInfo_v2(free: BigUint64Array, total: BigUint64Array): number;
  cuModuleLoadData(out: BigUint64Array, image: Uint8Array): number;
  cuModuleUnload(mod: Handle): number;
  cuModuleGetFunction(out: BigUint64Array, mod: Handle, name: string): number;
  cuFuncSetAttribute(fn: Handle, attrib: number, value: number): number;
  cuMemAlloc_v2(out: BigUint64Array, bytes: number): number;
  cuMemFree_v2(ptr: Handle): number;
  cuMemcpyHtoD_v2(dst: Handle, src: ArrayBufferView, bytes: number): number;
  cuMemcpyDtoH_v2(dst: ArrayBufferView, src: Handle, bytes: number): number;
  /** Every byte of device memory [dst, dst + bytes) set to `byte`. */
  cuMemsetD8_v2(dst: Handle, byte: number, bytes: number): number;
  cuMemcpyHtoDAsync_v2(dst: Handle, src: ArrayBufferView, bytes: number, stream: Handle): number;
  /** Device to device across GPUs (contexts), queued on `stream`. */
  cuMemcpyPeerAsync(dst: Handle, dstCtx: Handle, src: Handle, srcCtx: Handle, bytes: number, stream: Handle): number;
  cuCtxEnablePeerAccess(peer: Handle, flags: number): number;
  /** Page-locked host memory; out[0] receives an opaque pointer, read and written through hostView(). */
  cuMemAllocHost_v2(out: unknown[], bytes: number): number;
  cuMemFreeHost(p: unknown): number;
  /** Page-lock the caller's own host memory (the bytes of `p`), so that copies from it run asynchronously (pin.ts). */
  cuMemHostRegister_v2(p: ArrayBufferView, bytes: number, flags: number): number;
  cuMemHostUnregister(p: ArrayBufferView): number;
  /** Not a driver function: the bytes at a cuMemAllocHost_v2 pointer, as an ArrayBuffer (no copy). */
  hostView(p: unknown, bytes: number): ArrayBuffer;
  /**
   * Not a driver function: cuMemHostUnregister of the memory at `address` (a view's first byte, where
   * it was locked) on one of libuv's threads, `done` with its status on this one (pin.ts). The
   * driver takes the call without a current context. Absent where it cannot be had.
   */
  hostUnregisterAsync?(address: bigint, done: (status: number) => void): void;
  cuStreamCreate(out: BigUint64Array, flags: number): number;
  cuStreamWaitEvent(stream: Handle, ev: Handle, flags: number): number;
  cuStreamDestroy_v2(stream: Handle): number;
  cuEventCreate(out: BigUint64Array, flags: number): number;
  cuEventDestroy_v2(ev: Handle): number;
  cuEventRecord(ev: Handle, stream: Handle): number;
  cuEventQuery(ev: Handle): number;
  cuEventSynchronize(ev: Handle): number;
  cuEventElapsedTime(out: Float32Array, start: Handle, end: Handle): number;
  cuLaunchKernel(
    f: Handle,
    gx: number, gy: number, gz: number,
    bx: number, by: number, bz: number,
    sharedBytes: number,
    stream: Handle,
    params: ArrayBufferView[],
    extra: null,
  ): number;
  cuGetErrorName(status: number, out: Array<string | null>): number;
  cuGetErrorString(status: number, out: Array<string | null>): number;
}

/** C prototypes as koffi parses them (`unsigned int`, not bare `unsigned`; handles as uint64_t). */
const PROTOTYPES: Record<Exclude<keyof CudaDriver, 'hostView' | 'hostUnregisterAsync'>, string> = {
  cuInit: 'int cuInit(unsigned int flags)',
  cuDriverGetVersion: 'int cuDriverGetVersion(int *version)',
  cuDeviceGetCount: 'int cuDeviceGetCount(int *count)',
  cuDeviceGet: 'int cuDeviceGet(int *dev, int ordinal)',
  cuDeviceGetName: 'int cuDeviceGetName(char *name, int len, int dev)',
  cuDeviceGetAttribute: 'int cuDeviceGetAttribute(int *value, int attrib, int dev)',
  cuDeviceTotalMem_v2: 'int cuDeviceTotalMem_v2(uint64_t *bytes, int dev)',
  cuDevicePrimaryCtxRetain: 'int cuDevicePrimaryCtxRetain(uint64_t *ctx, int dev)',
  cuDevicePrimaryCtxRelease_v2: 'int cuDevicePrimaryCtxRelease_v2(int dev)',
  cuCtxSetCurrent: 'int cuCtxSetCurrent(uint64_t ctx)',
  cuMemGetInfo_v2: 'int cuMemGetInfo_v2(uint64_t *free, uint64_t *total)',
  cuModuleLoadData: 'int cuModuleLoadData(uint64_t *module, const void *image)',
  cuModuleUnload: 'int cuModuleUnload(uint64_t module)',
  cuModuleGetFunction: 'int cuModuleGetFunction(uint64_t *fn, uint64_t module, const char *name)',
  cuFuncSetAttribute: 'int cuFuncSetAttribute(uint64_t fn, int attrib, int value)',
  cuMemAlloc_v2: 'int cuMemAlloc_v2(uint64_t *ptr, size_t bytes)',
  cuMemFree_v2: 'int cuMemFree_v2(uint64_t ptr)',
  cuMemcpyHtoD_v2: 'int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes)',
  cuMemcpyDtoH_v2: 'int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)',
  cuMemsetD8_v2: 'int cuMemsetD8_v2(uint64_t dst, unsigned char byte, size_t bytes)',
  cuMemcpyHtoDAsync_v2: 'int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes, uint64_t stream)',
  cuMemcpyPeerAsync: 'int cuMemcpyPeerAsync(uint64_t dst, uint64_t dstCtx, uint64_t src, uint64_t srcCtx, size_t bytes, uint64_t stream)',
  cuCtxEnablePeerAccess: 'int cuCtxEnablePeerAccess(uint64_t peer, unsigned int flags)',
  cuMemAllocHost_v2: 'int cuMemAllocHost_v2(_Out_ void **pp, size_t bytes)',
  cuMemFreeHost: 'int cuMemFreeHost(void *p)',
  cuMemHostRegister_v2: 'int cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)',
  cuMemHostUnregister: 'int cuMemHostUnregister(void *p)',
  cuStreamCreate: 'int cuStreamCreate(uint64_t *stream, unsigned int flags)',
  cuStreamWaitEvent: 'int cuStreamWaitEvent(uint64_t stream, uint64_t ev, unsigned int flags)',
  cuStreamDestroy_v2: 'int cuStreamDestroy_v2(uint64_t stream)',
  cuEventCreate: 'int cuEventCreate(uint64_t *ev, unsigned int flags)',
  cuEventDestroy_v2: 'int cuEventDestroy_v2(uint64_t ev)',
  cuEventRecord: 'int cuEventRecord(uint64_t ev, uint64_t stream)',
  cuEventQuery: 'int cuEventQuery(uint64_t ev)',
  cuEventSynchronize: 'int cuEventSynchronize(uint64_t ev)',
  cuEventElapsedTime: 'int cuEventElapsedTime(float *ms, uint64_t start, uint64_t end)',
  cuLaunchKernel:
    'int cuLaunchKernel(uint64_t f, unsigned int gx, unsigned int gy, unsigned int gz, ' +
    'unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedBytes, uint64_t stream, ' +
    'void **params, void **extra)',
  cuGetErrorName: 'int cuGetErrorName(int status, _Out_ const char **name)',
  cuGetErrorString: 'int cuGetErrorString(int status, _Out_ const char **text)',
};

/** Why the driver could not be loaded (no library): the probe turns it into its message. */
export class DriverLoadError extends Error {}

/** The library to open: VLC_CUDA_LIB overrides it (tests point it at a missing file). */
export function driverLibraryName(): string {
  return process.env.VLC_CUDA_LIB || 'libcuda.so.1';
}

let loaded: CudaDriver | DriverLoadError | undefined;
let injected: CudaDriver | DriverLoadError | undefined;

/** The process-wide driver, loaded on first use. Throws DriverLoadError when there is none. */
export function driver(): CudaDriver {
  const d = injected ?? (loaded ??= load());
  if (d instanceof DriverLoadError) throw d;
  return d;
}

function load(): CudaDriver | DriverLoadError {
  const name = driverLibraryName();
  let koffi: typeof import('koffi');
  try {
    // Loaded here rather than imported at the top so a broken koffi install only disables CUDA.
    koffi = createRequire(import.meta.url)('koffi');
  } catch (e) {
    return new DriverLoadError(`the FFI module koffi could not be loaded (${(e as Error).message})`);
  }
  // Compile every kernel when its module loads (backend creation), not lazily at its first
  // launch, which would land inside the first timed iteration. Read by the driver at cuInit.
  process.env.CUDA_MODULE_LOADING ??= 'EAGER';
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load(name);
  } catch (e) {
    return new DriverLoadError(`${name} could not be loaded (${(e as Error).message.replace(/^Failed to load shared library: /, '')})`);
  }
  const bound: Partial<CudaDriver> = {};
  for (const [key, proto] of Object.entries(PROTOTYPES)) {
    try {
      (bound as Record<string, unknown>)[key] = lib.func(proto);
    } catch (e) {
      return new DriverLoadError(`${name} lacks ${key} (driver too old? ${(e as Error).message})`);
    }
  }
  // koffi.view: an ArrayBuffer over the pinned memory itself, so a copy into it is one memcpy.
  bound.hostView = (p, bytes) => koffi.view(p, bytes);
  bound.hostUnregisterAsync = unregisterOffThread(lib);
  return bound as CudaDriver;
}

/** hostUnregisterAsync: the pointer goes as an address, so that the call on another thread reads nothing of a JS buffer. */
function unregisterOffThread(lib: ReturnType<typeof import('koffi').load>): CudaDriver['hostUnregisterAsync'] {
  try {
    const unregister = lib.func('int cuMemHostUnregister(uint64_t p)') as unknown as {
      async(p: bigint, cb: (err: unknown, status: number) => void): void;
    };
    return (address, done) => unregister.async(address, (err, status) => done(err ? -1 : status));
  } catch {
    return undefined;
  }
}

/**
 * Tests only: replace the driver with a fake (or a DriverLoadError to simulate no library);
 * `undefined` restores the real one.
 */
export function setDriverForTests(d: CudaDriver | DriverLoadError | undefined): void {
  injected = d;
}
