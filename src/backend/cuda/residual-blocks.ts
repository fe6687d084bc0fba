// The scalar codec's loops over one block of a streamed compress on the GPU (codecs/types.ts
// ScalarBlockDevice; api/compress-stream.ts): the block's rows, the stored anchors and their ids go
// up, residual_ranges gives each encoder block's per-dimension largest |r| and Σ r², or
// residual_rows the codes under the whole data's scales with each row's error (summed per encoder block by residual_block_errs), and crc_slices the
// codes' checksum. The kernels are encodeScalarOnGpu's (residual.ts), so the figures, codes, errors
// and checksum are the host loops' (codecs/scalar-rows.ts), bit for bit. The anchors go up once an
// encoder (BlockAnchors), not with every block: for m 65,536 × 128 they are twice a block's f16 rows.
import type { ResidualInput } from '../../codecs/types.js';
import { crc32cJoin } from '../../io/vlc/crc32c.js';
import { takeShared } from '../../io/prefault.js';
import { allocCodes, type Codes } from '../../vectors/codes.js';
import { asRows } from '../../vectors/dataset.js';
import type { CudaContext } from './context.js';
import { launch } from './kernels.js';
import { HeldBuffers, type DeviceBuffer } from './pool.js';
import { blockErrsOnDevice, codesCrcs, CRC_SLICE, downloadCodes, rangesOnDevice, THREADS, uploadInput } from './residual.js';

/**
 * A block encoder's stored anchors on one GPU: uploaded with its first block and kept for the rest
 * (they never change: codecs/types.ts ScalarBlockDevice); another encoder's anchors free them once
 * none of their blocks still runs, and the context's close frees what is left.
 */
export class BlockAnchors {
  private held = new Map<Float32Array, { buf: DeviceBuffer; users: number }>();
  constructor(private readonly ctx: CudaContext) {}

  async with<T>(anchors: Float32Array, run: (C: DeviceBuffer) => Promise<T>): Promise<T> {
    let h = this.held.get(anchors);
    if (!h) {
      for (const [a, o] of this.held) {
        if (o.users > 0) continue;
        this.ctx.pool.free(o.buf);
        this.held.delete(a);
      }
      const buf = this.ctx.pool.alloc('stored anchors (stream blocks)', anchors.length * 4);
      this.ctx.upload(buf, anchors);
      h = { buf, users: 0 };
      this.held.set(anchors, h);
    }
    h.users++;
    try {
      return await run(h.buf);
    } finally {
      h.users--;
    }
  }
}

export async function scalarRangesOnGpu(ctx: CudaContext, input: ResidualInput, C: DeviceBuffer): Promise<{ maxAbs: Float64Array; sumSq: Float64Array }> {
  const held = new HeldBuffers(ctx.pool);
  try {
    const bufs = await uploadInput(ctx, input, held.alloc, C);
    return await rangesOnDevice(ctx, asRows(input.x, input.n, input.d).dtype, bufs, input.n, input.d, held.alloc);
  } finally {
    held.free();
  }
}

export async function scalarCodesOnGpu(
  ctx: CudaContext, input: ResidualInput, scales: Float32Array, L: number, anchors: DeviceBuffer,
): Promise<{ codes: Codes<Int8Array>; blockErrs: Float64Array; crc: number }> {
  const { n, d } = input;
  const x = asRows(input.x, n, d);
  const held = new HeldBuffers(ctx.pool);
  const { alloc } = held;
  try {
    const { X, C, A } = await uploadInput(ctx, input, alloc, anchors);
    const S = alloc('residual scales', d * 4);
    ctx.upload(S, scales);
    const codesBuf = alloc('residual codes', n * d);
    const rowErrBuf = alloc('residual row errors', n * 8);
    launch(ctx, 'residual_rows', x.dtype, Math.ceil(n / THREADS), {
      X: X.ptr, n, d, C: C.ptr, assign: A.ptr, scales: S.ptr, L, codes: codesBuf.ptr, rowErr: rowErrBuf.ptr,
    });
    const blockErrs = await blockErrsOnDevice(ctx, rowErrBuf, n, alloc);
    const codes = allocCodes<Int8Array>('i8', n, d, true, takeShared(Math.max(1, n * d))); // touched ahead (BlockEncoder.scratchBytes)
    await downloadCodes(ctx, codes, codesBuf);
    const crc = crc32cJoin(0, await codesCrcs(ctx, codesBuf, n * d, alloc), CRC_SLICE, n * d);
    return { codes, blockErrs, crc };
  } finally {
    held.free();
  }
}
