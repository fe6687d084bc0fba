// Raw little-endian f32 or f16 values with no header: the user supplies d (--dim).
import { allocStore } from '../../vectors/dataset.js';
import { ELEMENT_BYTES, keptAs, readElements } from './elements.js';
import { badInput, type ByteSource } from './source.js';
import type { RawDataset } from './types.js';

export async function readRaw(src: ByteSource, dim: number | undefined, rawDtype: 'f32' | 'f16' = 'f32'): Promise<RawDataset> {
  if (dim === undefined) throw badInput(src, 'raw input needs its dimension: pass --dim D (and --raw-dtype f16 for half floats)');
  if (!Number.isSafeInteger(dim) || dim <= 0) throw badInput(src, `--dim must be a positive whole number (got ${dim})`);
  const eb = ELEMENT_BYTES[rawDtype];
  const row = dim * eb;
  if (src.size % row !== 0)
    throw badInput(src, `raw ${rawDtype} input of ${src.size} bytes is not a whole number of ${dim}-dim vectors (${row} bytes each): wrong --dim or --raw-dtype, or a truncated file`);
  const n = src.size / row;
  const dtype = keptAs(rawDtype);
  const store = allocStore(n, dim, dtype);
  const bad = await readElements(src, 0, n * dim, rawDtype, store, 0);
  return { n, d: dim, ...store, format: `raw ${rawDtype}`, inputDtype: rawDtype, firstBadRow: bad < 0 ? -1 : Math.floor(bad / dim) };
}
