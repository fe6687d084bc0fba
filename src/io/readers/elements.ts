// Element types found in embedding files, and the one routine that moves them into a Dataset's
// array: f32 and f16 are read straight into the destination's memory (no intermediate copy);
// everything else goes through a small reused chunk and is converted to f32.
import { parallelReadable, readParallel } from './parallel-read.js';
import { elementBytes, elements, viewLimitBytes, type VectorDtype, type VectorStore } from '../../vectors/dataset.js';
import type { ByteSource } from './source.js';
import { checkpoint } from '../../interrupt.js';
import { firstSuspect } from './validate.js';

export type ElementType = 'f32' | 'f16' | 'f64' | 'bf16' | 'u8' | 'i8';

export const ELEMENT_BYTES: Record<ElementType, number> = { f32: 4, f16: 2, f64: 8, bf16: 2, u8: 1, i8: 1 };

/** The Dataset dtype an input element type is kept as: f16 stays half, the rest become f32. */
export function keptAs(t: ElementType): VectorDtype {
  return t === 'f16' ? 'f16' : 'f32';
}

/** Bytes per read: large enough that syscalls are cheap, small enough to still be in cache when scanned. */
export const CHUNK_BYTES = 4 << 20;

/** Bytes of a typed view as a Uint8Array view (for reading into it directly). */
function byteView(v: Float32Array | Uint16Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** Reverse the byte order of each `eb`-byte element of `bytes` in place (big-endian inputs). */
export function swapBytes(bytes: Uint8Array, eb: number): void {
  if (eb === 1) return;
  if (bytes.byteOffset % eb !== 0) {
    for (let i = 0; i + eb <= bytes.length; i += eb) bytes.subarray(i, i + eb).reverse();
    return;
  }
  if (eb === 2) {
    const h = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1);
    for (let i = 0; i < h.length; i++) h[i] = ((h[i] & 0xff) << 8) | (h[i] >>> 8);
    return;
  }
  const w = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  for (let i = 0; i < w.length; i++) {
    const x = w[i];
    w[i] = ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24);
  }
  if (eb === 8) {
    // Each 8-byte element is now two swapped halves in the wrong order: exchange them.
    for (let i = 0; i + 1 < w.length; i += 2) {
      const t = w[i];
      w[i] = w[i + 1];
      w[i + 1] = t;
    }
  }
}

/**
 * Convert `count` elements of type t held in `bytes` (little-endian, or big-endian when
 * `bigEndian`: then `bytes` is swapped in place first) into dst[at..].
 * dst is a Uint16Array for f16 (bits copied) and a Float32Array otherwise.
 */
export function decodeElements(bytes: Uint8Array, t: ElementType, count: number, dst: Float32Array | Uint16Array, at: number, bigEndian = false): void {
  const eb = ELEMENT_BYTES[t];
  // Aligned typed views need an aligned offset; copy the (rare) unaligned case once.
  const b = bytes.byteOffset % eb === 0 ? bytes : bytes.slice(0, count * eb);
  if (bigEndian) swapBytes(b.subarray(0, count * eb), eb);
  switch (t) {
    case 'f32':
      dst.set(new Float32Array(b.buffer, b.byteOffset, count), at);
      return;
    case 'f16':
      dst.set(new Uint16Array(b.buffer, b.byteOffset, count), at);
      return;
    case 'f64':
      dst.set(new Float64Array(b.buffer, b.byteOffset, count), at);
      return;
    case 'u8':
      dst.set(b.subarray(0, count), at);
      return;
    case 'i8':
      dst.set(new Int8Array(b.buffer, b.byteOffset, count), at);
      return;
    case 'bf16': {
      // bfloat16 is the top half of an f32: shift the bits up and reinterpret.
      const h = new Uint16Array(b.buffer, b.byteOffset, count);
      const out = new Uint32Array(dst.buffer, dst.byteOffset + at * 4, count);
      for (let i = 0; i < count; i++) out[i] = h[i] << 16;
      return;
    }
  }
}

/**
 * Read `count` elements of type t starting at byte `offset` of src into elements [at..] of dst (a
 * store of any size), in chunks. Each chunk is scanned for NaN/Inf right after it lands, while it
 * is still in cache (a separate pass over a large array afterwards costs nearly as much as the
 * read). Returns the index in dst of the first NaN/Inf, or -1. `bigEndian` elements are
 * byte-swapped as they land.
 */
export async function readElements(
  src: ByteSource,
  offset: number,
  count: number,
  t: ElementType,
  dst: VectorStore,
  at: number,
  bigEndian = false,
): Promise<number> {
  const eb = ELEMENT_BYTES[t];
  const direct = t === 'f32' || t === 'f16';
  if (direct && !bigEndian && parallelReadable(src, count * eb)) {
    const bad = await readParallel(src, offset, count, eb as 2 | 4, dst, at);
    return bad < 0 ? -1 : at + bad;
  }
  const perChunk = Math.max(1, Math.floor(Math.min(CHUNK_BYTES / eb, viewLimitBytes() / elementBytes(dst.dtype))));
  const scratch = direct ? undefined : new Uint8Array(Math.min(count, perChunk) * eb);
  let firstBad = -1;
  for (let done = 0; done < count; done += perChunk) {
    const k = Math.min(perChunk, count - done);
    const view = elements(dst, at + done, k);
    if (direct) {
      const bytes = byteView(view);
      src.readInto(bytes, offset + done * eb);
      if (bigEndian) swapBytes(bytes, eb);
    } else {
      const buf = scratch!.subarray(0, k * eb);
      src.readInto(buf, offset + done * eb);
      decodeElements(buf, t, k, view, 0, bigEndian);
    }
    if (firstBad < 0) {
      const bad = firstSuspect(view, 0, k);
      if (bad >= 0) firstBad = at + done + bad;
    }
    await checkpoint(); // a large read yields now and then: Ctrl-C is heard, progress is drawn
  }
  return firstBad;
}
