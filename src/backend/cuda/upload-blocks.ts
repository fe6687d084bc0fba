// Codes of a .vlc read where it lies (io/vlc/on-disk.ts BlockedResiduals), uploaded to one GPU a
// block of rows at a time for the search's decoder (decode.ts). Reading is the slow part: a block
// read by the host's one thread, copied, checked and copied again runs near 1 GB/s. So READS_AT_ONCE
// blocks are read at once, each by a positional read on one of libuv's threads straight into a
// page-locked buffer of its own; the codec's reader checks it there (on this thread: a memchr for
// int8) and its codes go up by an asynchronous copy from that buffer, which is read into again once
// the copy's event has completed. Several GPUs' uploads (split-knn.ts) so run at the same time.
import { log } from '../../log.js';
import type { Codes } from '../../vectors/codes.js';
import type { CodedResiduals } from '../../codecs/types.js';
import type { BlockedResiduals } from '../../io/vlc/on-disk.js';
import type { CudaContext } from './context.js';
import type { Handle } from './driver.js';
import type { DeviceBuffer } from './pool.js';

/** Blocks of one GPU read and in flight at once (each its own page-locked buffer). */
const READS_AT_ONCE = 3;

/**
 * Rows [first, first + n) of `blocked` (first on a block's first row) into `buf` at row 0, `width`
 * bytes a row of the codes `codesOf` gives. `stop` may throw between blocks (another GPU's
 * upload or ranking failed). Every copy has completed when the promise resolves.
 */
export async function uploadBlocks(
  ctx: CudaContext, blocked: BlockedResiduals, codesOf: (res: CodedResiduals) => Codes, buf: DeviceBuffer,
  first: number, n: number, width: number, stop?: () => void,
): Promise<void> {
  const per = blocked.rows;
  const b0 = first / per, blocks = Math.ceil(n / per);
  const slotBytes = blocked.blockBytes;
  const slots: Uint8Array[] = [];
  const events: Handle[] = [];
  const upload = async (lane: number) => {
    // Page-locked memory, or (refused) a fresh block each read: the copies are then staged by the driver.
    const slot = slotBytes === undefined ? undefined : ctx.pinned.alloc(slotBytes);
    if (slot) slots.push(slot);
    const ev = ctx.event();
    events.push(ev);
    for (let k = lane; k < blocks; k += READS_AT_ONCE) {
      stop?.();
      const res = await blocked.blockAsync(b0 + k, slot);
      const rows = Math.min(per, n - k * per);
      let at = k * per * width;
      codesOf(res).forEachRun(0, rows, (bytes) => {
        ctx.uploadAsync(buf, bytes, at, ctx.copyStream);
        at += bytes.length;
      });
      ctx.record(ev, ctx.copyStream);
      await ctx.wait(ev, 0, false); // the slot is read into again only once its copy is done
    }
  };
  const t0 = performance.now();
  try {
    const lanes = [];
    for (let lane = 0; lane < Math.min(READS_AT_ONCE, blocks); lane++) lanes.push(upload(lane));
    const settled = await Promise.allSettled(lanes);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const s = (performance.now() - t0) / 1000;
    log().debug(`rows ${first}..${first + n - 1}: ${((n * width) / 1e9).toFixed(2)} GB of codes read and copied to ${ctx.where} in ${s.toFixed(2)} s`);
  } catch (e) {
    try {
      ctx.drainBlocking(ctx.copyStream); // a lane that failed may leave copies queued: they finish before their buffers go
    } catch {
      // the first failure is the one reported
    }
    throw e;
  } finally {
    for (const ev of events) ctx.destroyEvent(ev);
    for (const s of slots) ctx.pinned.free(s);
  }
}
