// A uniform random sample of the rows, drawn on the host from the run's seeded generator, so the
// same seed picks the same rows on every device.
import type { Rng } from './random.js';

/** s distinct indices of [0, n), uniformly at random (Floyd's algorithm), ascending. */
export function sampleRows(rng: Rng, n: number, s: number): Int32Array {
  if (!(Number.isInteger(s) && s >= 0 && s <= n)) throw new Error(`sampleRows: cannot draw ${s} of ${n} rows`);
  const chosen = new Set<number>();
  for (let j = n - s; j < n; j++) {
    const t = rng.int(j + 1);
    chosen.add(chosen.has(t) ? j : t);
  }
  return Int32Array.from(chosen).sort();
}
