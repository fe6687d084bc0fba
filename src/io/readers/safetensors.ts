// safetensors: u64 header length, a JSON header {name: {dtype, shape, data_offsets}}, then the
// tensors' bytes. The chosen 2-D tensor is read straight into the Dataset like an .npy.
import { allocVectors } from '../dataset.js';
import { ELEMENT_BYTES, keptAs, readElements, type ElementType } from './elements.js';
import { requireMatrix } from './npy.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

const DTYPES: Record<string, ElementType> = { F32: 'f32', F16: 'f16', F64: 'f64', BF16: 'bf16', U8: 'u8' };
const SUPPORTED = 'F32, F16, F64, BF16, U8';

interface TensorInfo {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** True when the bytes look like a safetensors header: a sane length, then '{'. */
export function looksLikeSafetensors(head: Uint8Array, size: number): boolean {
  // '{"' (or '{}' for an empty header) right after the length.
  if (head.length < 10 || head[8] !== 0x7b || (head[9] !== 0x22 && head[9] !== 0x7d)) return false;
  const len = Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true));
  return len >= 2 && 8 + len <= size;
}

export function readSafetensors(src: ByteSource, tensorName: string | undefined): RawDataset {
  if (src.size < 8) throw badInput(src, 'truncated safetensors: no header length');
  const headerLen = Number(new DataView(src.read(0, 8).buffer).getBigUint64(0, true));
  if (8 + headerLen > src.size)
    throw badInput(src, `truncated safetensors: header says ${headerLen} bytes, the file has ${src.size - 8} after the length`);
  let header: Record<string, TensorInfo>;
  try {
    header = JSON.parse(new TextDecoder().decode(src.read(8, headerLen)));
  } catch (e) {
    throw badInput(src, `safetensors header is not valid JSON (${(e as Error).message})`);
  }
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const describe = (k: string) => `${k} (${header[k].dtype} [${header[k].shape.join(', ')}])`;
  let name = tensorName;
  if (name === undefined) {
    const matrices = names.filter((k) => header[k].shape?.length === 2);
    if (matrices.length !== 1) {
      const why = matrices.length === 0 ? 'has no 2-D tensor' : 'has several 2-D tensors';
      throw badInput(src, `${why}; pick one with --tensor NAME (tensors: ${names.map(describe).join(', ') || 'none'})`);
    }
    name = matrices[0];
  } else if (!names.includes(name)) {
    throw badInput(src, `no tensor named '${name}' (tensors: ${names.map(describe).join(', ') || 'none'})`);
  }
  const t = header[name];
  const elem = DTYPES[t.dtype];
  if (!elem) throw badInput(src, `tensor '${name}' has unsupported dtype ${t.dtype}; supported: ${SUPPORTED}`);
  const [n, d] = requireMatrix(src, t.shape, `tensor '${name}'`);
  const [begin, end] = t.data_offsets;
  const expected = n * d * ELEMENT_BYTES[elem];
  if (end - begin !== expected)
    throw badInput(src, `tensor '${name}' shape ${n} × ${d} ${t.dtype} needs ${expected} bytes but its data_offsets span ${end - begin}: the header does not match the data`);
  const start = 8 + headerLen + begin;
  if (start + expected > src.size)
    throw badInput(src, `truncated safetensors: tensor '${name}' ends at byte ${start + expected}, the file has ${src.size}`);
  const dtype = keptAs(elem);
  const data = allocVectors(n, d, dtype);
  const bad = readElements(src, start, n * d, elem, data, 0);
  return { n, d, dtype, data, format: `safetensors ${t.dtype} '${name}'`, firstBadRow: bad < 0 ? -1 : Math.floor(bad / d) };
}
