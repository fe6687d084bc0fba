// Large copies between the host and a GPU — an engine's resident rows and the residual encoder's
// input going up — through the host's own buffer, page-locked a
// piece at a time. From pageable memory the driver stages every byte through a buffer of its own
// on the calling thread, and with one JS thread several GPUs' copies take turns. Locked with
// cuMemHostRegister, a piece is read (or written) by the GPU's copy engine directly while the host
// locks the next one, and the GPUs of a sharded engine copy at once: the host's cost is the locking
// alone (bench/results/2026-11-28-h100-r3h.json measured locking, and pageable and locked copies,
// on the device). The bytes are the same either way.
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
/**
 * cuMemHostRegister flags: none. Each GPU locks the rows it copies, for its own context only:
 * CU_MEMHOSTREGISTER_PORTABLE (locked for every context) made four GPUs' uploads slower than
 * pageable copies (bench/results/2026-11-28-h100x4-r3i.json).
 */
const LOCK_FLAGS = 0;

/** Copy `src` to `buf` at `offsetBytes`, waiting until it is there. `piece`: tests cut small inputs into several pieces. */
export function uploadLarge(ctx: CudaContext, buf: DeviceBuffer, src: Uint8Array, offsetBytes = 0, piece = PIN_PIECE): Promise<void> {
  return copyLarge(ctx, 'up', buf, src, offsetBytes, piece);
}

/**
 * Copy `dst.byteLength` bytes of `buf` from `offsetBytes` into `dst`, waiting until they are there.
 * Pays where `dst`'s pages are already in memory: locking fresh pages faults each one in first.
 */
export function downloadLarge(ctx: CudaContext, dst: Uint8Array, buf: DeviceBuffer, offsetBytes = 0, piece = PIN_PIECE): Promise<void> {
  return copyLarge(ctx, 'down', buf, dst, offsetBytes, piece);
}

async function copyLarge(ctx: CudaContext, way: 'up' | 'down', buf: DeviceBuffer, host: Uint8Array, offsetBytes: number, piece: number): Promise<void> {
  if (offsetBytes + host.byteLength > buf.bytes) throw new Error(`copy past the end of ${buf.name}`);
  const locked: Uint8Array[] = [];
  const pageable: [Uint8Array, number][] = []; // [bytes, offset in host]: copied synchronously at the end
  try {
    for (let off = 0; off < host.byteLength; off += piece) {
      const end = Math.min(host.byteLength, off + piece);
      const body = end - off - PIN_GAP;
      const part = body > 0 && ctx.pinCopies ? lock(ctx, host.subarray(off, off + body)) : undefined;
      if (!part) {
        pageable.push([host.subarray(off, end), off]);
        continue;
      }
      locked.push(part);
      if (way === 'up') ctx.uploadAsync(buf, part, offsetBytes + off, ctx.stream);
      else ctx.downloadAsync(part, buf, offsetBytes + off, ctx.stream);
      pageable.push([host.subarray(off + body, end), off + body]);
      if (interruptSignal.aborted) throw new InterruptedError();
      await yieldImmediate(); // other GPUs lock and queue their pieces meanwhile
    }
    if (locked.length) await ctx.finish();
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
      const part = bytes.subarray(k, Math.min(bytes.byteLength, k + SYNC_CHUNK));
      if (way === 'up') ctx.upload(buf, part, offsetBytes + off + k);
      else ctx.download(part, buf, offsetBytes + off + k);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (bytes.byteLength > SYNC_CHUNK) await yieldImmediate();
    }
  }
}

/** `part`, page-locked; undefined when the driver refuses (then it is not asked again in this context). */
function lock(ctx: CudaContext, part: Uint8Array): Uint8Array | undefined {
  ctx.makeCurrent();
  const st = ctx.drv.cuMemHostRegister_v2(part, part.byteLength, LOCK_FLAGS);
  if (st === CU.SUCCESS) return part;
  ctx.pinCopies = false;
  log().debug(`${ctx.where}: page-locking host memory refused (${describeStatus(ctx.drv, st)}): copies from pageable memory`);
  return undefined;
}
