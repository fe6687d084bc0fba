// The entropy-coded residual section (codecs/ec/) decoded on the GPU (cuda/ec.cu): the blocks' bytes
// and the models go up once, and any range of rows is rebuilt on the device — ec_decode (one warp
// per block of rows: its 32 rANS lanes) writes a span of blocks' integer codes into a scratch
// buffer, ec_axis or ec_rotated turns them and the anchors into f32 rows, bit for bit as the
// host's residuals.ts addTo after io/vlc/reconstruct.ts. decode.ts hands the rows to the k-NN
// (`vlc search --device cuda`) and to the backend's CodecDevice.decodeRows (decodeRowsOnGpu).
import type { EcResiduals } from '../../codecs/ec/residuals.js';
import type { CudaContext } from './context.js';
import { KERNELS, launch } from './kernels.js';
import { memInfo, type DeviceBuffer } from './pool.js';

/** Blocks of rows each ec_decode thread block decodes (one warp each). */
const WARPS = KERNELS.ec_decode.points.value;
/**
 * Share of the GPU's free memory (once the section is up) that the scratch of decoded codes (int32)
 * may take, and the least it takes: every block of a launch is one warp, and the blocks are the
 * decoder's only parallelism, so one launch should hold all of them where memory allows. A range
 * needing more is decoded a span of blocks at a time.
 */
const SCRATCH_SHARE = 0.25;
const SCRATCH_MIN = 256 << 20;

/** Uploads a host array into a fresh device buffer (decode.ts's, which frees it with the rest). */
export type Upload = (name: string, data: ArrayBufferView) => DeviceBuffer;

/** Device bytes ecRows takes for the section at least (its scratch at its smallest), beside the anchors, assignments and rows. */
export function ecDeviceBytes(r: EcResiduals): number {
  const { layout } = r;
  const D = layout.dims.length, blocks = layout.blockAt.length - 1;
  const blockBytes = layout.blockAt[blocks] - layout.blockAt[0];
  const tables = D * layout.models.M * 6 + D * 20 + r.d * 4 + (layout.rotation?.values.length ?? 0) * 4;
  return blockBytes + 8 * (blocks + 1) + tables + Math.min(r.n, spanBlocks(r, 0) * layout.blockRows) * D * 4 + 4;
}

/** Blocks decoded per ec_decode launch: all of them where SCRATCH_SHARE of `free` bytes (or SCRATCH_MIN) holds their codes. */
function spanBlocks(r: EcResiduals, free: number): number {
  const { blockRows, dims } = r.layout;
  const blocks = Math.ceil(r.n / blockRows);
  return Math.max(1, Math.min(blocks, Math.floor(Math.max(SCRATCH_MIN, free * SCRATCH_SHARE) / (blockRows * Math.max(1, dims.length) * 4))));
}

/**
 * What decoding the section's rows first .. first + n − 1 on the device needs (first: a multiple of
 * its blockRows; only their blocks go up), uploaded with `up` (the anchors and the range's
 * assignments are up already); returns the fill of decode.ts's DeviceRows, rows numbered from first. `grid(rows)`:
 * thread blocks of the grid-stride kernels for rows × d elements; maxSpan: blocks a launch at most (tests).
 */
export function ecRows(
  ctx: CudaContext, r: EcResiduals, first: number, n: number, up: Upload, alloc: (name: string, bytes: number) => DeviceBuffer,
  anchors: DeviceBuffer, assign: DeviceBuffer, grid: (rows: number) => number, maxSpan = Infinity,
): (out: DeviceBuffer, r0: number, rows: number, later?: boolean) => void | (() => void) {
  const { layout, d } = r;
  const { blockRows, dims, alpha, models, rotation } = layout;
  const D = dims.length;
  // The range's blocks, numbered from 0 on the device; each is decoded whole (a block's stream is
  // checked to its end), so the kernel is told the section's rows from first on (r.n − first).
  if (first % blockRows !== 0) throw new Error(`ec decode: rows from ${first} start inside a block of ${blockRows} rows`);
  const bFirst = first / blockRows;
  const blocks = Math.ceil((first + n) / blockRows) - bFirst;
  // The blocks one after the other from offset 0 (each a multiple of 4 bytes: the kernel reads their heads as u32).
  const at = new BigUint64Array(blocks + 1);
  for (let b = 0; b < blocks; b++) at[b + 1] = at[b] + BigInt(layout.blockAt[bFirst + b + 1] - layout.blockAt[bFirst + b]); // sizes from the table: no block read
  const bytes = alloc('ec blocks', Math.max(4, Number(at[blocks])));
  uploadBlocks(ctx, r, bFirst, blocks, at, bytes);
  const blockAt = up('ec block offsets', at);
  const slots = D ? up('ec slot tables', models.slots()) : undefined;
  const state = D ? up('ec state tables', stateTable(r)) : undefined;
  const lo = up('ec first codes', D ? alpha.lo : new Int32Array(1));
  const size = up('ec alphabet sizes', D ? alpha.size : new Uint32Array(1));
  const steps = up('ec steps', D ? Float32Array.from(dims, (k) => layout.steps[k]) : new Float32Array(1));
  const offsets = up('ec offsets', D ? Float32Array.from(dims, (k) => layout.offsets[k]) : new Float32Array(1));
  const err = up('ec error', new Int32Array(1));
  const span = Math.max(1, Math.min(maxSpan, spanBlocks(r, memInfo(ctx.drv)[0])));
  const codes = D ? alloc('ec codes', Math.min(r.n - first, span * blockRows) * D * 4) : undefined;
  let rebuild: (c0: number, s0: number, count: number, out: bigint) => void;
  if (rotation) {
    const dimsBuf = up('ec directions used', D ? dims : new Int32Array(1));
    const P = up('ec directions', rotation.values);
    rebuild = (c0, s0, count, out) => launch(ctx, 'ec_rotated', 'f32', grid(count), {
      anchors: anchors.ptr, assign: assign.ptr, codes: codes?.ptr ?? 0n, dims: dimsBuf.ptr, P: P.ptr, steps: steps.ptr, offsets: offsets.ptr,
      D, c0, r0: s0, rows: count, d, out,
    });
  } else {
    const colOf = new Int32Array(d).fill(-1);
    dims.forEach((k, c) => (colOf[k] = c));
    const cols = up('ec columns', colOf);
    rebuild = (c0, s0, count, out) => launch(ctx, 'ec_axis', 'f32', grid(count), {
      anchors: anchors.ptr, assign: assign.ptr, codes: codes?.ptr ?? 0n, colOf: cols.ptr, steps: steps.ptr, offsets: offsets.ptr,
      D, c0, r0: s0, rows: count, d, out,
    });
  }
  return (out, r0, rows, later = false) => {
    if (rows <= 0) return;
    if (r0 < 0 || r0 + rows > n) throw new Error(`ec decode: rows ${r0} .. ${r0 + rows - 1} outside the ${n} uploaded`);
    const last = Math.ceil((r0 + rows) / blockRows);
    for (let b = Math.floor(r0 / blockRows); b < last; b += span) {
      const count = Math.min(span, last - b);
      if (codes) {
        launch(ctx, 'ec_decode', 'f32', Math.ceil(count / WARPS), {
          bytes: bytes.ptr, blockAt: blockAt.ptr, b0: b, blocks: count, blockRows, n: r.n - first, D, scaleBits: models.scaleBits,
          slots: slots!.ptr, state: state!.ptr, lo: lo.ptr, size: size.ptr, codes: codes.ptr, err: err.ptr,
        });
      }
      const s0 = Math.max(r0, b * blockRows), s1 = Math.min(r0 + rows, (b + count) * blockRows);
      rebuild(b * blockRows, s0, s1 - s0, out.ptr + BigInt((s0 - r0) * d * 4));
    }
    const check = () => {
      const failed = new Int32Array(1);
      ctx.download(failed, err);
      if (failed[0] === 0) return;
      // The host's reader checked every block at open: a block the kernel finds damaged is a fault of
      // this decoder. Blocks read as coded (a file read where it lies) were checked by its checksum alone.
      const bad = bFirst + failed[0] - 1;
      if (r.decodedOnHost) throw new Error(`ec decode on ${ctx.where}: block ${bad} did not decode on the GPU as it did on the host`);
      throw r.corrupt(`block ${bad}: does not decode`);
    };
    if (later) return check;
    check();
  };
}

/** Per coordinate and slot (coordinate j's at j · 2^S): (f − 1) | (slot − c) << 16 of the symbol the slot decodes to (both < 2^16). */
export function stateTable(r: EcResiduals): Uint32Array {
  const { M, start, freq, count } = r.layout.models;
  const out = new Uint32Array(count * M);
  for (let j = 0; j < count; j++) {
    let at = j * M;
    for (let s = start[j]; s < start[j + 1]; s++) {
      const f = freq[s];
      for (let o = 0; o < f; o++) out[at + o] = ((f - 1) | (o << 16)) >>> 0;
      at += f;
    }
  }
  return out;
}

/** Blocks bFirst .. bFirst + blocks − 1 into `buf` at their offsets `at` (from 0): one upload per run of blocks that lie one after the other in one host array (the reader's case). */
function uploadBlocks(ctx: CudaContext, r: EcResiduals, bFirst: number, blocks: number, at: BigUint64Array, buf: DeviceBuffer): void {
  const CHUNK = 64 << 20;
  let b = 0;
  while (b < blocks) {
    const first = r.blocks(bFirst + b);
    let end = first.at + first.size, e = b + 1;
    for (; e < blocks; e++) {
      const next = r.blocks(bFirst + e);
      if (next.bytes !== first.bytes || next.at !== end) break;
      end += next.size;
    }
    const src = first.bytes.subarray(first.at, end), off = Number(at[b]);
    for (let o = 0; o < src.length; o += CHUNK) ctx.upload(buf, src.subarray(o, Math.min(src.length, o + CHUNK)), off + o);
    b = e;
  }
}
