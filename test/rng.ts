// The seeded uniform generator every test suite draws its inputs from (mulberry32): small, fast
// and the same sequence on every platform, so a failing case can be replayed from its seed.

/** Uniform numbers in [0, 1) from a 32-bit seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
