// NumPy .npy (format versions 1, 2 and 3): a magic, a Python-dict header, then the raw array.
// The header is parsed as the Python literal it is (literal.ts) and checked the way numpy checks it.
// Big-endian data is byte-swapped as it is read.
// C-order data is read straight into the Dataset; Fortran-order data is transposed block by block.
import { allocStore, elements, pieceRows, type VectorStore } from '../../vectors/dataset.js';
import { CHUNK_BYTES, ELEMENT_BYTES, keptAs, readElements, type ElementType } from './elements.js';
import { kindName, parsePythonLiteral, type Literal, type LiteralError } from './literal.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

export const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

const SUPPORTED = 'float32 (<f4), float16 (<f2), float64 (<f8), either byte order, uint8 (|u1) and int8 (|i1)';

/** numpy refuses headers longer than 10,000 bytes by default; far past that is not a header. */
const MAX_HEADER_BYTES = 1 << 20;

export interface NpyHeader {
  elem: ElementType;
  bigEndian: boolean;
  fortran: boolean;
  shape: number[];
  dataOffset: number;
  /** Bytes of array data the header describes (exact, however large the shape). */
  dataBytes: bigint;
}

/**
 * Bytes the magic, version, length and header dict occupy, from the first 12 bytes of the input
 * (fewer when it is shorter): where the data starts.
 */
export function npyHeaderEnd(name: string, pre: Uint8Array): number {
  if (pre.length < 10) throw badInput(name, `truncated .npy: ${pre.length} bytes, not even a header`);
  if (!NPY_MAGIC.every((b, i) => pre[i] === b)) throw badInput(name, 'not an .npy file (no \\x93NUMPY magic at the start)');
  const [major, minor] = [pre[6], pre[7]];
  if (major < 1 || major > 3 || minor !== 0) throw badInput(name, `.npy format version ${major}.${minor} is not supported (1.0, 2.0 and 3.0 are)`);
  const lenBytes = major === 1 ? 2 : 4;
  if (pre.length < 8 + lenBytes) throw badInput(name, 'truncated .npy header');
  const dv = new DataView(pre.buffer, pre.byteOffset, pre.length);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  if (headerLen > MAX_HEADER_BYTES)
    throw badInput(name, `.npy header claims ${headerLen} bytes, far more than any array header needs (numpy itself refuses over 10,000)`);
  return 8 + lenBytes + headerLen;
}

/** Parse and check the header dict held in `bytes` (the input's first npyHeaderEnd() bytes). */
export function parseNpyHeader(name: string, bytes: Uint8Array): NpyHeader {
  const end = npyHeaderEnd(name, bytes.subarray(0, 12));
  const start = bytes[6] === 1 ? 10 : 12;
  if (bytes.length < end) throw badInput(name, `truncated .npy header: it says ${end - start} bytes, the input has ${bytes.length - start} after the magic`);
  let text: string;
  try {
    text = new TextDecoder(bytes[6] === 3 ? 'utf-8' : 'latin1', { fatal: true }).decode(bytes.subarray(start, end));
  } catch {
    throw badInput(name, '.npy header (version 3.0) is not valid UTF-8');
  }
  let dict: Literal;
  try {
    dict = parsePythonLiteral(text);
  } catch (e) {
    throw badInput(name, `.npy header is not a valid Python literal (${(e as LiteralError).message}): ${quoteHeader(text)}`);
  }
  // numpy's own checks (numpy.lib.format._read_array_header), one line each.
  if (dict.kind !== 'dict') throw badInput(name, `.npy header is ${kindName(dict)}, not a dict: ${quoteHeader(text)}`);
  const keys = [...dict.entries.keys()];
  const unknown = keys.filter((k) => !['descr', 'fortran_order', 'shape'].includes(k));
  const missing = ['descr', 'fortran_order', 'shape'].filter((k) => !dict.entries.has(k));
  if (unknown.length || missing.length)
    throw badInput(name, `.npy header must hold exactly 'descr', 'fortran_order' and 'shape'${missing.length ? `; missing ${missing.map((k) => `'${k}'`).join(', ')}` : ''}${unknown.length ? `; unknown ${unknown.map((k) => JSON.stringify(k)).join(', ')}` : ''}`);
  const fortran = dict.entries.get('fortran_order')!;
  if (fortran.kind !== 'bool') throw badInput(name, `.npy header's 'fortran_order' is ${kindName(fortran)}, not True or False`);
  const shape = shapeOf(name, dict.entries.get('shape')!);
  const { elem, bigEndian } = dtypeOf(name, dict.entries.get('descr')!);
  const dataBytes = shape.reduce((p, x) => p * BigInt(x), 1n) * BigInt(ELEMENT_BYTES[elem]);
  return { elem, bigEndian, fortran: fortran.value, shape, dataOffset: end, dataBytes };
}

function shapeOf(name: string, v: Literal): number[] {
  if (v.kind !== 'tuple') throw badInput(name, `.npy header's 'shape' is ${kindName(v)}, not a tuple of integers`);
  return v.items.map((x, i) => {
    if (x.kind !== 'int') throw badInput(name, `.npy header's 'shape' holds ${kindName(x)} at position ${i}, not an integer`);
    if (x.value < 0n) throw badInput(name, `.npy header's 'shape' has a negative dimension (${x.value})`);
    if (x.value > BigInt(Number.MAX_SAFE_INTEGER)) throw badInput(name, `.npy header's 'shape' has an impossibly large dimension (${x.value})`);
    return Number(x.value);
  });
}

const CODES: Record<string, ElementType> = { f4: 'f32', f: 'f32', float32: 'f32', f2: 'f16', e: 'f16', float16: 'f16', f8: 'f64', d: 'f64', float64: 'f64', u1: 'u8', B: 'u8', uint8: 'u8', i1: 'i8', b: 'i8', int8: 'i8' };

function dtypeOf(name: string, v: Literal): { elem: ElementType; bigEndian: boolean } {
  if (v.kind === 'list') throw badInput(name, `.npy holds a structured (record) dtype; supported: ${SUPPORTED}; save a plain 2-D array`);
  if (v.kind === 'tuple') throw badInput(name, `.npy holds a sub-array dtype; supported: ${SUPPORTED}; save a plain 2-D array`);
  if (v.kind !== 'str') throw badInput(name, `.npy header's 'descr' is ${kindName(v)}, not a dtype string`);
  const descr = v.value;
  const m = /^([<>=|]?)([A-Za-z]+\d*)$/.exec(descr);
  const shown = JSON.stringify(descr).slice(1, -1);
  if (!m) throw badInput(name, `.npy header's 'descr' '${shown}' is not a numpy dtype`);
  const [, order, code] = m;
  const elem = CODES[code];
  if (!elem)
    throw badInput(name, `unsupported dtype '${shown}' (${numpyName(code)}); supported: ${SUPPORTED}; convert with arr.astype('float32')`);
  return { elem, bigEndian: order === '>' && elem !== 'u8' && elem !== 'i8' };
}

/** The header as one printable line (it may hold newlines or binary garbage), at most 200 chars. */
function quoteHeader(text: string): string {
  const flat = text.trim().replace(/[\x00-\x1f\x7f-\x9f]/g, '?');
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

function numpyName(code: string): string {
  if (!/^[a-zA-Z]\d*$/.test(code)) return 'not a numpy type code';
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

/** The header of an .npy held by a ByteSource (a file, or an .npz member). */
export function npyHeaderOf(src: ByteSource): NpyHeader {
  const end = npyHeaderEnd(src.name, src.read(0, Math.min(12, src.size)));
  return parseNpyHeader(src.name, src.read(0, Math.min(end, src.size)));
}

export async function readNpy(src: ByteSource): Promise<RawDataset> {
  const h = npyHeaderOf(src);
  const [n, d] = requireMatrix(src, h.shape, 'the .npy array');
  const expected = h.dataBytes;
  const actual = BigInt(src.size - h.dataOffset);
  if (actual < expected)
    throw badInput(src, `truncated .npy: shape ${n} × ${d} ${h.elem} needs ${expected} data bytes, the file has ${actual}`);
  if (actual > expected)
    throw badInput(src, `.npy header says shape ${n} × ${d} ${h.elem} (${expected} data bytes) but the file has ${actual}: the header does not match the data`);
  const dtype = keptAs(h.elem);
  const store = allocStore(n, d, dtype);
  const format = `npy ${h.elem}${h.bigEndian ? ' big-endian' : ''}${h.fortran ? ' fortran' : ''}`;
  if (!h.fortran || d === 1 || n === 1) {
    const bad = await readElements(src, h.dataOffset, n * d, h.elem, store, 0, h.bigEndian);
    return { n, d, ...store, format, inputDtype: h.elem, firstBadRow: bad < 0 ? -1 : Math.floor(bad / d) };
  }
  const firstBadRow = await readFortran(src, h, n, d, store);
  return { n, d, ...store, format, inputDtype: h.elem, firstBadRow };
}

/**
 * Fortran order stores column j (all n values of dimension j) contiguously. Read a block of
 * `cols` columns × `rows` rows at a time (one contiguous read per column) and scatter it into
 * row-major order, so each output row segment written is `cols` elements long, not one.
 */
const TILE = 256;

/** Returns the first row holding NaN/Inf, or -1 (found while the columns are read). */
async function readFortran(src: ByteSource, h: NpyHeader, n: number, d: number, store: VectorStore): Promise<number> {
  const { dataOffset: offset, elem } = h;
  const eb = ELEMENT_BYTES[elem];
  const cols = Math.min(d, 64);
  // Each row block is written through one view of the store: no more rows than a view holds.
  const rows = Math.max(1, Math.min(n, Math.floor(CHUNK_BYTES / (cols * eb)), pieceRows(d, store.dtype)));
  const blockStore: VectorStore = { dtype: store.dtype, buffer: new SharedArrayBuffer(cols * rows * (store.dtype === 'f32' ? 4 : 2)), byteOffset: 0 };
  const block = elements(blockStore, 0, cols * rows);
  let firstBad = -1;
  for (let r0 = 0; r0 < n; r0 += rows) {
    const nr = Math.min(rows, n - r0);
    const dst = elements(store, r0 * d, nr * d);
    let badInBlock = Infinity; // smallest bad row of this row block, over all its columns
    for (let c0 = 0; c0 < d; c0 += cols) {
      const nc = Math.min(cols, d - c0);
      for (let c = 0; c < nc; c++) {
        const bad = await readElements(src, offset + ((c0 + c) * n + r0) * eb, nr, elem, blockStore, c * nr, h.bigEndian);
        if (bad >= 0) badInBlock = Math.min(badInBlock, r0 + bad - c * nr);
      }
      // Transpose in tiles of TILE rows so both the block reads and the row writes stay in cache.
      for (let i0 = 0; i0 < nr; i0 += TILE) {
        const i1 = Math.min(nr, i0 + TILE);
        for (let c = 0; c < nc; c++) {
          const from = c * nr;
          for (let i = i0; i < i1; i++) dst[i * d + c0 + c] = block[from + i];
        }
      }
    }
    if (firstBad < 0 && badInBlock < Infinity) firstBad = badInBlock;
  }
  return firstBad;
}
