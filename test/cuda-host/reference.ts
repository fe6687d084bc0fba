// The math of src/backend/engine.ts written out plainly in f64, as the yardstick for the CUDA
// engine (through the fake driver here, on the GPU in test/gpu).
export interface RefState {
  count: Float64Array;
  sse: Float64Array;
  hasPrev: boolean;
}

export interface RefPass {
  j1: Int32Array;
  d1: Float64Array;
  energy: number;
  count: Float64Array;
  sse: Float64Array;
  far: Int32Array;
  farDist: Float64Array;
  anchors: Float64Array;
}

export function dist(X: ArrayLike<number>, i: number, C: ArrayLike<number>, j: number, d: number): number {
  let s = 0;
  for (let k = 0; k < d; k++) {
    const t = X[i * d + k] - C[j * d + k];
    s += t * t;
  }
  return s;
}

/**
 * One iterate() (or finalize() with T = s = 0) of engine.ts. `prev` carries the Huber statistics.
 * `minShare`: soft shares below it count as 0, as the CUDA reduce does (MIN_SHARE, 2^-20).
 */
export function refPass(
  X: ArrayLike<number>, n: number, d: number, C: ArrayLike<number>, m: number,
  T: number, step: number, huber: number, prev: RefState, minShare = 2 ** -20,
): RefPass {
  const H = new Float64Array(m).fill(Infinity);
  if (huber > 0 && prev.hasPrev) for (let j = 0; j < m; j++) if (prev.count[j] > 0) H[j] = (huber * huber * prev.sse[j]) / prev.count[j];
  const r = (v: number, j: number) => (v <= H[j] ? 1 : Math.sqrt(H[j] / v));
  const W = new Float64Array(m);
  const S = new Float64Array(m * d);
  const out: RefPass = {
    j1: new Int32Array(n), d1: new Float64Array(n), energy: 0,
    count: new Float64Array(m), sse: new Float64Array(m), far: new Int32Array(m).fill(-1), farDist: new Float64Array(m),
    anchors: Float64Array.from(C),
  };
  for (let i = 0; i < n; i++) {
    let b1 = Infinity, b2 = Infinity, j1 = -1, j2 = -1;
    for (let j = 0; j < m; j++) {
      const v = dist(X, i, C, j, d);
      if (v < b1) [b2, j2, b1, j1] = [b1, j1, v, j];
      else if (v < b2) [b2, j2] = [v, j];
    }
    let w2 = T > 0 && m > 1 ? 1 / (1 + Math.exp((b2 - b1) / T)) : 0;
    if (w2 < minShare) w2 = 0;
    const w1 = 1 - w2;
    W[j1] += w1 * r(b1, j1);
    for (let k = 0; k < d; k++) S[j1 * d + k] += w1 * r(b1, j1) * X[i * d + k];
    if (w2 > 0) {
      W[j2] += w2 * r(b2, j2);
      for (let k = 0; k < d; k++) S[j2 * d + k] += w2 * r(b2, j2) * X[i * d + k];
    }
    out.count[j1]++;
    out.sse[j1] += b1;
    if (out.far[j1] < 0 || b1 > out.farDist[j1]) {
      out.far[j1] = i;
      out.farDist[j1] = b1;
    }
    out.j1[i] = j1;
    out.d1[i] = b1;
    out.energy += b1 / n;
  }
  if (step > 0)
    for (let j = 0; j < m; j++)
      if (W[j] > 0) for (let k = 0; k < d; k++) out.anchors[j * d + k] += step * (S[j * d + k] / W[j] - out.anchors[j * d + k]);
  prev.count = out.count;
  prev.sse = out.sse;
  prev.hasPrev = true;
  return out;
}
