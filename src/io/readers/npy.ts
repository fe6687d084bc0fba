// NumPy .npy (format versions 1, 2 and 3): a magic, a Python-dict header, then the raw array.
// C-order data is read straight into the Dataset; Fortran-order data is transposed block by block.
import { allocVectors } from '../dataset.js';
import { CHUNK_BYTES, ELEMENT_BYTES, keptAs, readElements, type ElementType } from './elements.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

export const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const DTYPES: Record<string, ElementType> = { f4: 'f32', f2: 'f16', f8: 'f64', u1: 'u8' };
const SUPPORTED = 'float32 (<f4), float16 (<f2), float64 (<f8), uint8 (|u1)';

export interface NpyHeader {
  elem: ElementType;
  fortran: boolean;
  shape: number[];
  dataOffset: number;
}

export function parseNpyHeader(src: ByteSource): NpyHeader {
  if (src.size < 10) throw badInput(src, `truncated .npy: ${src.size} bytes, not even a header`);
  const pre = src.read(0, 12 <= src.size ? 12 : 10);
  if (!NPY_MAGIC.every((b, i) => pre[i] === b)) throw badInput(src, 'not an .npy file (no \\x93NUMPY magic at the start)');
  const major = pre[6];
  if (major < 1 || major > 3) throw badInput(src, `.npy format version ${major}.${pre[7]} is not supported (1, 2 and 3 are)`);
  const lenBytes = major === 1 ? 2 : 4;
  const dv = new DataView(pre.buffer, pre.byteOffset, pre.length);
  if (8 + lenBytes > src.size) throw badInput(src, 'truncated .npy header');
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = 8 + lenBytes;
  if (start + headerLen > src.size)
    throw badInput(src, `truncated .npy header: it says ${headerLen} bytes, the file has ${src.size - start} after the magic`);
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(src.read(start, headerLen));

  const descr = /['"]descr['"]\s*:\s*(['"])(.*?)\1/.exec(text)?.[2];
  if (descr === undefined) {
    const structured = /['"]descr['"]\s*:\s*\[/.test(text);
    throw badInput(src, structured
      ? `.npy holds a structured (record) dtype; supported: ${SUPPORTED}; save a plain 2-D array`
      : `.npy header has no 'descr' (dtype): ${quoteHeader(text)}`);
  }
  const fortranText = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(text)?.[1];
  const shapeText = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(text)?.[1];
  if (fortranText === undefined || shapeText === undefined)
    throw badInput(src, `.npy header is malformed (missing fortran_order or shape): ${quoteHeader(text)}`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => Number(s.replace(/L$/, '')));
  if (shape.some((x) => !Number.isSafeInteger(x) || x < 0)) throw badInput(src, `.npy header has a bad shape (${shapeText})`);

  const order = descr[0];
  const code = '<>=|'.includes(order) ? descr.slice(1) : descr;
  const elem = DTYPES[code];
  if (order === '>' && elem && elem !== 'u8')
    throw badInput(src, `dtype '${descr}' is big-endian; convert with arr.astype('<${code}') (supported: ${SUPPORTED})`);
  if (!elem) throw badInput(src, `unsupported dtype '${descr}' (${numpyName(code)}); supported: ${SUPPORTED}; convert with arr.astype('float32')`);
  return { elem, fortran: fortranText === 'True', shape, dataOffset: start + headerLen };
}

/** The header as one printable line (it may hold newlines or binary garbage), at most 200 chars. */
function quoteHeader(text: string): string {
  const flat = text.trim().replace(/[\x00-\x1f\x7f-\x9f]/g, '?');
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

function numpyName(code: string): string {
  const kinds: Record<string, string> = { f: 'float', i: 'int', u: 'uint', c: 'complex', b: 'bool', U: 'unicode', S: 'bytes', O: 'object', M: 'datetime', m: 'timedelta', V: 'void' };
  const kind = kinds[code[0]];
  const bytes = Number(code.slice(1));
  if (!kind) return 'unknown';
  return Number.isFinite(bytes) && kind !== 'unicode' && kind !== 'bytes' ? `${kind}${bytes * 8}` : kind;
}

/** Check that shape is a non-empty 2-D (n, d); returns [n, d]. */
export function requireMatrix(src: ByteSource, shape: number[], what: string): [number, number] {
  const dims = shape.join(' × ');
  if (shape.length === 1)
    throw badInput(src, `${what} is a 1-D array of ${shape[0]} values; vlc needs a 2-D array of n vectors × d dims (reshape to (-1, d))`);
  if (shape.length !== 2)
    throw badInput(src, `${what} is a ${shape.length}-D array (${dims || 'a scalar'}); vlc needs a 2-D array of n vectors × d dims (reshape to (-1, d))`);
  const [n, d] = shape;
  if (n === 0) throw badInput(src, `${what} has 0 rows (shape ${dims}); nothing to read`);
  if (d === 0) throw badInput(src, `${what} has vectors of dimension 0 (shape ${dims})`);
  return [n, d];
}

export function readNpy(src: ByteSource): RawDataset {
  const h = parseNpyHeader(src);
  const [n, d] = requireMatrix(src, h.shape, 'the .npy array');
  const eb = ELEMENT_BYTES[h.elem];
  const expected = n * d * eb;
  const actual = src.size - h.dataOffset;
  if (actual < expected)
    throw badInput(src, `truncated .npy: shape ${n} × ${d} ${h.elem} needs ${expected} data bytes, the file has ${actual}`);
  if (actual > expected)
    throw badInput(src, `.npy header says shape ${n} × ${d} ${h.elem} (${expected} data bytes) but the file has ${actual}: the header does not match the data`);
  const dtype = keptAs(h.elem);
  const data = allocVectors(n, d, dtype);
  const format = `npy ${h.elem}${h.fortran ? ' fortran' : ''}`;
  if (!h.fortran || d === 1 || n === 1) {
    const bad = readElements(src, h.dataOffset, n * d, h.elem, data, 0);
    return { n, d, dtype, data, format, firstBadRow: bad < 0 ? -1 : Math.floor(bad / d) };
  }
  const firstBadRow = readFortran(src, h.dataOffset, n, d, h.elem, data);
  return { n, d, dtype, data, format, firstBadRow };
}

/**
 * Fortran order stores column j (all n values of dimension j) contiguously. Read a block of
 * `cols` columns × `rows` rows at a time (one contiguous read per column) and scatter it into
 * row-major order, so each output row segment written is `cols` elements long, not one.
 */
const TILE = 256;

/** Returns the first row holding NaN/Inf, or -1 (found while the columns are read). */
function readFortran(src: ByteSource, offset: number, n: number, d: number, elem: ElementType, dst: Float32Array | Uint16Array): number {
  const eb = ELEMENT_BYTES[elem];
  const cols = Math.min(d, 64);
  const rows = Math.max(1, Math.min(n, Math.floor(CHUNK_BYTES / (cols * eb))));
  const block = dst instanceof Float32Array ? new Float32Array(cols * rows) : new Uint16Array(cols * rows);
  let firstBad = -1;
  for (let r0 = 0; r0 < n; r0 += rows) {
    const nr = Math.min(rows, n - r0);
    let badInBlock = Infinity; // smallest bad row of this row block, over all its columns
    for (let c0 = 0; c0 < d; c0 += cols) {
      const nc = Math.min(cols, d - c0);
      for (let c = 0; c < nc; c++) {
        const bad = readElements(src, offset + ((c0 + c) * n + r0) * eb, nr, elem, block, c * nr);
        if (bad >= 0) badInBlock = Math.min(badInBlock, r0 + bad - c * nr);
      }
      // Transpose in tiles of TILE rows so both the block reads and the row writes stay in cache.
      for (let i0 = 0; i0 < nr; i0 += TILE) {
        const i1 = Math.min(nr, i0 + TILE);
        for (let c = 0; c < nc; c++) {
          const from = c * nr;
          for (let i = i0; i < i1; i++) dst[(r0 + i) * d + c0 + c] = block[from + i];
        }
      }
    }
    if (firstBad < 0 && badInBlock < Infinity) firstBad = badInBlock;
  }
  return firstBad;
}
