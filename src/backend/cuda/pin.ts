// Large host→device copies (an engine's resident rows, the residual encoder's input) from the
// host's own buffer, page-locked a piece at a time. From pageable memory the driver stages every
// byte through a buffer of its own on the calling thread, and with one JS thread several GPUs'
// uploads take turns. Locked with cuMemHostRegister, a piece is read by the GPU's copy engine
// directly while the host locks the next one, and the GPUs of a sharded engine copy at once: the
// host's cost is the locking alone (bench/results/2026-11-28-h100-r3h.json measured locking, and
// pageable and locked copies, on the device). The bytes on the device are the same either way.
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { log } from '../../log.js';
import type { CudaContext } from './context.js';
import { describeStatus } from './check.js';
import { CU } from './status.js';
import type { DeviceBuffer } from './pool.js';

/** Bytes locked at a time: one lock call per piece, and the copy of one overlaps the locking of the next. */
export const PIN_PIECE = 256 * 2 ** 20;
/**
 * Bytes at the end of each piece left unlocked and copied from pageable memory once the rest is
 * over, so that no page is ever locked twice: not by two pieces, nor by two GPUs whose row
 * ranges meet inside one page (the driver refuses a range that overlaps a locked one).
 */
export const PIN_GAP = 64 * 1024;
/** Bytes per synchronous copy from pageable memory (Ctrl-C is heard between them). */
const SYNC_CHUNK = 64 * 2 ** 20;
/** CU_MEMHOSTREGISTER_PORTABLE: the locked pages count as locked for every GPU's context. */
const PORTABLE = 1;

/** Copy `src` to `buf` at `offsetBytes`, waiting until it is there. `piece`: tests cut small inputs into several pieces. */
export async function uploadLarge(ctx: CudaContext, buf: DeviceBuffer, src: Uint8Array, offsetBytes = 0, piece = PIN_PIECE): Promise<void> {
  if (offsetBytes + src.byteLength > buf.bytes) throw new Error(`upload past the end of ${buf.name}`);
  const locked: Uint8Array[] = [];
  const pageable: [Uint8Array, number][] = []; // [bytes, offset in src]: copied synchronously at the end
  let queued = false;
  try {
    for (let off = 0; off < src.byteLength; off += piece) {
      const end = Math.min(src.byteLength, off + piece);
      const body = end - off - PIN_GAP;
      if (!ctx.pinUploads || body <= 0) {
        pageable.push([src.subarray(off, end), off]);
        continue;
      }
      const part = src.subarray(off, off + body);
      ctx.makeCurrent();
      const st = ctx.drv.cuMemHostRegister_v2(part, part.byteLength, PORTABLE);
      if (st !== CU.SUCCESS) {
        ctx.pinUploads = false; // a driver that refuses once refuses again: stop asking
        log().debug(`${ctx.where}: page-locking the upload refused (${describeStatus(ctx.drv, st)}): copies from pageable memory`);
        pageable.push([src.subarray(off, end), off]);
        continue;
      }
      locked.push(part);
      ctx.uploadAsync(buf, part, offsetBytes + off, ctx.stream);
      queued = true;
      pageable.push([src.subarray(off + body, end), off + body]);
      if (interruptSignal.aborted) throw new InterruptedError();
      await yieldImmediate(); // other GPUs lock and queue their pieces meanwhile
    }
    if (queued) await ctx.finish();
  } finally {
    if (locked.length) {
      try {
        ctx.drainBlocking(); // (after a failure: the copies must be over before their pages are unlocked)
      } catch {
        // a context that cannot even wait: unlock all the same
      }
      for (const p of locked) ctx.drv.cuMemHostUnregister(p);
    }
  }
  for (const [bytes, off] of pageable) {
    for (let k = 0; k < bytes.byteLength; k += SYNC_CHUNK) {
      ctx.upload(buf, bytes.subarray(k, Math.min(bytes.byteLength, k + SYNC_CHUNK)), offsetBytes + off + k);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (bytes.byteLength > SYNC_CHUNK) await yieldImmediate();
    }
  }
}
