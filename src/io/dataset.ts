// The in-memory form of an embedding file, shared by every reader, backend and command.

export type VectorDtype = 'f32' | 'f16';

/**
 * n vectors of d dimensions, row-major. f16 inputs stay f16 (raw IEEE half bits in a Uint16Array)
 * so the GPU can keep them half-size; every other input dtype (f64, u8, bvecs...) is converted to
 * f32 while reading. `data` lives in a SharedArrayBuffer so CPU worker threads read it without a copy.
 */
export interface Dataset {
  n: number;
  d: number;
  dtype: VectorDtype;
  data: Float32Array | Uint16Array;
  /** What the reader saw, for logs and `info` (never written into .vlc files). */
  format: string;
  /** Rows skipped by --drop-invalid (NaN/Inf), 0 otherwise. */
  dropped: number;
}

/** Allocate n×d elements of the given dtype in shared memory. */
export function allocVectors(n: number, d: number, dtype: VectorDtype): Float32Array | Uint16Array {
  const count = n * d;
  if (dtype === 'f32') return new Float32Array(new SharedArrayBuffer(count * 4));
  return new Uint16Array(new SharedArrayBuffer(count * 2));
}

const f16Table = (() => {
  // Exact decode of every half value: 65536 entries, 256 KiB, built once.
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 0x1f;
    const f = h & 0x3ff;
    if (e === 0) t[h] = s * f * 2 ** -24;
    else if (e === 31) t[h] = f ? NaN : s * Infinity;
    else t[h] = s * (1 + f / 1024) * 2 ** (e - 15);
  }
  return t;
})();

/** IEEE half bits -> float (exact). */
export function f16ToF32(h: number): number {
  return f16Table[h & 0xffff];
}

const bitsView = new Uint32Array(1);
const floatView = new Float32Array(bitsView.buffer);

/** float -> IEEE half bits, round to nearest even (as numpy's astype(float16) and CUDA's __float2half_rn). */
export function f32ToF16(v: number): number {
  floatView[0] = v;
  return halfFromFloatBits(bitsView[0]);
}

/** The same conversion from the float's 32 bits (bulk writers read them through one Uint32Array view). */
export function halfFromFloatBits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | h;
}

/** Row i as a fresh Float32Array (decoding f16). */
export function rowF32(ds: Dataset, i: number): Float32Array {
  const out = new Float32Array(ds.d);
  const base = i * ds.d;
  if (ds.dtype === 'f32') out.set((ds.data as Float32Array).subarray(base, base + ds.d));
  else for (let k = 0; k < ds.d; k++) out[k] = f16Table[(ds.data as Uint16Array)[base + k]];
  return out;
}

/** The whole dataset as f32 (a view when already f32, else a decoded copy). */
export function toF32(ds: Dataset): Float32Array {
  if (ds.dtype === 'f32') return ds.data as Float32Array;
  const src = ds.data as Uint16Array;
  const out = new Float32Array(new SharedArrayBuffer(src.length * 4));
  for (let i = 0; i < src.length; i++) out[i] = f16Table[src[i]];
  return out;
}

/**
 * The listed rows (in the order given) as a new dataset in shared memory, in the same dtype: an
 * engine's subset (Engine.subset) is opened on it.
 */
export function selectRows(ds: Dataset, rows: Int32Array): Dataset {
  const { d } = ds;
  const data = allocVectors(rows.length, d, ds.dtype);
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r];
    if (!(i >= 0 && i < ds.n)) throw new Error(`selectRows: row ${i} out of range 0..${ds.n - 1}`);
    data.set(ds.data.subarray(i * d, (i + 1) * d), r * d);
  }
  return { n: rows.length, d, dtype: ds.dtype, data, format: `${rows.length} rows of ${ds.format}`, dropped: 0 };
}
