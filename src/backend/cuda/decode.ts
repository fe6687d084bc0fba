// A .vlc's vectors decoded on the GPU (cuda/decode.cu) for `vlc search --device cuda`: what the
// file holds goes up once (anchors, assignments, codes, scales, codebooks: for int8 a quarter of
// the f32 rows, for pq and bits far less; from a file read where it lies, a block of rows at a
// time, or for ec its blocks' bytes one at a time, never decoded on the host), and the k-NN (knn.ts knnRows) has any range of rows written
// straight into its device buffer, bit for bit as io/vlc/reconstruct.ts writes them on the host.
import { BitsResiduals } from '../../codecs/bits.js';
import { EcResiduals } from '../../codecs/ec/residuals.js';
import { PqResiduals } from '../../codecs/pq.js';
import { ScalarResiduals } from '../../codecs/scalar.js';
import type { CodedResiduals } from '../../codecs/types.js';
import type { Codes } from '../../vectors/codes.js';
import { BlockedResiduals } from '../../io/vlc/on-disk.js';
import type { Decodable } from '../../io/vlc/reconstruct.js';
import { rangeOf } from '../../io/vlc/row-range.js';
import type { CudaContext } from './context.js';
import { ecRows } from './ec.js';
import { uploadBlocks } from './upload-blocks.js';
import { launch } from './kernels.js';
import { HeldBuffers, type DeviceBuffer } from './pool.js';

/** Rows that the device writes itself into a buffer of rows × d f32 (the k-NN's base piece). */
export interface DeviceRows {
  /**
   * Queues the decoding of rows r0 .. r0 + rows − 1 into out. `later`: a check the decoder makes of
   * the finished work (ec: that every block decoded; a download, which would hold the host until
   * this GPU is done) is returned for the caller to make once it has waited, instead of made here.
   */
  fill(out: DeviceBuffer, r0: number, rows: number, later?: boolean): void | (() => void);
  free(): void;
}

/** Blocks per multiprocessor of the grid-stride decode kernels: enough to hide memory latency. */
const BLOCKS_PER_SM = 16;
/** Bytes per synchronous upload (Ctrl-C is heard between them). */
const UPLOAD_CHUNK = 64 << 20;

/** Whether decodeOnDevice handles this file's residuals (none, int8, int4, pq with or without a projection, bits, ec). */
export function decodableOnDevice(file: Decodable): boolean {
  const r = deviceForm(rangeOf(file).of.residuals);
  return r === undefined || r instanceof ScalarResiduals || r instanceof PqResiduals || r instanceof BitsResiduals || r instanceof EcResiduals;
}

/**
 * The residuals whose form the device takes: a file read where it lies (io/vlc/on-disk.ts) gives
 * its coded form when its codec has one (ec: the blocks' bytes, decoded on the device alone), else
 * its first block (the codec's parameters; the codes go up a block at a time).
 */
function deviceForm(r: CodedResiduals | undefined): CodedResiduals | undefined {
  return r instanceof BlockedResiduals ? (r.coded() ?? r.block(0)) : r;
}

export interface DecodeOptions {
  /** Tests: an ec section decoded at most this many blocks a launch (ec.ts). */
  ecSpanBlocks?: number;
  /** Called between the blocks of a file read where it lies; may throw to end the upload (another GPU's failed: split-knn.ts). */
  stop?: () => void;
}

/**
 * Uploads what decoding file's n rows needs; the caller frees the result (on every path). A view of
 * rows [first, first + n) of a file (io/vlc/row-range.ts) uploads only their assignments and codes
 * (the anchors and the codec's parameters whole), and `fill` numbers rows from the view's first.
 */
export async function decodeOnDevice(ctx: CudaContext, file: Decodable, n: number, o: DecodeOptions = {}): Promise<DeviceRows> {
  const { d } = file.manifest;
  const { of: whole, first } = rangeOf(file);
  const held = new HeldBuffers(ctx.pool);
  // `bytes` into buf at `at`, a chunk at a time.
  const put = (buf: DeviceBuffer, bytes: Uint8Array, at: number) => {
    for (let off = 0; off < bytes.length; off += UPLOAD_CHUNK) ctx.upload(buf, bytes.subarray(off, Math.min(bytes.length, off + UPLOAD_CHUNK)), at + off);
  };
  const up = (name: string, data: ArrayBufferView): DeviceBuffer => {
    const buf = held.alloc(name, data.byteLength);
    put(buf, new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 0);
    return buf;
  };
  const r = deviceForm(whole.residuals);
  // A file read where it lies, its codes a block of rows at a time (none when its codec gives its coded form: ec).
  const blocked = whole.residuals instanceof BlockedResiduals && !(r instanceof EcResiduals) ? whole.residuals : undefined;
  if (blocked && first % blocked.rows !== 0) throw new Error(`decode on the GPU: rows from ${first} start inside a block of ${blocked.rows} rows`);
  // Rows [first, first + n) of the codes in one device buffer: from a file read where it lies, its
  // blocks read several at once and copied as they arrive (upload-blocks.ts); from memory, a piece at a time.
  const upCodes = async (name: string, codesOf: (res: CodedResiduals) => Codes): Promise<DeviceBuffer> => {
    const width = codesOf(r!).width;
    const buf = held.alloc(name, n * width);
    if (blocked) {
      await uploadBlocks(ctx, blocked, codesOf, buf, first, n, width, o.stop);
      return buf;
    }
    let at = 0;
    codesOf(r!).forEachRun(first, first + n, (bytes) => {
      put(buf, bytes, at);
      at += bytes.length;
    });
    return buf;
  };
  const free = () => held.free();
  try {
    ctx.makeCurrent();
    const anchors = up('decode anchors', whole.anchors);
    const assign = up('decode assignments', u32Rows(whole.assignments, first, first + n));
    const blocks = (rows: number) => Math.max(1, Math.min(Math.ceil((rows * d) / 256), Math.max(1, ctx.info.multiprocessors) * BLOCKS_PER_SM));
    if (r instanceof PqResiduals) {
      const codes = await upCodes('decode pq codes', (x) => (x as PqResiduals).codes);
      const bounds = up('decode pq bounds', r.bounds);
      const codebooks = up('decode pq codebooks', r.codebooks);
      const scales = up('decode pq scales', r.scales);
      if (r.projection) {
        const projection = up('decode pq projection', r.projection);
        return {
          fill: (out, r0, rows) => launch(ctx, 'decode_pq_projected', 'f32', blocks(rows), {
            anchors: anchors.ptr, assign: assign.ptr, codes: codes.ptr, bounds: bounds.ptr, codebooks: codebooks.ptr, projection: projection.ptr,
            scales: scales.ptr, M: r.M, K: r.K, r0, rows, d, out: out.ptr,
          }),
          free,
        };
      }
      return {
        fill: (out, r0, rows) => launch(ctx, 'decode_pq', 'f32', blocks(rows), {
          anchors: anchors.ptr, assign: assign.ptr, codes: codes.ptr, bounds: bounds.ptr, codebooks: codebooks.ptr, scales: scales.ptr,
          M: r.M, K: r.K, r0, rows, d, out: out.ptr,
        }),
        free,
      };
    }
    if (r instanceof BitsResiduals) {
      const codes = await upCodes('decode bits codes', (x) => (x as BitsResiduals).codes);
      const bits = up('decode bits per dimension', r.bits);
      const start = up('decode bit starts', r.starts());
      const steps = up('decode bits steps', r.steps);
      return {
        fill: (out, r0, rows) => launch(ctx, 'decode_bits', 'f32', blocks(rows), {
          anchors: anchors.ptr, assign: assign.ptr, codes: codes.ptr, bits: bits.ptr, start: start.ptr, steps: steps.ptr, R: r.R, r0, rows, d, out: out.ptr,
        }),
        free,
      };
    }
    if (r instanceof EcResiduals) return { fill: ecRows(ctx, r, first, n, up, held.alloc, anchors, assign, blocks, o.ecSpanBlocks), free };
    if (r !== undefined && !(r instanceof ScalarResiduals)) throw new Error(`decode on the GPU: no kernel for residual mode ${r.mode}`);
    // No residuals: a null codes pointer, and the kernel copies the anchors.
    const codes = r ? (await upCodes('decode codes', (x) => (x as ScalarResiduals).codes)).ptr : 0n;
    const scales = r ? up('decode scales', r.scales).ptr : 0n;
    return {
      fill: (out, r0, rows) => launch(ctx, 'decode_scalar', 'f32', blocks(rows), {
        anchors: anchors.ptr, assign: assign.ptr, codes, scales, r0, rows, d, out: out.ptr,
      }),
      free,
    };
  } catch (e) {
    free();
    throw e;
  }
}

/**
 * Rows r0 .. r1 − 1 of the file decoded on the device and downloaded into out (row-major from its
 * start; returned), bit for bit io/vlc/reconstruct.ts reconstructRange: a cosine file's norms are
 * applied here on the host (one f32 product per element, as reconstruct.ts's scaleRow).
 */
export async function decodeRowsOnGpu(ctx: CudaContext, file: Decodable, r0: number, r1: number, out: Float32Array): Promise<Float32Array> {
  const { d } = file.manifest;
  const rows = r1 - r0;
  if (rows <= 0) return out;
  // The rows' buffer first: the decoder's scratch takes a share of what memory is left (ec.ts).
  const buf = ctx.pool.alloc('decoded rows', rows * d * 4);
  let dev: DeviceRows | undefined;
  try {
    dev = await decodeOnDevice(ctx, file, r1);
    dev.fill(buf, r0, rows);
    await ctx.finish();
    const view = out.subarray(0, rows * d);
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let o = 0; o < bytes.length; o += UPLOAD_CHUNK) ctx.download(bytes.subarray(o, Math.min(bytes.length, o + UPLOAD_CHUNK)), buf, o);
    if (file.norms) for (let i = 0; i < rows; i++) for (let k = 0, s = file.norms[r0 + i]; k < d; k++) view[i * d + k] *= s;
    return out;
  } finally {
    dev?.free();
    ctx.pool.free(buf);
  }
}

/** Assignments r0 .. r1 − 1 as u32 (a view when the file already holds a Uint32Array; u8/u16 widened by one typed-array copy). */
function u32Rows(a: ArrayLike<number>, r0: number, r1: number): Uint32Array {
  if (a instanceof Uint32Array) return a.subarray(r0, r1);
  const out = new Uint32Array(r1 - r0);
  if (a instanceof Uint8Array || a instanceof Uint16Array) out.set(a.subarray(r0, r1));
  else for (let i = r0; i < r1; i++) out[i - r0] = a[i];
  return out;
}
