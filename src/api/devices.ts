// devices(): the GPUs the CUDA driver sees — index, name, compute capability, memory, SMs — and the
// driver's version, or why there are none. The same probe as device 'auto'; what `vlc devices` lists.
import { probeCuda, type CudaProbe } from '../backend/cuda/index.js';

export type { CudaProbe };

/** The driver's view of the GPUs (memory free included), or `{ ok: false, reason }`. */
export function devices(): CudaProbe {
  return probeCuda({ memory: true });
}
