// Buffer codecs for Arrow IPC. apache-arrow's JS reader decompresses buffers only through codecs
// the application registers, and ships none. LZ4 frames (pyarrow's Feather default) use our own
// codec; ZSTD frames (`write_feather(..., compression="zstd")`) use Node's own zstd where it has one
// (node:zlib, Node >= 22.15), else fzstd, the pure-JS decoder hyparquet's compressors already bring
// in (several times slower on float data: docs/inputs.md).
import * as zlib from 'node:zlib';
import { compressionRegistry, CompressionType } from 'apache-arrow';
import { decompress as zstdDecompress } from 'fzstd';
import { lz4FrameDecode, lz4FrameEncode } from '../lz4.js';

/**
 * fzstd reads the frame's size fields as 32-bit signed integers and refuses windows over this
 * (its own limit), so one buffer of 2 GiB or more cannot be decoded by it.
 */
export const ZSTD_MAX_BUFFER = 2145386496;

/**
 * The decompressed size a ZSTD frame header announces (Frame_Content_Size, RFC 8878 §3.1.1.1),
 * or undefined when the writer left it out.
 */
function frameContentSize(frame: Uint8Array): number | undefined {
  if (frame.length < 6) return undefined;
  const fhd = frame[4];
  const sizeFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  const fieldBytes = sizeFlag === 0 ? singleSegment : 1 << sizeFlag;
  if (fieldBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][fhd & 3];
  if (at + fieldBytes > frame.length) return undefined;
  let size = 0;
  for (let i = fieldBytes - 1; i >= 0; i--) size = size * 256 + frame[at + i];
  return sizeFlag === 1 ? size + 256 : size;
}

/**
 * One ZSTD-compressed Arrow buffer (a whole frame); errors name the codec. The result starts on
 * an 8-byte boundary, as apache-arrow's Float64Array / BigInt64Array views of it require.
 */
const nativeZstd = (zlib as { zstdDecompressSync?: (b: Uint8Array) => Uint8Array }).zstdDecompressSync;

export function zstdDecode(frame: Uint8Array): Uint8Array {
  try {
    if (nativeZstd) {
      const out = nativeZstd(frame);
      return out.byteOffset % 8 === 0 ? out : out.slice();
    }
    const size = frameContentSize(frame);
    if (size === undefined) {
      const out = zstdDecompress(frame);
      return out.byteOffset % 8 === 0 ? out : out.slice();
    }
    if (size > ZSTD_MAX_BUFFER) throw Object.assign(new Error(), { code: 1 });
    const out = new Uint8Array(size);
    zstdDecompress(frame, out);
    return out;
  } catch (e) {
    const why = (e as { code?: number }).code === 1 ? `a buffer over ${ZSTD_MAX_BUFFER} bytes, more than the decoder handles; write smaller record batches` : (e as Error).message;
    throw new Error(`ZSTD: ${why}`);
  }
}

let registered = false;
/** Teach apache-arrow LZ4 frames (read and write) and ZSTD (read). Safe to call more than once. */
export function registerArrowCodecs(): void {
  if (registered) return;
  compressionRegistry.set(CompressionType.LZ4_FRAME, { decode: lz4FrameDecode, encode: lz4FrameEncode });
  compressionRegistry.set(CompressionType.ZSTD, { decode: zstdDecode });
  registered = true;
}
