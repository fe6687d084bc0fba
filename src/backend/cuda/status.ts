// CUresult values this backend treats specially (cuda.h). Every other status is reported through
// the driver's own name and text (cuGetErrorName / cuGetErrorString).
export const CU = {
  SUCCESS: 0,
  INVALID_VALUE: 1,
  OUT_OF_MEMORY: 2,
  NOT_INITIALIZED: 3,
  NO_DEVICE: 100,
  INVALID_DEVICE: 101,
  NO_BINARY_FOR_GPU: 209,
  INVALID_PTX: 218,
  UNSUPPORTED_PTX_VERSION: 222,
  JIT_COMPILER_NOT_FOUND: 221,
  NOT_READY: 600,
  PEER_ACCESS_ALREADY_ENABLED: 704,
  ILLEGAL_ADDRESS: 700,
  LAUNCH_OUT_OF_RESOURCES: 701,
  LAUNCH_TIMEOUT: 702,
  LAUNCH_FAILED: 719,
  INSUFFICIENT_DRIVER: 35,
  SYSTEM_DRIVER_MISMATCH: 803,
} as const;

/** Statuses after which the context is broken: a kernel failed on the device. */
export const LAUNCH_FAILURES = new Set<number>([
  CU.ILLEGAL_ADDRESS,
  CU.LAUNCH_OUT_OF_RESOURCES,
  CU.LAUNCH_TIMEOUT,
  CU.LAUNCH_FAILED,
  701, 702, 714, 715, 716, 717, 718, 719, 720,
]);

/** Device attributes read by the probe (CUdevice_attribute). */
export const ATTR = {
  MULTIPROCESSOR_COUNT: 16,
  COMPUTE_CAPABILITY_MAJOR: 75,
  COMPUTE_CAPABILITY_MINOR: 76,
} as const;
