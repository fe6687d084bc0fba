// Every switch of the CUDA backend in one place, each with its default and the reason for it (in
// the manner of FAISS's ClusteringParameters). The environment is read once, by
// cudaOptionsFromEnv() in createCudaBackend; an engine gets a validated CudaOptions object and
// never looks at process.env. Tests pass options objects.
import { UsageError } from '../../errors.js';

export interface CudaOptions {
  /**
   * Screen the assign with one fp16 tensor-core GEMM and decide exactly among its candidates
   * (cuda/screen_h.cu, screen.ts): the assignments are the direct pass's either way. 'auto'
   * screens when the pass is large enough to gain (n·m·d >= 2^31, screen.ts SCREEN_MIN_WORK) and
   * m >= 3; true / false force it for A/B runs. VLC_CUDA_SCREEN=0|1|auto.
   */
  screen: 'auto' | boolean;
  /**
   * On a compute capability 9.0 GPU (Hopper), screen with the warpgroup kernels of the sm_90a
   * build (cuda/screen_h90.cu, wgmma): faster on every measured workload (bench/kernels/NOTES.md);
   * false keeps the portable mma.sync screen, for A/B runs and to test that path on a Hopper.
   * VLC_CUDA_WGMMA=0|1.
   */
  wgmma: boolean;
  /**
   * Keys each lane of the resident Hopper screen keeps per point where the padded row is at most
   * 192 dimensions (screen_h90mo; wider rows keep 8): 'auto' (2 on short rows with few anchors,
   * else 8: screen.ts screenKernel), or 2, 3 or 8 for A/B runs. Fewer keys make the screen's
   * integer epilogue cheaper and leave more points uncertain (decided exactly all the same).
   * VLC_CUDA_SCREEN_KEYS=auto|2|3|8.
   */
  screenKeys: 'auto' | 2 | 3 | 8;
  /**
   * How a pass adds up the anchors' sums (cuda/reduce.cu): 'sorted' groups the points'
   * contributions by anchor and sums each run in registers; 'atomic' adds every term with its own
   * atomic, which contends where many points share an anchor. The same bits either way; 'atomic'
   * for A/B runs. VLC_CUDA_REDUCE=sorted|atomic.
   */
  reduce: 'sorted' | 'atomic';
  /**
   * Use at most this many bytes of GPU memory (undefined: whatever is free), e.g. to leave room
   * for another process. When the engine needs more, the vectors stream from host memory in tiles
   * (plan.ts). VLC_CUDA_MAX_BYTES=<bytes>, optionally with a binary K/M/G/T suffix (6G).
   */
  maxDeviceBytes: number | undefined;
  /**
   * Stream the vectors in tiles of this many rows (a positive multiple of TILE_ALIGN, 256) even
   * when they fit: tests and measurements of the tiled path on small data. No variable.
   */
  tileRows: number | undefined;
  /**
   * Bytes of each of the two page-locked host chunks a streamed engine uploads through (spans.ts):
   * 64 MiB, large enough that a copy runs at the link's speed and small enough to pin without
   * trouble; tests make it small to cut a tile into several chunks. No variable.
   */
  stagingBytes: number;
  /**
   * On compute capability 9.0, load the Hopper machine code compiled from the PTX at build time
   * (build/sm_90/*.cubin) instead of the PTX: the driver JIT-compiles PTX in every process whose JIT
   * cache is cold, once per GPU context, which cost seconds of setup per GPU
   * (bench/results/2026-11-27-h200x4-r3d.json; against a machine-code load of 0.99 s on a cold cache, -r3e.json). false loads the PTX, for A/B runs and to check the
   * JIT path. VLC_CUDA_CUBIN=0|1.
   */
  machineCode: boolean;
  /**
   * Upload the vectors (an engine's resident rows, the residual encoder's input) by page-locking
   * the host's own buffer a piece at a time and copying asynchronously (pin.ts): no staging copy on
   * the host thread, and several GPUs copy at once. false copies from pageable memory, for A/B
   * runs. VLC_CUDA_PIN=0|1.
   */
  pinCopies: boolean;
}

export const CUDA_DEFAULTS: Readonly<CudaOptions> = Object.freeze({
  screen: 'auto',
  wgmma: true,
  screenKeys: 'auto',
  reduce: 'sorted',
  maxDeviceBytes: undefined,
  tileRows: undefined,
  stagingBytes: 64 * 2 ** 20,
  machineCode: true,
  pinCopies: true,
});

/** Tile rows are a multiple of this: the points of one k-means++ block (SEED_POINTS of seed.cu). */
export const TILE_ALIGN = 256;

/** The variables this backend reads (VLC_CUDA_LIB is driver.ts's: which library to load). */
const VARIABLES = ['VLC_CUDA_SCREEN', 'VLC_CUDA_WGMMA', 'VLC_CUDA_SCREEN_KEYS', 'VLC_CUDA_REDUCE', 'VLC_CUDA_MAX_BYTES', 'VLC_CUDA_CUBIN', 'VLC_CUDA_PIN', 'VLC_CUDA_LIB'] as const;

/** Defaults overridden by the VLC_CUDA_* variables; an unknown variable or value is a UsageError (exit 2). */
export function cudaOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): CudaOptions {
  for (const name of Object.keys(env)) {
    if (name.startsWith('VLC_CUDA_') && !(VARIABLES as readonly string[]).includes(name)) {
      throw new UsageError(`${name} is not a setting of vlc; the CUDA backend reads ${VARIABLES.join(', ')}`);
    }
  }
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const screen = value('VLC_CUDA_SCREEN');
  const wg = value('VLC_CUDA_WGMMA');
  const keys = value('VLC_CUDA_SCREEN_KEYS');
  const reduce = value('VLC_CUDA_REDUCE');
  const maxBytes = value('VLC_CUDA_MAX_BYTES');
  const cubin = value('VLC_CUDA_CUBIN');
  const pin = value('VLC_CUDA_PIN');
  return cudaOptions({
    ...(screen !== undefined && { screen: choice('VLC_CUDA_SCREEN', screen, { auto: 'auto', '1': true, '0': false } as const) }),
    ...(wg !== undefined && { wgmma: choice('VLC_CUDA_WGMMA', wg, { '1': true, '0': false } as const) }),
    ...(keys !== undefined && { screenKeys: choice('VLC_CUDA_SCREEN_KEYS', keys, { auto: 'auto', '2': 2, '3': 3, '8': 8 } as const) }),
    ...(reduce !== undefined && { reduce: choice('VLC_CUDA_REDUCE', reduce, { sorted: 'sorted', atomic: 'atomic' } as const) }),
    ...(maxBytes !== undefined && { maxDeviceBytes: parseBytes('VLC_CUDA_MAX_BYTES', maxBytes) }),
    ...(cubin !== undefined && { machineCode: choice('VLC_CUDA_CUBIN', cubin, { '1': true, '0': false } as const) }),
    ...(pin !== undefined && { pinCopies: choice('VLC_CUDA_PIN', pin, { '1': true, '0': false } as const) }),
  });
}

/** The defaults with `o` over them, validated (a bad value from code is a programming error). */
export function cudaOptions(o: Partial<CudaOptions> = {}): CudaOptions {
  const r: CudaOptions = { ...CUDA_DEFAULTS, ...o };
  if (!(r.screen === 'auto' || typeof r.screen === 'boolean')) throw new Error(`screen must be 'auto', true or false, got ${String(r.screen)}`);
  if (typeof r.wgmma !== 'boolean') throw new Error(`wgmma must be true or false, got ${String(r.wgmma)}`);
  if (!(r.screenKeys === 'auto' || r.screenKeys === 2 || r.screenKeys === 3 || r.screenKeys === 8)) {
    throw new Error(`screenKeys must be 'auto', 2, 3 or 8, got ${String(r.screenKeys)}`);
  }
  if (r.reduce !== 'sorted' && r.reduce !== 'atomic') throw new Error(`reduce must be 'sorted' or 'atomic', got ${String(r.reduce)}`);
  if (r.maxDeviceBytes !== undefined && !(Number.isFinite(r.maxDeviceBytes) && r.maxDeviceBytes >= 0)) {
    throw new Error(`maxDeviceBytes must be a number of bytes, got ${r.maxDeviceBytes}`);
  }
  if (r.tileRows !== undefined && !(Number.isInteger(r.tileRows) && r.tileRows > 0 && r.tileRows % TILE_ALIGN === 0)) {
    throw new Error(`tileRows must be a positive multiple of ${TILE_ALIGN}, got ${r.tileRows}`);
  }
  if (typeof r.machineCode !== 'boolean') throw new Error(`machineCode must be true or false, got ${String(r.machineCode)}`);
  if (typeof r.pinCopies !== 'boolean') throw new Error(`pinCopies must be true or false, got ${String(r.pinCopies)}`);
  if (!(Number.isInteger(r.stagingBytes) && r.stagingBytes > 0)) throw new Error(`stagingBytes must be a positive whole number, got ${r.stagingBytes}`);
  return r;
}

function choice<T>(name: string, v: string, accepted: Record<string, T>): T {
  if (Object.hasOwn(accepted, v)) return accepted[v];
  const keys = Object.keys(accepted);
  throw new UsageError(`${name}=${v}: expected ${keys.slice(0, -1).join(', ')} or ${keys[keys.length - 1]}`);
}

/** Bytes, optionally with K, M, G or T (binary: 6G = 6·2^30). */
function parseBytes(name: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(v);
  if (!m) throw new UsageError(`${name}=${v}: expected a number of bytes, optionally with K, M, G or T (e.g. 6G)`);
  return Math.floor(Number(m[1]) * 1024 ** (m[2] ? 'KMGT'.indexOf(m[2].toUpperCase()) + 1 : 0));
}
