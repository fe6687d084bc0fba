// The scalar residual codec on the GPU (cuda/residual.cu), for a CUDA backend once training is
// over: the vectors go up once more, the kernels compute the per-block ranges, then every row's
// codes and squared error, and only the codes and the errors come back. The result is the host
// encoder's (codecs/scalar.ts), bit for bit: the same scales (scalesOf on the same ranges), codes,
// error (rows summed in order, block by block) and checksum (int8: per 64 KB piece on the device,
// joined on the host). When the caller names the rows of its quality figures (measureRows), their
// row sums are made while the vectors and codes are on the device, and come back with the residuals.
import { BitsResiduals } from '../../codecs/bits.js';
import { bitsPlanOf } from '../../codecs/bits-train.js';
import type { BitsPlan } from '../../codecs/bits-rows.js';
import { CLIP_SAMPLE_ROWS, LEVELS, ScalarResiduals, rowsInput, scalesOf, type ScalarMode } from '../../codecs/scalar.js';
import { crc32c, crc32cJoin } from '../../io/vlc/crc32c.js';
import { BLOCK_ROWS, blocksOf, residualSample } from '../../codecs/scalar-rows.js';
import type { EncodedResiduals, ResidualInput } from '../../codecs/types.js';
import type { ScalesFrom } from '../../codecs/split.js';
import { asRows, elementBytes } from '../../vectors/dataset.js';
import { allocCodes, type Codes } from '../../vectors/codes.js';
import type { CudaContext } from './context.js';
import { KERNELS, launch } from './kernels.js';
import { HeldBuffers, type DeviceBuffer } from './pool.js';
import { log } from '../../log.js';
import { prefaultShared, takeShared } from '../../io/prefault.js';
import { downloadLarge, uploadLarge } from './pin.js';
import { setImmediate as yieldImmediate } from 'node:timers/promises';

/** Bytes of the vectors per upload view (pin.ts locks and copies each in pieces). */
const UPLOAD_VIEW = 2 ** 30;
export const THREADS = KERNELS.residual_rows.threads;

export async function encodeScalarOnGpu(
  ctx: CudaContext, kind: ScalarMode, input: ResidualInput,
): Promise<EncodedResiduals<ScalarResiduals>> {
  const { n, d } = input;
  const blocks = blocksOf(n);
  let scales!: Float32Array;
  const scalesFrom = async (maxAbs: Float64Array, sumSq: Float64Array) => {
    const sample = kind === 'int4' ? residualSample(rowsInput(input, false), n, CLIP_SAMPLE_ROWS) : undefined;
    return (scales = scalesOf(kind, n, d, blocks, maxAbs, sumSq, sample));
  };
  const codes = allocCodes<Int8Array>('i8', n, d, true, takeShared(Math.max(1, n * d)));
  const { blockErrs, sliceCrcs, rowSums } = await scalarOnGpu(ctx, kind, input, scalesFrom, codes, { crc: kind === 'int8', measureRows: input.measureRows, whole: true });
  const err = sumInOrder(blockErrs); // as encodeScalar sums its blocks'
  const crc = sliceCrcs && crc32cJoin(crc32c(new Uint8Array(Float32Array.from(scales).buffer)), sliceCrcs, CRC_SLICE, n * d);
  return { residuals: new ScalarResiduals(kind, n, d, scales, codes, crc), residualEnergy: err / n, rowSums };
}

/**
 * int8 / int4 rows on the GPU whose scales are made elsewhere (CodecDevice.encodeScalarRows: a
 * range of whole blocks of rows split over GPUs or MPI ranks): the block ranges handed to
 * `scalesFrom`, the codes into `codes`, each block's error in block order.
 */
export async function scalarRowsOnGpu(ctx: CudaContext, kind: ScalarMode, input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>): Promise<Float64Array> {
  return (await scalarOnGpu(ctx, kind, input, scalesFrom, codes, { crc: false, measureRows: undefined, whole: false })).blockErrs;
}

/**
 * The scalar codec's kernels over the input's rows: ranges (downloaded, handed to `scalesFrom`),
 * codes into `codes` and each block's error (blockErrsOnDevice); with `extra.crc` the codes' checksum per CRC_SLICE
 * piece, with `extra.measureRows` the quality rows' sums (rowSumsOnDevice); `extra.whole`: every row
 * of the data (downloadCodes may lock the codes' pages).
 */
async function scalarOnGpu(
  ctx: CudaContext, kind: ScalarMode, input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>,
  extra: { crc: boolean; measureRows: readonly number[] | null | undefined; whole: boolean },
): Promise<{ blockErrs: Float64Array; sliceCrcs?: Uint32Array; rowSums?: Float64Array }> {
  const { n, d } = input;
  const x = asRows(input.x, n, d);
  const blocks = blocksOf(n);
  const held = new HeldBuffers(ctx.pool); // (the pool gives zero-byte requests a buffer too)
  const { alloc } = held;
  const t: number[] = [performance.now()]; // upload, ranges, codes, download, checksum (-v)
  try {
    const { X, C, A } = await uploadInput(ctx, input, alloc);
    t.push(performance.now());
    const { maxAbs, sumSq } = await rangesOnDevice(ctx, x.dtype, { X, C, A }, n, d, alloc);
    const scales = await scalesFrom(maxAbs, sumSq);
    t.push(performance.now());

    const S = alloc('residual scales', d * 4);
    ctx.upload(S, scales);
    const codesBuf = alloc('residual codes', n * d);
    const rowErrBuf = alloc('residual row errors', n * 8);
    launch(ctx, 'residual_rows', x.dtype, Math.ceil(n / THREADS), {
      X: X.ptr, n, d, C: C.ptr, assign: A.ptr, scales: S.ptr, L: LEVELS[kind], codes: codesBuf.ptr, rowErr: rowErrBuf.ptr,
    });
    // The quality sample's row sums while the vectors and codes are still here (rowSums below).
    const sumsBuf = extra.measureRows !== undefined ? rowSumsOnDevice(ctx, x.dtype, extra.measureRows, n, d, { X, C, A, S, codes: codesBuf }, alloc) : undefined;
    const blockErrs = await blockErrsOnDevice(ctx, rowErrBuf, n, alloc);
    t.push(performance.now());
    await downloadCodes(ctx, codes, codesBuf, extra.whole);
    const rowSums = sumsBuf && new Float64Array(sumsBuf.count * 4);
    if (sumsBuf && rowSums) ctx.download(rowSums, sumsBuf.buf);
    t.push(performance.now());
    // int8's checksum from the codes still on the device (int4's codes are packed before writing: the writer checksums them).
    const sliceCrcs = extra.crc ? await codesCrcs(ctx, codesBuf, n * d, alloc) : undefined;
    t.push(performance.now());
    const ms = t.slice(1).map((v, k) => (v - t[k]).toFixed(1));
    log().debug(`${kind} residuals of ${n} rows on ${ctx.where}: upload ${ms[0]} ms, ranges ${ms[1]} ms, codes ${ms[2]} ms, download ${ms[3]} ms, checksum ${ms[4]} ms`);
    return { blockErrs, sliceCrcs, rowSums };
  } finally {
    held.free(); // the GPU's part is over
  }
}

/** Each encoder block's per-dimension largest |r| and Σ r² of the rows on the device (residual_ranges). */
export async function rangesOnDevice(
  ctx: CudaContext, dtype: 'f32' | 'f16', b: { X: DeviceBuffer; C: DeviceBuffer; A: DeviceBuffer }, n: number, d: number,
  alloc: (name: string, bytes: number) => DeviceBuffer,
): Promise<{ maxAbs: Float64Array; sumSq: Float64Array }> {
  const blocks = blocksOf(n);
  const maxAbsBuf = alloc('residual ranges', blocks * d * 8);
  const sumSqBuf = alloc('residual sums of squares', blocks * d * 8);
  launch(ctx, 'residual_ranges', dtype, Math.ceil((blocks * d) / THREADS), {
    X: b.X.ptr, n, d, C: b.C.ptr, assign: b.A.ptr, blockRows: BLOCK_ROWS, maxAbs: maxAbsBuf.ptr, sumSq: sumSqBuf.ptr,
  });
  await ctx.finish();
  const maxAbs = new Float64Array(blocks * d), sumSq = new Float64Array(blocks * d);
  ctx.download(maxAbs, maxAbsBuf);
  ctx.download(sumSq, sumSqBuf);
  return { maxAbs, sumSq };
}

/** The vectors, the anchors as stored (unless already there: `anchorsOnGpu`) and the assignments, on the device (the vectors a chunk at a time). */
export async function uploadInput(ctx: CudaContext, input: ResidualInput, alloc: (name: string, bytes: number) => DeviceBuffer, anchorsOnGpu?: DeviceBuffer) {
  const { n, d } = input;
  const x = asRows(input.x, n, d);
  const bytes = n * d * elementBytes(x.dtype);
  const X = alloc('vectors (residuals)', bytes);
  for (let off = 0; off < bytes; off += UPLOAD_VIEW) {
    await uploadLarge(ctx, X, new Uint8Array(x.buffer, x.byteOffset + off, Math.min(UPLOAD_VIEW, bytes - off)), off);
  }
  let C = anchorsOnGpu;
  if (!C) {
    C = alloc('stored anchors (residuals)', input.anchors.length * 4);
    ctx.upload(C, input.anchors);
  }
  const A = alloc('assignments (residuals)', n * 4);
  ctx.upload(A, input.assign instanceof Uint32Array ? input.assign : Uint32Array.from(input.assign));
  return { X, C, A };
}

/**
 * The bits codec's rows on the GPU (residual_bits_rows), once the host has chosen the bits and
 * steps on its sample (bits-train.ts bitsPlanOf, made while the vectors go up): the host encoder's
 * codes and error, bit for bit (the rows' errors summed in order, block by block, as blockBits sums them).
 */
export async function encodeBitsOnGpu(ctx: CudaContext, input: ResidualInput, R: number): Promise<EncodedResiduals<BitsResiduals>> {
  const { n, d } = input;
  prefaultShared(n * R); // the codes' pages, touched on other threads while the plan is made and the GPU codes
  const codes = allocCodes<Uint8Array>('u8', n, R, true, takeShared(Math.max(1, n * R)));
  let plan!: BitsPlan;
  const { blockErrs, sliceCrcs } = await bitsOnGpu(ctx, input, () => (plan = bitsPlanOf(rowsInput(input, false), n, d, R)), codes, true);
  // The payload's checksum from the codes' pieces checksummed on the device: the writer need not read 4.5 GB again.
  const head = new BitsResiduals(n, d, R, plan.bits, plan.steps, codes).head();
  const crc = sliceCrcs && crc32cJoin(crc32c(head), sliceCrcs, CRC_SLICE, n * R);
  return { residuals: new BitsResiduals(n, d, R, plan.bits, plan.steps, codes, crc), residualEnergy: sumInOrder(blockErrs) / Math.max(1, n) };
}

/**
 * The bits codec's rows under `plan` on the GPU (residual_bits_rows): the codes into `codes` and
 * each block's error, as blockBits makes them. `plan` may be made here, on the host, while the
 * vectors' copies (already queued when their pages are locked: pin.ts) run.
 */
export async function bitsRowsOnGpu(ctx: CudaContext, input: ResidualInput, plan: BitsPlan | (() => BitsPlan), codes: Codes<Uint8Array>): Promise<Float64Array> {
  return (await bitsOnGpu(ctx, input, plan, codes, false)).blockErrs;
}

/** bitsRowsOnGpu's kernels; with `checksum` the codes' checksum per CRC_SLICE piece (a whole payload's codes: not a range of rows). */
async function bitsOnGpu(
  ctx: CudaContext, input: ResidualInput, plan: BitsPlan | (() => BitsPlan), codes: Codes<Uint8Array>, checksum: boolean,
): Promise<{ blockErrs: Float64Array; sliceCrcs?: Uint32Array }> {
  const { n, d } = input;
  const t: number[] = [performance.now()]; // plan, upload, codes, download, checksum (-v)
  const held = new HeldBuffers(ctx.pool);
  const { alloc } = held;
  try {
    const up = uploadInput(ctx, input, alloc);
    let p: BitsPlan;
    try {
      p = typeof plan === 'function' ? plan() : plan;
    } catch (e) {
      await up.catch(() => undefined); // the copies end before their buffers are freed
      throw e;
    }
    t.push(performance.now());
    const { X, C, A } = await up;
    t.push(performance.now());
    const B = alloc('bits per dimension', d);
    ctx.upload(B, p.bits);
    const S = alloc('bits steps', d * 4);
    ctx.upload(S, p.steps);
    const codesBuf = alloc('bits codes', n * p.R);
    const rowErrBuf = alloc('residual row errors', n * 8);
    launch(ctx, 'residual_bits_rows', asRows(input.x, n, d).dtype, Math.ceil(n / THREADS), {
      X: X.ptr, n, d, C: C.ptr, assign: A.ptr, bits: B.ptr, steps: S.ptr, R: p.R, codes: codesBuf.ptr, rowErr: rowErrBuf.ptr,
    });
    const blockErrs = await blockErrsOnDevice(ctx, rowErrBuf, n, alloc);
    t.push(performance.now());
    await downloadCodes(ctx, codes, codesBuf, checksum);
    t.push(performance.now());
    const sliceCrcs = checksum ? await codesCrcs(ctx, codesBuf, n * p.R, alloc) : undefined;
    t.push(performance.now());
    const ms = t.slice(1).map((v, k) => (v - t[k]).toFixed(1));
    log().debug(`bits ${p.R}B residuals of ${n} rows on ${ctx.where}: plan ${ms[0]} ms, upload (after the plan) ${ms[1]} ms, codes ${ms[2]} ms, download ${ms[3]} ms, checksum ${ms[4]} ms`);
    return { blockErrs, sliceCrcs };
  } finally {
    held.free();
  }
}

/** The blocks' errors added in block order (as the host encoders add them). */
function sumInOrder(blockErrs: Float64Array): number {
  let err = 0;
  for (const e of blockErrs) err += e;
  return err;
}

/**
 * Each block's error, its rows' errors (on the device) summed in row order there
 * (residual_block_errs, as blockCodes and blockBits sum them): a number a block comes down, not a
 * number a row. Waits for the kernels queued before it.
 */
export async function blockErrsOnDevice(ctx: CudaContext, rowErr: DeviceBuffer, n: number, alloc: (name: string, bytes: number) => DeviceBuffer): Promise<Float64Array> {
  const blocks = blocksOf(n);
  const buf = alloc('residual block errors', blocks * 8);
  launch(ctx, 'residual_block_errs', 'f32', Math.ceil(blocks / THREADS), { rowErr: rowErr.ptr, n, blockRows: BLOCK_ROWS, blockErr: buf.ptr });
  await ctx.finish();
  const out = new Float64Array(blocks);
  ctx.download(out, buf);
  return out;
}

/**
 * Launches residual_row_sums over `rows` (null: every row): per listed row, in list order,
 * Σ (x − x̂)², Σ x², Σ x̂², Σ x·x̂ — what quality/reconstruction.ts sums on the host.
 */
function rowSumsOnDevice(
  ctx: CudaContext, dtype: 'f32' | 'f16', rows: readonly number[] | null, n: number, d: number,
  b: { X: DeviceBuffer; C: DeviceBuffer; A: DeviceBuffer; S: DeviceBuffer; codes: DeviceBuffer },
  alloc: (name: string, bytes: number) => DeviceBuffer,
): { buf: DeviceBuffer; count: number } {
  const list = rows === null ? Uint32Array.from({ length: n }, (_, i) => i) : Uint32Array.from(rows);
  const R = alloc('quality rows', list.length * 4);
  ctx.upload(R, list);
  const buf = alloc('quality row sums', list.length * 32);
  launch(ctx, 'residual_row_sums', dtype, Math.ceil(list.length / THREADS), {
    X: b.X.ptr, d, C: b.C.ptr, assign: b.A.ptr, scales: b.S.ptr, codes: b.codes.ptr, rows: R.ptr, count: list.length, sums: buf.ptr,
  });
  return { buf, count: list.length };
}

/** Bytes per piece of crc_slices (a multiple of 16: the kernel reads 16 bytes at a time). */
export const CRC_SLICE = 64 << 10;

/** The CRC32C of each CRC_SLICE-byte piece of the codes, computed on the device. */
export async function codesCrcs(ctx: CudaContext, codes: DeviceBuffer, bytes: number, alloc: (name: string, bytes: number) => DeviceBuffer): Promise<Uint32Array> {
  const pieces = Math.ceil(bytes / CRC_SLICE);
  const out = alloc('residual checksums', pieces * 4);
  launch(ctx, 'crc_slices', 'f32', Math.max(1, Math.ceil(pieces / KERNELS.crc_slices.threads)), { bytes: codes.ptr, total: bytes, slice: CRC_SLICE, out: out.ptr });
  await ctx.finish();
  const crcs = new Uint32Array(pieces);
  ctx.download(crcs, out);
  return crcs;
}

/** Page-locked chunk of downloadStaged. */
const STAGE_BYTES = 32 << 20;

/**
 * Device → host through a page-locked chunk, then into `dst`: the driver's copy straight into a
 * fresh pageable array ran at about 1 GB/s on the H100 machine (128 MB of int8 codes in 133-140 ms,
 * bench/results/2026-11-24-h100-h6.json). Without page-locked memory, the plain copy.
 */
function downloadStaged(ctx: CudaContext, bytes: Uint8Array, src: DeviceBuffer, srcOffset: number): void {
  for (let off = 0; off < bytes.length; off += STAGE_BYTES) {
    const want = Math.min(STAGE_BYTES, bytes.length - off);
    const pinned = ctx.pinned.stagingBuffer(Math.min(STAGE_BYTES, bytes.length));
    if (!pinned) return ctx.download(bytes.subarray(off), src, srcOffset + off);
    const chunk = pinned.subarray(0, want);
    ctx.download(chunk, src, srcOffset + off);
    bytes.set(chunk, off);
  }
}

/**
 * The device's codes (rows × width bytes from the buffer's start) into the host's pieces, each
 * from its offset. A large piece is locked and written by the copy engine itself (pin.ts
 * downloadLarge): its pages were faulted in on other threads while the GPU coded (prefaultShared),
 * so the lock need not fault them as it did when that cost more than the copy it saved (4.5 GB of
 * bits codes: 2.7 s locked, against 1.4 s for 6.4 GB staged; bench/results/2026-11-28-h100x4-r3i.json).
 * Only a whole payload's codes (`locked`: compress's one encode of every row, whose locks go once
 * uploads are over); a streamed compress's blocks, or rows split over GPUs, and smaller pieces go
 * through the context's page-locked staging chunk (made once, not once a call: a streamed compress
 * downloads every block's codes, on one thread), as do pieces where nothing is locked.
 */
export async function downloadCodes(ctx: CudaContext, codes: Codes, src: DeviceBuffer, locked = false): Promise<void> {
  let at = 0;
  for (const piece of codes.bytePieces()) {
    if (!(locked && piece.length >= LOCKED_DOWNLOAD_MIN && (await downloadLarge(ctx, piece, src, at)))) downloadStaged(ctx, piece, src, at);
    at += piece.length;
    await yieldImmediate(); // Ctrl-C, and other GPUs' work, between pieces
  }
}

/** Codes pieces at least this large are downloaded into their own locked pages (downloadLarge). */
const LOCKED_DOWNLOAD_MIN = 64 << 20;
