// The vectors on the device, as spans of rows: all of them resident in one buffer (one span), or
// streamed from host memory in tiles of `tileRows` rows (one span per tile). Every loop over the
// data — the setup, each k-means++ call, each pass — is one forEachSpan, which runs the same
// kernels per span with the per-point pointers offset to the span's first row.
//
// Streamed, the copies overlap the kernels (double buffering): two device tile buffers, and a
// second stream (ctx.copyStream) that uploads the next tile into one buffer while the kernels'
// stream works on the other. Device-side events order the two streams — the kernels of tile t
// wait for its upload (`uploaded`), the upload into a buffer waits for the kernels that last read
// it (`consumed`) — so the host never waits for a copy to land. Uploads go through two
// page-locked host chunks (`staging`, CudaOptions.stagingBytes each) that the host fills while the other
// is being copied: page-locked memory is what lets a copy run beside the kernels at full speed.
// The host waits only (a) before refilling a staging chunk, until its previous copy is done, and
// (b) before tile t + 1's kernels, until tile t's are done (the passes read per-tile figures
// between tiles). Tile 0 of the next loop is uploaded as soon as the last tile's kernels are
// queued: every loop starts at tile 0. Waits poll (ctx.wait), so Ctrl-C is seen.
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { viewLimitBytes, type Dataset } from '../../vectors/dataset.js';
import type { CudaContext } from './context.js';
import type { Handle } from './driver.js';
import type { HostRows } from './host-rows.js';
import type { DeviceBuffer } from './pool.js';
import { uploadLarge } from './pin.js';

/**
 * Bytes per synchronous copy of the resident upload, so that Ctrl-C is seen between chunks; also
 * the host scratch that listed rows (a sample read in place: host-rows.ts) are gathered into.
 */
const UPLOAD_CHUNK = 64 * 2 ** 20;

/** Rows [p0, p0 + rows) of the data, on the device at x (the resident vectors, or a tile buffer). */
export interface Span {
  p0: number;
  rows: number;
  x: bigint;
}

export class VectorSpans {
  readonly tiles: number;
  /** Streamed: per tile buffer, its upload done / the kernels reading it done (device events). */
  private readonly uploaded: Handle[] = [];
  private readonly consumed: Handle[] = [];
  /** Page-locked staging chunks and the event after each one's last copy (empty: pageable uploads). */
  private readonly staging: Uint8Array[] = [];
  private readonly stagingDone: Handle[] = [];
  private nextChunk = 0;
  /** The tile whose upload is queued and not yet used by a loop (-1: none). */
  private prefetched = -1;
  /** Host→device bytes queued on the copy stream (tests and the profile read it). */
  uploadedBytes = 0;

  /** Streamed: the rows in contiguous host memory, where the tiles are copied from. */
  private readonly data: Dataset | undefined;

  /**
   * X holds every row (tileRows 0) or, streamed, X and X2 hold one tile each. Streamed rows must
   * be contiguous on the host (HostRows.contiguous()); resident ones may be listed.
   */
  constructor(
    private readonly ctx: CudaContext,
    private readonly rows: HostRows,
    private readonly X: DeviceBuffer,
    private readonly X2: DeviceBuffer | undefined,
    readonly tileRows: number,
    stagingBytes: number,
  ) {
    this.tiles = tileRows ? Math.ceil(rows.n / tileRows) : 1;
    if (!tileRows) return;
    if (!X2) throw new Error('a streamed engine needs two tile buffers');
    if (rows.list) throw new Error('a streamed engine needs its rows contiguous in host memory');
    this.data = rows.ds;
    for (let b = 0; b < 2; b++) {
      this.uploaded.push(ctx.event());
      this.consumed.push(ctx.event());
    }
    const chunk = Math.min(stagingBytes, tileRows * this.rowBytes);
    for (let k = 0; k < 2; k++) {
      const h = ctx.pinned.alloc(chunk);
      if (!h) break;
      this.staging.push(h);
      this.stagingDone.push(ctx.event());
    }
    if (this.staging.length < 2) this.freeStaging(); // both or none
  }

  private get rowBytes(): number {
    return this.rows.rowBytes;
  }

  /** Whether uploads go through page-locked staging chunks (false: straight from pageable memory). */
  get pinned(): boolean {
    return this.staging.length === 2;
  }

  /**
   * Resident: upload the vectors once, at open (listed rows: synchronous copies, so that a
   * gathered chunk's scratch can be refilled at once). Streamed: nothing (every loop uploads its tiles).
   */
  async uploadResident(): Promise<void> {
    if (this.tileRows) return;
    if (!this.rows.list) {
      // Contiguous rows: page-locked in place and copied asynchronously (pin.ts), a view at a time.
      for (const [bytes, off] of this.rows.chunks(viewLimitBytes())) await uploadLarge(this.ctx, this.X, bytes, off);
      return;
    }
    const total = this.rows.n * this.rowBytes;
    for (const [bytes, off] of this.rows.chunks(Math.min(UPLOAD_CHUNK, viewLimitBytes()))) {
      this.ctx.upload(this.X, bytes, off);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (off + bytes.byteLength < total) await yieldImmediate();
    }
  }

  /** fn(span, t) for each tile t in order, the tile's rows on the device for the kernels fn queues. */
  async forEachSpan(fn: (s: Span, t: number) => void | Promise<void>): Promise<void> {
    if (!this.tileRows) {
      await fn({ p0: 0, rows: this.rows.n, x: this.X.ptr }, 0);
      return;
    }
    const { ctx } = this;
    for (let t = 0; t < this.tiles; t++) {
      const b = t % 2;
      // (b) of the top: tile t − 1's kernels are done, so its figures can be read and its buffer refilled.
      if (t > 0) await ctx.wait(this.consumed[(t - 1) % 2], 0, false);
      if (this.prefetched !== t) await this.upload(t);
      this.prefetched = -1;
      ctx.streamWait(ctx.stream, this.uploaded[b]);
      const p0 = t * this.tileRows;
      await fn({ p0, rows: Math.min(this.tileRows, this.rows.n - p0), x: this.buffer(b).ptr }, t);
      ctx.record(this.consumed[b]);
      // The next tile's upload runs while the kernels just queued work (tile 0: the next loop's).
      const next = (t + 1) % this.tiles;
      await this.upload(next);
      this.prefetched = next;
    }
  }

  /** A per-point array (4-byte elements) from the span's first row on. */
  at(buf: DeviceBuffer, s: Span): bigint {
    return buf.ptr + BigInt(s.p0 * 4);
  }

  private buffer(b: number): DeviceBuffer {
    return b === 0 ? this.X : this.X2!;
  }

  /** Queue tile t's upload into its buffer on the copy stream, after the kernels that last read that buffer. */
  private async upload(t: number): Promise<void> {
    const b = t % 2;
    const stream = this.ctx.copyStream;
    this.ctx.streamWait(stream, this.consumed[b]);
    const p0 = t * this.tileRows;
    await this.copyRows(this.buffer(b), p0, Math.min(this.tileRows, this.rows.n - p0), stream);
    this.ctx.record(this.uploaded[b], stream);
  }

  /**
   * Queue copies of rows [p0, p0 + rows) of the host's vectors to the start of `dst` on `stream`,
   * a chunk at a time: through the staging chunks (each refilled once its last copy is done), or
   * straight from the data when there are none. A host view never exceeds viewLimitBytes().
   */
  private async copyRows(dst: DeviceBuffer, p0: number, rows: number, stream: Handle): Promise<void> {
    const { ctx } = this;
    const data = this.data!;
    const total = rows * this.rowBytes;
    const step = Math.min(this.pinned ? this.staging[0].byteLength : UPLOAD_CHUNK, viewLimitBytes());
    for (let off = 0; off < total; off += step) {
      const len = Math.min(step, total - off);
      const src = new Uint8Array(data.buffer, data.byteOffset + p0 * this.rowBytes + off, len);
      if (this.pinned) {
        const k = this.nextChunk;
        this.nextChunk ^= 1;
        await ctx.wait(this.stagingDone[k], 0, false);
        const chunk = this.staging[k].subarray(0, len);
        chunk.set(src);
        ctx.uploadAsync(dst, chunk, off, stream);
        ctx.record(this.stagingDone[k], stream);
      } else {
        ctx.uploadAsync(dst, src, off, stream);
      }
      this.uploadedBytes += len;
      if (interruptSignal.aborted) throw new InterruptedError();
    }
  }

  private freeStaging(): void {
    for (const h of this.staging) this.ctx.pinned.free(h);
    for (const ev of this.stagingDone) this.ctx.destroyEvent(ev);
    this.staging.length = 0;
    this.stagingDone.length = 0;
  }

  /** Free the staging chunks and events (the device buffers are the engine's). */
  dispose(): void {
    this.freeStaging();
    for (const ev of [...this.uploaded, ...this.consumed]) this.ctx.destroyEvent(ev);
    this.uploaded.length = 0;
    this.consumed.length = 0;
  }
}
