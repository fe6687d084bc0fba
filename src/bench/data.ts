// Synthetic data for `vlc test-cuda` and `vlc bench`, generated in-process from a seed so every
// machine benchmarks exactly the same vectors.
import { allocDataset, f32ToF16, forEachPiece, rowF32, type Dataset } from '../vectors/dataset.js';

/**
 * The seed document's test data (docs/cuda.md, "The parity test"): 3 centres at 0, 5 and 10 in
 * every dimension; point i, dim j = centre[i % 3] + sin((i*d + j) * 0.1) * 0.5, computed in f32
 * and stored as f16.
 */
export function seedData(n: number, d: number): Dataset {
  const ds = allocDataset(n, d, 'f16', 'synthetic (seed formula)');
  const f = Math.fround;
  const centres = [0, 5, 10];
  forEachPiece(ds, (data, r0, r1) => {
    for (let i = r0; i < r1; i++) {
      const c = centres[i % 3];
      for (let j = 0; j < d; j++) {
        const arg = f(f(i * d + j) * f(0.1));
        data[(i - r0) * d + j] = f32ToF16(f(c + f(f(Math.sin(arg)) * f(0.5))));
      }
    }
  });
  return ds;
}

/** A small fast seeded generator (xorshift128+ style on 32-bit halves), uniform in [0, 1). */
class BenchRng {
  private a: number;
  private b: number;
  private spare: number | undefined;
  constructor(seed: number) {
    this.a = (seed ^ 0x9e3779b9) >>> 0 || 1;
    this.b = Math.imul(seed + 0x6d2b79f5, 0x85ebca6b) >>> 0 || 2;
  }
  next(): number {
    // xorshift32 on two lanes, combined: plenty for benchmark data.
    let x = this.a;
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    this.a = x;
    let y = this.b;
    y ^= y << 13; y >>>= 0; y ^= y >>> 17; y ^= y << 5; y >>>= 0;
    this.b = y;
    return ((x >>> 5) * 67108864 + (y >>> 6)) / 9007199254740992;
  }
  /** Standard normal (Box–Muller, pairs cached). */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const u = Math.max(this.next(), 1e-300);
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
  int(k: number): number {
    return Math.floor(this.next() * k);
  }
}

/**
 * Embedding-like clustered data: `clusters` centres drawn from N(0, 1) per dimension, each point
 * a centre plus N(0, spread²) noise, f32. Clusters are fewer than typical m, so anchors must
 * subdivide them, as with real embeddings.
 */
export function clusteredData(n: number, d: number, seed: number, clusters = 64, spread = 0.35): Dataset {
  const rng = new BenchRng(seed);
  const centres = new Float32Array(clusters * d);
  for (let k = 0; k < centres.length; k++) centres[k] = rng.normal();
  const ds = allocDataset(n, d, 'f32', `synthetic (${clusters} gaussian clusters, seed ${seed})`);
  forEachPiece(ds, (data, r0, r1) => {
    for (let i = 0; i < r1 - r0; i++) {
      const c = rng.int(clusters) * d;
      for (let j = 0; j < d; j++) data[i * d + j] = centres[c + j] + spread * rng.normal();
    }
  });
  return ds;
}

/** m distinct rows chosen with a seeded generator (Floyd's algorithm), as an m×d f32 array. */
export function sampleRows(ds: Dataset, m: number, seed: number): Float32Array {
  const rng = new BenchRng(seed ^ 0x5bd1e995);
  const chosen = new Set<number>();
  for (let j = ds.n - m; j < ds.n; j++) {
    const t = rng.int(j + 1);
    chosen.add(chosen.has(t) ? j : t);
  }
  const out = new Float32Array(m * ds.d);
  let r = 0;
  for (const i of [...chosen].sort((a, b) => a - b)) out.set(rowF32(ds, i), ds.d * r++);
  return out;
}
