// Rows handed out a range at a time, so writers never need all n × d values in one array:
// decompress rebuilds a .vlc's vectors chunk by chunk (n · d may exceed any typed array), and
// in-memory arrays are served as views.

/** n rows of d f32 values. */
export interface RowSource {
  readonly n: number;
  readonly d: number;
  /** Rows r0 .. r0 + k as k × d values: a view, valid until the next call. */
  rows(r0: number, k: number): Float32Array;
}

/** Rows of an array in memory (row-major, at least n × d values). */
export function rowsOf(data: Float32Array, n: number, d: number): RowSource {
  if (data.length < n * d) throw new Error(`rowsOf: ${data.length} values given for ${n} × ${d}`);
  return { n, d, rows: (r0, k) => data.subarray(r0 * d, (r0 + k) * d) };
}

/** Rows computed on demand by `fill` into one reused buffer of up to `maxRows` rows. */
export function computedRows(n: number, d: number, fill: (r0: number, k: number, out: Float32Array) => void, maxRows = Math.max(1, Math.floor((64 << 20) / (4 * d)))): RowSource {
  let buf = new Float32Array(0);
  return {
    n,
    d,
    rows(r0, k) {
      if (k > maxRows) throw new Error(`computedRows: ${k} rows asked for, at most ${maxRows} at a time`);
      if (buf.length < k * d) buf = new Float32Array(Math.min(n, maxRows) * d);
      const out = buf.subarray(0, k * d);
      fill(r0, k, out);
      return out;
    },
  };
}
