// Child process for interrupt.test.ts: the CLI on a fake GPU whose work never completes
// (cuEventQuery answers CUDA_ERROR_NOT_READY forever), so the process sits in the engine's wait
// until the test sends SIGINT. Prints "waiting" once the first wait has begun.
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { main } from '../../dist/cli.js';

let handles = 1n;
let announced = false;
const ok = () => 0;
const out = (arr) => ((arr[0] = handles++), 0);
setDriverForTests({
  cuInit: ok,
  cuDriverGetVersion: (v) => ((v[0] = 13000), 0),
  cuDeviceGetCount: (c) => ((c[0] = 1), 0),
  cuDeviceGet: (d) => ((d[0] = 0), 0),
  cuDeviceGetName: (buf) => (buf.set(Buffer.from('Stuck GPU\0')), 0),
  cuDeviceGetAttribute: (v, attr) => ((v[0] = attr === 16 ? 4 : attr === 75 ? 9 : 0), 0),
  cuDeviceTotalMem_v2: (b) => ((b[0] = 2n ** 34n), 0),
  cuDevicePrimaryCtxRetain: out,
  cuDevicePrimaryCtxRelease_v2: ok,
  cuCtxSetCurrent: ok,
  cuMemGetInfo_v2: (f, t) => ((f[0] = 2n ** 34n), (t[0] = 2n ** 34n), 0),
  cuModuleLoadData: out,
  cuModuleUnload: ok,
  cuModuleGetFunction: out,
  cuMemAlloc_v2: (p) => ((p[0] = 0x7000_0000_0000n + (handles++ << 32n)), 0),
  cuMemFree_v2: ok,
  cuMemcpyHtoD_v2: ok,
  cuMemcpyDtoH_v2: ok,
  cuMemsetD8_v2: ok,
  cuMemcpyHtoDAsync_v2: ok,
  cuMemHostRegister_v2: ok,
  cuMemHostUnregister: ok,
  cuMemAllocHost_v2: (p, bytes) => ((p[0] = new ArrayBuffer(bytes)), 0),
  cuMemFreeHost: ok,
  hostView: (p) => p,
  cuStreamCreate: out,
  cuStreamWaitEvent: ok,
  cuStreamDestroy_v2: ok,
  cuEventCreate: out,
  cuEventDestroy_v2: ok,
  cuEventRecord: ok,
  cuEventQuery: () => {
    if (!announced) {
      announced = true;
      process.stdout.write('waiting\n');
    }
    return 600; // CUDA_ERROR_NOT_READY: the GPU is "busy" forever
  },
  cuEventSynchronize: ok,
  cuEventElapsedTime: (ms) => ((ms[0] = 0), 0),
  cuLaunchKernel: ok,
  cuGetErrorName: (s, o) => ((o[0] = `CUDA_ERROR_${s}`), 0),
  cuGetErrorString: (s, o) => ((o[0] = 'fake'), 0),
});
process.exitCode = await main(['node', 'vlc', ...process.argv.slice(2)]);
