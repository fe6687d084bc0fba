// Optional residuals (SPEC §3.3): each vector also stores x − anchor, quantized to int8 or int4 with
// one scale per dimension, so reconstructions — and search and eval — get much closer to the
// originals at d or d/2 more bytes per vector.
//
//   code q_ik = clamp(round(r_ik / s_k), −L, L),  r = x − (stored anchor),  L = 127 (int8) or 7 (int4)
//   x̂_ik = anchor_k + s_k · q_ik
//
// Scales: int8 has levels to spare, so s_k = max|r_k| / 127 (nothing is clipped). int4 has 15
// levels; spreading them to the largest residual would waste most of them on rare outliers, so its
// range is clipped at 2.6 × the RMS residual of the dimension. Measured (mean squared error of the
// int4 reconstruction; demo fixture m=128 / 100k×384 Gaussian clusters m=1024): clip 2.0: 4.76e-3 /
// 3.59e-3, 2.5: 3.02e-3 / 2.55e-3, 2.6: 2.95e-3 / 2.59e-3, 2.75: 2.96e-3 / 2.72e-3, 3.0: 3.22e-3 /
// 3.09e-3, no clip: 5.36e-3 / 6.95e-3. For int8, clipping at 4-5 RMS helped the Gaussian set by up
// to 17% but cost the demo up to 37%, so int8 stays unclipped.
// The residuals are taken against the anchors *as stored* (f16-rounded when the file holds f16),
// so that decoding reproduces exactly what was measured at compress time.

export type ResidualMode = 'none' | 'int8' | 'int4';
export const RESIDUAL_MODES: readonly ResidualMode[] = ['none', 'int8', 'int4'];

export interface Residuals {
  mode: 'int8' | 'int4';
  /** One scale per dimension (f32). */
  scales: Float32Array;
  /** n×d codes, one per byte in memory whatever the mode (int4 is packed only in the file). */
  codes: Int8Array;
}

const LEVELS = { int8: 127, int4: 7 } as const;
const INT4_CLIP_RMS = 2.6;

/** Quantize the residuals of every vector (x: n×d f32) against its stored anchor. */
export function quantizeResiduals(
  mode: 'int8' | 'int4',
  x: Float32Array,
  n: number,
  d: number,
  anchors: Float32Array,
  assign: ArrayLike<number>,
): Residuals {
  const maxAbs = new Float64Array(d);
  const sumSq = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    const a = assign[i] * d;
    for (let k = 0; k < d; k++) {
      const r = x[i * d + k] - anchors[a + k];
      const ar = Math.abs(r);
      if (ar > maxAbs[k]) maxAbs[k] = ar;
      sumSq[k] += r * r;
    }
  }
  const L = LEVELS[mode];
  const scales = new Float32Array(d);
  for (let k = 0; k < d; k++) {
    const range = mode === 'int8' ? maxAbs[k] : Math.min(maxAbs[k], INT4_CLIP_RMS * Math.sqrt(sumSq[k] / n));
    scales[k] = range / L;
  }
  const codes = new Int8Array(n * d);
  for (let i = 0; i < n; i++) {
    const a = assign[i] * d;
    for (let k = 0; k < d; k++) {
      const s = scales[k];
      if (s === 0) continue; // every residual of this dimension is 0
      const q = Math.round((x[i * d + k] - anchors[a + k]) / s);
      codes[i * d + k] = q > L ? L : q < -L ? -L : q;
    }
  }
  return { mode, scales, codes };
}

/** Section payload: d f32 scales, then the codes (int8: one byte each; int4: two per byte, low nibble first). */
export function packResiduals(r: Residuals, n: number, d: number): Uint8Array {
  const rowBytes = residualRowBytes(r.mode, d);
  const out = new Uint8Array(4 * d + n * rowBytes);
  new Float32Array(out.buffer, 0, d).set(r.scales);
  const body = out.subarray(4 * d);
  if (r.mode === 'int8') {
    body.set(new Uint8Array(r.codes.buffer, r.codes.byteOffset, r.codes.length));
    return out;
  }
  for (let i = 0; i < n; i++)
    for (let k = 0; k < d; k += 2) {
      const lo = r.codes[i * d + k] & 0xf;
      const hi = k + 1 < d ? r.codes[i * d + k + 1] & 0xf : 0;
      body[i * rowBytes + (k >> 1)] = lo | (hi << 4);
    }
  return out;
}

/** Inverse of packResiduals; the caller has checked the payload length (residualPayloadBytes). */
export function unpackResiduals(mode: 'int8' | 'int4', payload: Uint8Array, n: number, d: number): Residuals {
  const scales = new Float32Array(d);
  new Uint8Array(scales.buffer).set(payload.subarray(0, 4 * d));
  const body = payload.subarray(4 * d);
  const codes = new Int8Array(n * d);
  if (mode === 'int8') {
    codes.set(new Int8Array(body.buffer, body.byteOffset, n * d));
    return { mode, scales, codes };
  }
  const rowBytes = residualRowBytes(mode, d);
  for (let i = 0; i < n; i++)
    for (let k = 0; k < d; k++) {
      const b = body[i * rowBytes + (k >> 1)];
      const nib = k & 1 ? b >> 4 : b & 0xf;
      codes[i * d + k] = nib & 0x8 ? nib - 16 : nib; // sign-extend 4 bits
    }
  return { mode, scales, codes };
}

function residualRowBytes(mode: 'int8' | 'int4', d: number): number {
  return mode === 'int8' ? d : Math.ceil(d / 2);
}

export function residualPayloadBytes(mode: 'int8' | 'int4', n: number, d: number): number {
  return 4 * d + n * residualRowBytes(mode, d);
}

/** Mean over vectors of ‖x − (anchor + dequantized residual)‖², in f64: the file's true error. */
export function residualMse(
  r: Residuals,
  x: Float32Array,
  n: number,
  d: number,
  anchors: Float32Array,
  assign: ArrayLike<number>,
): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const a = assign[i] * d;
    for (let k = 0; k < d; k++) {
      // fround: decoders hold the reconstruction in f32, so measure that.
      const e = x[i * d + k] - Math.fround(anchors[a + k] + r.scales[k] * r.codes[i * d + k]);
      sum += e * e;
    }
  }
  return sum / n;
}
