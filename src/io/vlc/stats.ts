// Size figures reported by compress and info (SPEC §2 definitions, kept from the seed so they compare).

/** The seed's compression ratio: f16 anchors plus one u32 id per vector, over the f32 original. */
export function seedRatio(n: number, d: number, m: number): number {
  return (m * d * 2 + n * 4) / (n * d * 4);
}

/** What the file really costs: its bytes over the f32 original. */
export function trueRatio(fileBytes: number, n: number, d: number): number {
  return fileBytes / (n * d * 4);
}

export function bytesPerVector(fileBytes: number, n: number): number {
  return fileBytes / n;
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
