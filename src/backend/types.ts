// A backend: the two contracts a device kind implements in full — the training engine
// (engine.ts: Engines over a dataset, the algorithm's only view of a device) and the search and
// codec device (device.ts: the codecs' and the search's kernels, the host's where the device has
// none). The CPU (cpu/), one GPU (cuda/), several devices or MPI ranks as one (sharded/) are each
// a Backend; select.ts picks one for --device.
import type { TrainEngine } from './engine.js';
import type { CodecDevice } from './device.js';
import type { Dataset } from '../vectors/dataset.js';

export type * from './engine.js';
export type * from './device.js';
export { MIN_SOFT_SHARE, partialLayout } from './engine.js';

export type BackendKind = 'cpu' | 'cuda';

export interface Backend extends TrainEngine, CodecDevice {
  readonly kind: BackendKind;
  /** Human-readable device name, e.g. "cpu (2 threads)" or "NVIDIA H100 80GB HBM3 (cuda:0)". */
  readonly label: string;
  /** Free every engine and device buffer this backend holds. */
  close(): Promise<void>;
  /**
   * `data`'s rows go to the device once, by the engine over them, and nothing uploads them again: a
   * GPU may release what it holds on the host for their copies (page locks) while it trains.
   */
  rowsUploadedOnce(data: Dataset): void;
  /**
   * Nothing uploads the host's rows again in this run (compress measures and writes next): a GPU
   * lets go of what it holds on the host for their copies (page locks), off the JS thread, while
   * the host works; close() waits for that. Kernels and small copies go on as before; an upload
   * of large rows after it waits for the release, then locks again.
   */
  uploadsOver(): void;
}
