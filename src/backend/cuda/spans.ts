// The vectors on the device, as spans of rows: all of them resident in one buffer (one span), or
// streamed from host memory through a buffer of `tileRows` rows (one span per tile). Every loop
// over the data — the setup, each k-means++ call, each pass — is one forEachSpan, which runs the
// same kernels per span with the per-point pointers offset to the span's first row. Tiled, it
// waits until the kernels queued for a tile are done with the buffer before the next upload
// overwrites it (the wait also sees Ctrl-C).
import { setImmediate as yieldImmediate } from 'node:timers/promises';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { elementBytes, viewLimitBytes, type Dataset } from '../../io/dataset.js';
import type { CudaContext } from './context.js';
import type { DeviceBuffer } from './pool.js';

/** Bytes per host→device copy, so that Ctrl-C is seen between chunks of a large upload. */
const UPLOAD_CHUNK = 64 * 2 ** 20;

/** Rows [p0, p0 + rows) of the data, on the device at x (the resident vectors, or the tile buffer). */
export interface Span {
  p0: number;
  rows: number;
  x: bigint;
}

export class VectorSpans {
  readonly tiles: number;

  /**
   * X holds every row (tileRows 0) or one tile; `sync` waits until the work queued on the
   * stream is done.
   */
  constructor(
    private readonly ctx: CudaContext,
    private readonly data: Dataset,
    private readonly X: DeviceBuffer,
    readonly tileRows: number,
    private readonly sync: () => Promise<void>,
  ) {
    this.tiles = tileRows ? Math.ceil(data.n / tileRows) : 1;
  }

  /** Resident: upload the vectors once, at open. Tiled: nothing (every loop uploads its tiles). */
  async uploadResident(): Promise<void> {
    if (!this.tileRows) await this.uploadRows(0, this.data.n);
  }

  /** fn(span, t) for each tile t in order, the tile's rows on the device when fn runs. */
  async forEachSpan(fn: (s: Span, t: number) => void | Promise<void>): Promise<void> {
    for (let t = 0; t < this.tiles; t++) await fn(await this.stage(t), t);
  }

  /** A per-point array (4-byte elements) from the span's first row on. */
  at(buf: DeviceBuffer, s: Span): bigint {
    return buf.ptr + BigInt(s.p0 * 4);
  }

  private async stage(t: number): Promise<Span> {
    if (!this.tileRows) return { p0: 0, rows: this.data.n, x: this.X.ptr };
    if (t > 0) await this.sync();
    const p0 = t * this.tileRows;
    const rows = Math.min(this.tileRows, this.data.n - p0);
    await this.uploadRows(p0, rows);
    return { p0, rows, x: this.X.ptr };
  }

  /** Copy rows [p0, p0 + rows) of the host's vectors to the start of X, in chunks so that Ctrl-C is seen. */
  private async uploadRows(p0: number, rows: number): Promise<void> {
    const { data } = this;
    const rowBytes = data.d * elementBytes(data.dtype);
    const total = rows * rowBytes;
    const step = Math.min(UPLOAD_CHUNK, viewLimitBytes()); // a host view never exceeds the limit
    for (let off = 0; off < total; off += step) {
      const bytes = new Uint8Array(data.buffer, data.byteOffset + p0 * rowBytes + off, Math.min(step, total - off));
      this.ctx.upload(this.X, bytes, off);
      if (interruptSignal.aborted) throw new InterruptedError();
      if (off + step < total) await yieldImmediate();
    }
  }
}
