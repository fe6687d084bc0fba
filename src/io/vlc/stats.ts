// Size figures reported by compress, info and eval under the same names (docs/json.md). Every one
// is measured on the whole file — header, manifest, every section and its padding — except the
// seed's formula, kept so figures compare with the seed document (docs/quality.md, "The figures").
import { INPUT_DTYPE_BYTES, type InputDtype } from '../../vectors/dataset.js';

export interface SizeFigures {
  /** The .vlc file's size. */
  bytes: number;
  /** bytes / n. */
  bytes_per_vector: number;
  /** The vectors as the input held them: n·d values of its element type (headers not counted). */
  input_bytes: number;
  /** bytes / input_bytes: the file against the input's own values (u8 inputs: a quarter of f32's bytes). */
  ratio_input: number;
  /** bytes / (n·d·4): the file against the same vectors stored as f32. */
  ratio_f32: number;
  /** bytes / (n·d·2): against f16. */
  ratio_f16: number;
  /** The seed's compression ratio (m·d·2 + n·4) / (n·d·4): f16 anchors and a u32 id per vector, residuals not counted. */
  seed_ratio: number;
}

export function sizeFigures(fileBytes: number, n: number, d: number, m: number, inputDtype: InputDtype = 'f32'): SizeFigures {
  const inputBytes = n * d * INPUT_DTYPE_BYTES[inputDtype];
  return {
    bytes: fileBytes,
    bytes_per_vector: fileBytes / n,
    input_bytes: inputBytes,
    ratio_input: fileBytes / inputBytes,
    ratio_f32: fileBytes / (n * d * 4),
    ratio_f16: fileBytes / (n * d * 2),
    seed_ratio: seedRatio(n, d, m),
  };
}

/** The seed's compression ratio: f16 anchors plus one u32 id per vector, over the f32 original. */
export function seedRatio(n: number, d: number, m: number): number {
  return (m * d * 2 + n * 4) / (n * d * 4);
}

/** "2.04%" with enough digits to be useful for small ratios. */
export function percent(x: number): string {
  const p = x * 100;
  return `${p >= 10 ? p.toFixed(1) : p >= 0.1 ? p.toFixed(2) : p.toPrecision(2)}%`;
}

/** 1234567 → "1,234,567". */
export function grouped(x: number): string {
  return Math.round(x).toLocaleString('en-US');
}
