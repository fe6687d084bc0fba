// Codes of any count: a residual codec's rows × width bytes (int8/int4: n × d, pq: n × M, bits:
// n × R). One typed array holds at most 2^32 − 1 elements, and 50,000,000 × 128 int8 codes are
// more, so codes live as vectors do (dataset.ts): in ONE buffer of any size (a SharedArrayBuffer
// when worker threads fill them, or the bytes of a .vlc file read into memory), read and written
// through pieces — typed views of whole rows, each at most viewLimitBytes() (1 GiB; tests shrink it
// with setMaxViewBytesForTests so that a few hundred rows span many pieces). Row i lies in piece
// ⌊i / per⌋ at element (i mod per)·width: offsets beyond 2^32 are computed as numbers (never
// through 32-bit `|`/`>>`), and within a piece they stay below its length. A worker thread gets
// handle() (the buffer and offsets) and makes its own views: a typed array over more than 4 GiB
// of a SharedArrayBuffer posted to a worker arrives truncated.
import { viewLimitBytes } from './dataset.js';
import { hugeSharedBuffer } from './huge-pages.js';

export type CodeArray = Int8Array | Uint8Array;
export type CodeKind = 'i8' | 'u8';

/** What a worker thread needs to view the same codes (the pieces are remade there, with the same `per`). */
export interface CodesHandle {
  kind: CodeKind;
  rows: number;
  width: number;
  buffer: ArrayBufferLike;
  byteOffset: number;
  per: number;
}

/** Rows of `width` bytes one piece holds (at least 1), for a piece limit of `limit` bytes. */
export function rowsPerPiece(width: number, limit = viewLimitBytes()): number {
  return Math.max(1, Math.floor(limit / Math.max(1, width)));
}

export class Codes<T extends CodeArray = CodeArray> {
  /** Piece p holds rows [p·per, min(rows, (p + 1)·per)). */
  readonly pieces: T[];

  constructor(
    readonly kind: CodeKind,
    readonly rows: number,
    /** Codes (bytes) per row. */
    readonly width: number,
    readonly buffer: ArrayBufferLike,
    readonly byteOffset = 0,
    /** Rows per piece (default: as many as a view of viewLimitBytes() holds). */
    readonly per = rowsPerPiece(width),
  ) {
    const bytes = rows * width;
    if (!(Number.isSafeInteger(bytes) && bytes >= 0)) throw new RangeError(`cannot hold ${rows} × ${width} codes`);
    if (byteOffset + bytes > buffer.byteLength)
      throw new RangeError(`${rows} × ${width} codes at byte ${byteOffset} run past a ${buffer.byteLength}-byte buffer`);
    const Type = (kind === 'i8' ? Int8Array : Uint8Array) as unknown as new (b: ArrayBufferLike, o: number, l: number) => T;
    this.pieces = [];
    for (let r0 = 0; r0 < rows; r0 += per) this.pieces.push(new Type(buffer, byteOffset + r0 * width, (Math.min(rows, r0 + per) - r0) * width));
  }

  /** Every code: rows × width. */
  get length(): number {
    return this.rows * this.width;
  }

  /** The piece holding row i (with pieceStart: the hot loops' way to a row without a view per row). */
  piece(i: number): T {
    return this.pieces[Math.floor(i / this.per)];
  }

  /** Where row i's first code is in its piece. */
  pieceStart(i: number): number {
    return (i - Math.floor(i / this.per) * this.per) * this.width;
  }

  /** Code k of row i. */
  get(i: number, k: number): number {
    return this.piece(i)[this.pieceStart(i) + k];
  }

  set(i: number, k: number, v: number): void {
    this.piece(i)[this.pieceStart(i) + k] = v;
  }

  /** Row i's codes (a view). */
  row(i: number): T {
    const at = this.pieceStart(i);
    return this.piece(i).subarray(at, at + this.width) as T;
  }

  /** The pieces as bytes, in order (a section payload's codes, written without a copy). */
  bytePieces(): Uint8Array[] {
    return this.pieces.map((p) => new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
  }

  /** The bytes of rows [r0, r1) copied into `out` from `at` (a run of rows may span pieces). */
  copyRows(r0: number, r1: number, out: Uint8Array, at = 0): void {
    for (let r = r0; r < r1; ) {
      const p = Math.floor(r / this.per);
      const end = Math.min(r1, (p + 1) * this.per);
      const piece = this.pieces[p];
      const from = (r - p * this.per) * this.width;
      out.set(new Uint8Array(piece.buffer, piece.byteOffset + from, (end - r) * this.width), at);
      at += (end - r) * this.width;
      r = end;
    }
  }

  /** Rows [r0, r1) as one view of bytes (a run of rows may span pieces: the memory is one buffer; the caller keeps it within a view's limit). */
  bytesOfRows(r0: number, r1: number): Uint8Array {
    if (!(0 <= r0 && r0 <= r1 && r1 <= this.rows)) throw new RangeError(`rows ${r0}..${r1} of ${this.rows} codes`);
    return new Uint8Array(this.buffer, this.byteOffset + r0 * this.width, (r1 - r0) * this.width);
  }

  /** f over the pieces (as bytes) that hold rows [r0, r1), each cut to those rows: checksums of a block of rows. */
  forEachRun(r0: number, r1: number, f: (bytes: Uint8Array) => void): void {
    for (let r = r0; r < r1; ) {
      const p = Math.floor(r / this.per);
      const end = Math.min(r1, (p + 1) * this.per);
      const piece = this.pieces[p];
      f(new Uint8Array(piece.buffer, piece.byteOffset + (r - p * this.per) * this.width, (end - r) * this.width));
      r = end;
    }
  }

  /** Every code, in order (tests, small files). */
  *[Symbol.iterator](): IterableIterator<number> {
    for (const p of this.pieces) yield* p;
  }

  /** Rows [r0, r1) as codes of their own over the same memory (a part of the rows filled by one device: backend/sharded). */
  rowsView(r0: number, r1: number): Codes<T> {
    if (!(Number.isInteger(r0) && Number.isInteger(r1) && 0 <= r0 && r0 <= r1 && r1 <= this.rows)) throw new RangeError(`rows ${r0}..${r1} of ${this.rows} codes`);
    return new Codes<T>(this.kind, r1 - r0, this.width, this.buffer, this.byteOffset + r0 * this.width);
  }

  handle(): CodesHandle {
    return { kind: this.kind, rows: this.rows, width: this.width, buffer: this.buffer, byteOffset: this.byteOffset, per: this.per };
  }
}

/** The codes a worker was handed (the same pieces as the sender's). */
export function codesOf<T extends CodeArray = CodeArray>(h: CodesHandle): Codes<T> {
  return new Codes<T>(h.kind, h.rows, h.width, h.buffer, h.byteOffset, h.per);
}

/** rows × width zero codes in fresh memory of any size (shared, so worker threads can fill them, unless `shared` is false). */
export function allocCodes<T extends CodeArray>(kind: CodeKind, rows: number, width: number, shared = true, buffer?: SharedArrayBuffer): Codes<T> {
  const bytes = rows * width;
  if (!(Number.isSafeInteger(bytes) && bytes >= 0)) throw new RangeError(`cannot hold ${rows} × ${width} codes`);
  let mem: ArrayBufferLike | undefined = buffer;
  if (mem === undefined)
    try {
      // Shared codes are written first by their encoder (a GPU's download, the workers, an MPI
      // rank's receive): large ones on huge pages, a fault each 2 MiB rather than each 4 KiB.
      mem = shared ? hugeSharedBuffer(Math.max(1, bytes)) : new ArrayBuffer(bytes);
    } catch {
      throw new RangeError(`not enough memory for ${rows} × ${width} codes (${(bytes / 2 ** 30).toFixed(1)} GiB)`);
    }
  return new Codes<T>(kind, rows, width, mem, 0);
}

/** Codes already in one typed array (small data: tests, a library caller), viewed in place. */
export function codesFromArray<T extends CodeArray>(a: T, width: number, rows = width > 0 ? a.length / width : 0): Codes<T> {
  if (!Number.isInteger(rows) || rows * width > a.length) throw new RangeError(`${a.length} codes given for ${rows} × ${width}`);
  return new Codes<T>(a instanceof Int8Array ? 'i8' : 'u8', rows, width, a.buffer, a.byteOffset);
}

/** `a` as codes of rows of `width`: itself, or an array's codes viewed in place. */
export function asCodes<T extends CodeArray>(a: T | Codes<T>, width: number, rows?: number): Codes<T> {
  return a instanceof Codes ? a : codesFromArray(a, width, rows);
}

/**
 * 4-bit codes (int4, pq with 4-bit codes) packed as the file stores them: two a byte, low nibble
 * first, ⌈width/2⌉ bytes a row (an odd width's last high nibble 0), a piece of whole rows at a
 * time, each piece at most the view limit.
 */
export function packNibbles(codes: Codes): Uint8Array[] {
  const { rows: n, width } = codes;
  const rowBytes = Math.ceil(width / 2);
  const per = rowsPerPiece(rowBytes);
  const out: Uint8Array[] = [];
  for (let r0 = 0; r0 < n; r0 += per) {
    const r1 = Math.min(n, r0 + per);
    const body = new Uint8Array((r1 - r0) * rowBytes);
    for (let i = r0; i < r1; i++) {
      const c = codes.piece(i), o = codes.pieceStart(i), b = (i - r0) * rowBytes;
      for (let k = 0; k < width; k += 2) body[b + (k >> 1)] = (c[o + k] & 0xf) | (k + 1 < width ? (c[o + k + 1] & 0xf) << 4 : 0);
    }
    out.push(body);
  }
  return out;
}

/**
 * The inverse of packNibbles: rows × width codes into fresh codes of `kind` ('i8': sign-extended,
 * −8..7; 'u8': 0..15), the packed rows read a piece at a time through `view(offset, length)` (from
 * offset 0). Returns them and the first row whose unused high nibble (odd width) is not 0 (−1: none).
 */
export function unpackNibbles<T extends CodeArray>(
  view: (offset: number, length: number) => Uint8Array, kind: CodeKind, rows: number, width: number,
): { codes: Codes<T>; spareRow: number } {
  const codes = allocCodes<T>(kind, rows, width);
  const rowBytes = Math.ceil(width / 2);
  const per = rowsPerPiece(rowBytes);
  const signed = kind === 'i8';
  let spareRow = -1;
  for (let r0 = 0; r0 < rows; r0 += per) {
    const r1 = Math.min(rows, r0 + per);
    const body = view(r0 * rowBytes, (r1 - r0) * rowBytes);
    for (let i = r0; i < r1; i++) {
      const c = codes.piece(i), o = codes.pieceStart(i), b0 = (i - r0) * rowBytes;
      for (let k = 0; k < width; k++) {
        const b = body[b0 + (k >> 1)];
        const nib = k & 1 ? b >> 4 : b & 0xf;
        c[o + k] = signed && nib & 0x8 ? nib - 16 : nib; // sign-extend 4 bits
      }
      if (width & 1 && spareRow < 0 && body[b0 + rowBytes - 1] >> 4) spareRow = i;
    }
  }
  return { codes, spareRow };
}
