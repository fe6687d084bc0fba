// Page-locked host memory of one GPU's context (cuMemAllocHost): copies between it and the device
// run at the bus's speed and may be queued asynchronously, where a copy from pageable memory is
// staged by the driver first. Every buffer is freed with the context (context.ts close).
import { log } from '../../log.js';
import type { CudaDriver } from './driver.js';
import { check } from './check.js';
import { CU } from './status.js';

export class PinnedHost {
  private buffers: { p: unknown; view: Uint8Array }[] = [];
  /** stagingBuffer()'s buffer, undefined until asked for (or when the driver refused it). */
  private staging: Uint8Array | undefined;

  constructor(private readonly drv: CudaDriver, private readonly makeCurrent: () => void) {}

  /**
   * `bytes` of page-locked host memory, as a Uint8Array over it (freed at close), or undefined
   * when the driver refuses (then copies go from pageable memory: slower, still correct).
   */
  alloc(bytes: number): Uint8Array | undefined {
    this.makeCurrent();
    const out: unknown[] = [null];
    let view: Uint8Array;
    try {
      // Should the FFI refuse the pointer, copies fall back to pageable memory rather than fail.
      if (this.drv.cuMemAllocHost_v2(out, bytes) !== CU.SUCCESS) return undefined;
      view = new Uint8Array(this.drv.hostView(out[0], bytes));
    } catch (e) {
      log().debug(`page-locked host memory unavailable (${(e as Error).message}): copies from pageable memory`);
      if (out[0] !== null) this.drv.cuMemFreeHost(out[0]);
      return undefined;
    }
    this.buffers.push({ p: out[0], view });
    return view;
  }

  /**
   * A page-locked buffer of at least `bytes`, the same one for every caller (made larger when
   * asked; undefined when the driver refuses): for a copy through it and out again within one
   * synchronous call, never held across an await. Made once, not once a call: a streamed compress
   * downloads every block's codes through it.
   */
  stagingBuffer(bytes: number): Uint8Array | undefined {
    if (this.staging && this.staging.length >= bytes) return this.staging;
    if (this.staging) this.free(this.staging);
    this.staging = this.alloc(bytes);
    return this.staging;
  }

  /** Free an alloc() before close (a no-op for one already freed). */
  free(view: Uint8Array): void {
    const k = this.buffers.findIndex((h) => h.view === view);
    if (k < 0) return;
    const [h] = this.buffers.splice(k, 1);
    this.makeCurrent();
    check(this.drv, this.drv.cuMemFreeHost(h.p), 'cuMemFreeHost');
  }

  /** Every buffer freed (the context's close; errors ignored, as the context goes). */
  freeAll(): void {
    for (const h of this.buffers) this.drv.cuMemFreeHost(h.p);
    this.buffers = [];
    this.staging = undefined;
  }
}
