// A uniform random sample of the rows, drawn on the host from the run's seeded generator, so the
// same seed picks the same rows on every device.
import type { Rng } from './random.js';

/** Up to this many rows the chosen ones are kept in a Set; past it in a bitset of n bits (V8's Sets stop at 2^24 entries). */
const SET_MAX = 2 ** 20;
/** Draws made ahead of their turn in the bitset's loop. */
const DRAW_BATCH = 4096;

/** s distinct indices of [0, n), uniformly at random (Floyd's algorithm), ascending. */
export function sampleRows(rng: Rng, n: number, s: number): Int32Array {
  if (!(Number.isInteger(s) && s >= 0 && s <= n)) throw new Error(`sampleRows: cannot draw ${s} of ${n} rows`);
  if (s <= SET_MAX) {
    const chosen = new Set<number>();
    for (let j = n - s; j < n; j++) {
      const t = rng.int(j + 1);
      chosen.add(chosen.has(t) ? j : t);
    }
    return Int32Array.from(chosen).sort();
  }
  // The same draws and choices, remembered in a bitset: the same rows as the Set would give. The
  // draws come a batch at a time, so that the loop over the bitset, with nothing else in it, has
  // many of its cache misses in flight at once (half the time of one loop doing both).
  const bits = new Uint32Array(Math.ceil(n / 32));
  const draws = new Int32Array(Math.min(DRAW_BATCH, s));
  for (let j0 = n - s; j0 < n; j0 += DRAW_BATCH) {
    const count = Math.min(DRAW_BATCH, n - j0);
    for (let q = 0; q < count; q++) draws[q] = rng.int(j0 + q + 1);
    for (let q = 0; q < count; q++) {
      const t = draws[q];
      if ((bits[t >>> 5] & (1 << (t & 31))) === 0) bits[t >>> 5] |= 1 << (t & 31);
      else bits[(j0 + q) >>> 5] |= 1 << ((j0 + q) & 31);
    }
  }
  const out = new Int32Array(s);
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    for (let b = bits[w]; b !== 0; b &= b - 1) out[k++] = w * 32 + (31 - Math.clz32(b & -b));
  }
  return out;
}
