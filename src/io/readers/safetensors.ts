// safetensors: u64 header length, a JSON header {name: {dtype, shape, data_offsets}}, then the
// tensors' bytes. The header is parsed by a strict JSON grammar (literal.ts: exact integers,
// duplicate keys refused) and checked entry by entry the way the reference implementation checks
// it — every tensor, not only the one read: shapes, dtypes, and offsets that tile the data area
// exactly, without overlaps, gaps or bytes past the end. The chosen 2-D tensor is then read
// straight into the Dataset like an .npy.
import { allocStore } from '../../vectors/dataset.js';
import { keptAs, readElements, type ElementType } from './elements.js';
import { kindName, parseJson, type Literal, type LiteralError } from './literal.js';
import { requireMatrix } from './npy.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

const READABLE: Record<string, ElementType> = { F32: 'f32', F16: 'f16', F64: 'f64', BF16: 'bf16', U8: 'u8', I8: 'i8' };
const SUPPORTED = 'F32, F16, F64, BF16, U8, I8';

/** Every dtype the format defines, with its size in bits (others are not safetensors files). */
const DTYPE_BITS: Record<string, number> = {
  BOOL: 8, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8, I16: 16, U16: 16, F16: 16, BF16: 16,
  I32: 32, U32: 32, F32: 32, F64: 64, I64: 64, U64: 64, C64: 64, F4: 4, F6_E2M3: 6, F6_E3M2: 6,
};

/** The reference implementation refuses longer headers. */
const MAX_HEADER_BYTES = 100_000_000;

interface Tensor {
  name: string;
  dtype: string;
  shape: number[];
  begin: bigint;
  end: bigint;
}

/** True when the bytes look like a safetensors header: a sane length, then '{'. */
export function looksLikeSafetensors(head: Uint8Array, size: number): boolean {
  // '{"' (or '{}' for an empty header) right after the length.
  if (head.length < 10 || head[8] !== 0x7b || (head[9] !== 0x22 && head[9] !== 0x7d)) return false;
  const len = Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true));
  return len >= 2 && 8 + len <= size;
}

/** Bytes of length field and JSON header, from the input's first 8 bytes. */
export function safetensorsHeaderEnd(name: string, first8: Uint8Array): number {
  if (first8.length < 8) throw badInput(name, 'truncated safetensors: no header length');
  const len = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  if (len > BigInt(MAX_HEADER_BYTES)) throw badInput(name, `safetensors header claims ${len} bytes; the format allows at most ${MAX_HEADER_BYTES}`);
  if (len < 2n) throw badInput(name, `safetensors header claims ${len} bytes; even an empty header '{}' needs 2`);
  return 8 + Number(len);
}

/**
 * Parse and validate the whole header (the input's first safetensorsHeaderEnd() bytes) against a
 * data area of `dataBytes` (undefined while streaming: then the area is taken to be exactly what
 * the tensors tile, and the caller reads that much). Returns the tensors and the area's size.
 */
export function parseSafetensorsHeader(name: string, bytes: Uint8Array, dataBytes: bigint | undefined): { tensors: Tensor[]; dataBytes: bigint } {
  const end = safetensorsHeaderEnd(name, bytes);
  if (bytes.length < end) throw badInput(name, `truncated safetensors: header says ${end - 8} bytes, the input has ${bytes.length - 8} after the length`);
  if (bytes[8] !== 0x7b) throw badInput(name, `safetensors header does not start with '{'`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, end));
  } catch {
    throw badInput(name, 'safetensors header is not valid UTF-8');
  }
  let header: Literal;
  try {
    header = parseJson(text);
  } catch (e) {
    throw badInput(name, `safetensors header is not valid JSON (${(e as LiteralError).message})`);
  }
  if (header.kind !== 'dict') throw badInput(name, `safetensors header is ${kindName(header)}, not a JSON object of tensors`);
  const tensors: Tensor[] = [];
  for (const [key, entry] of header.entries) {
    if (key === '__metadata__') {
      const ok = entry.kind === 'dict' && [...entry.entries.values()].every((v) => v.kind === 'str');
      if (!ok) throw badInput(name, `safetensors '__metadata__' must be an object of strings`);
      continue;
    }
    tensors.push(tensorOf(name, key, entry));
  }
  // The tensors must tile the data area: sorted by start, each begins where the previous ended.
  const sorted = [...tensors].sort((a, b) => (a.begin < b.begin ? -1 : a.begin > b.begin ? 1 : a.end < b.end ? -1 : 1));
  let at = 0n;
  let prev: Tensor | undefined;
  for (const t of sorted) {
    if (t.begin < at)
      throw badInput(name, `tensor ${q(t.name)} (bytes ${t.begin}..${t.end}) overlaps tensor ${q(prev!.name)} (bytes ${prev!.begin}..${prev!.end})`);
    if (t.begin > at) throw badInput(name, `safetensors data has a gap of ${t.begin - at} bytes before tensor ${q(t.name)} (the format allows none)`);
    at = t.end;
    prev = t;
  }
  if (dataBytes !== undefined) {
    if (at > dataBytes)
      throw badInput(name, `tensor ${q(prev!.name)} ends at data byte ${at}, past the ${dataBytes} bytes of data in the file (truncated?)`);
    if (at < dataBytes) throw badInput(name, `safetensors file has ${dataBytes - at} bytes after its last tensor (the format allows none)`);
  }
  return { tensors, dataBytes: at };
}

/** A tensor name as messages show it: JSON-quoted, so odd characters cannot break the line. */
function q(s: string): string {
  return `'${JSON.stringify(s).slice(1, -1).replace(/'/g, "\\'")}'`;
}

function tensorOf(file: string, name: string, v: Literal): Tensor {
  const bad = (what: string) => badInput(file, `tensor ${q(name)} ${what}`);
  if (v.kind !== 'dict') throw bad(`is ${kindName(v)}, not an object with dtype, shape and data_offsets`);
  const dtype = v.entries.get('dtype');
  const shape = v.entries.get('shape');
  const offsets = v.entries.get('data_offsets');
  if (!dtype) throw bad(`has no 'dtype'`);
  if (!shape) throw bad(`has no 'shape'`);
  if (!offsets) throw bad(`has no 'data_offsets'`);
  if (dtype.kind !== 'str') throw bad(`has a 'dtype' that is ${kindName(dtype)}, not a string`);
  const bits = DTYPE_BITS[dtype.value];
  if (bits === undefined) throw bad(`has unknown dtype ${JSON.stringify(dtype.value)} (not a safetensors dtype)`);
  if (shape.kind !== 'list' || !shape.items.every((x) => x.kind === 'int' && x.value >= 0n))
    throw bad(`has a 'shape' that is not a list of non-negative integers`);
  const dims = shape.items.map((x) => (x as { value: bigint }).value);
  if (offsets.kind !== 'list' || offsets.items.length !== 2 || !offsets.items.every((x) => x.kind === 'int'))
    throw bad(`has 'data_offsets' that are not two integers [begin, end]`);
  const [begin, end] = offsets.items.map((x) => (x as { value: bigint }).value);
  if (begin < 0n || end < begin) throw bad(`has data_offsets [${begin}, ${end}]: they must satisfy 0 <= begin <= end`);
  const elements = dims.reduce((p, x) => p * x, 1n);
  const needBits = elements * BigInt(bits);
  if (needBits % 8n !== 0n || needBits / 8n !== end - begin)
    throw bad(`shape [${dims.join(', ')}] ${dtype.value} needs ${needBits / 8n}${needBits % 8n ? '+' : ''} bytes but its data_offsets span ${end - begin}`);
  if (dims.some((x) => x > BigInt(Number.MAX_SAFE_INTEGER))) throw bad(`has an impossibly large dimension`);
  return { name, dtype: dtype.value, shape: dims.map(Number), begin, end };
}

export async function readSafetensors(src: ByteSource, tensorName: string | undefined): Promise<RawDataset> {
  const headerEnd = safetensorsHeaderEnd(src.name, src.read(0, Math.min(8, src.size)));
  if (headerEnd > src.size)
    throw badInput(src, `truncated safetensors: header says ${headerEnd - 8} bytes, the file has ${src.size - 8} after the length`);
  const { tensors } = parseSafetensorsHeader(src.name, src.read(0, headerEnd), BigInt(src.size - headerEnd));
  const describe = (t: Tensor) => `${q(t.name).slice(1, -1)} (${t.dtype} [${t.shape.join(', ')}])`;
  const listing = tensors.map(describe).join(', ') || 'none';
  let t: Tensor | undefined;
  if (tensorName === undefined) {
    const matrices = tensors.filter((x) => x.shape.length === 2);
    if (matrices.length !== 1) {
      const why = matrices.length === 0 ? 'has no 2-D tensor' : 'has several 2-D tensors';
      throw badInput(src, `${why}; pick one with --tensor NAME (tensors: ${listing})`);
    }
    t = matrices[0];
  } else {
    t = tensors.find((x) => x.name === tensorName);
    if (!t) throw badInput(src, `no tensor named ${q(tensorName)} (tensors: ${listing})`);
  }
  const elem = READABLE[t.dtype];
  if (!elem) throw badInput(src, `tensor ${q(t.name)} has unsupported dtype ${t.dtype}; supported: ${SUPPORTED}`);
  const [n, d] = requireMatrix(src, t.shape, `tensor ${q(t.name)}`);
  const dtype = keptAs(elem);
  const store = allocStore(n, d, dtype);
  const bad = await readElements(src, headerEnd + Number(t.begin), n * d, elem, store, 0);
  return { n, d, ...store, format: `safetensors ${t.dtype} ${q(t.name)}`, inputDtype: elem, firstBadRow: bad < 0 ? -1 : Math.floor(bad / d) };
}
