// A deliberately naive, single-threaded transcription of the math comment in src/backend/engine.ts
// (f64 everywhere, no blocking, no workers) — the reference the CPU engine is checked against.

export interface NaiveState {
  n: number; d: number; m: number;
  x: Float32Array;
  c: Float64Array;
  assign: Int32Array;
  count: Float64Array; sse: Float64Array; far: Int32Array; farDist: Float64Array;
  hasPrev: boolean;
}

export function naiveInit(x: Float32Array, n: number, d: number, m: number, anchors: Float32Array): NaiveState {
  return {
    n, d, m, x, c: Float64Array.from(anchors), assign: new Int32Array(n).fill(-1),
    count: new Float64Array(m), sse: new Float64Array(m), far: new Int32Array(m).fill(-1),
    farDist: new Float64Array(m), hasPrev: false,
  };
}

export function naiveDist(s: NaiveState, i: number, j: number): number {
  let t = 0;
  for (let k = 0; k < s.d; k++) {
    const e = s.x[i * s.d + k] - Math.fround(s.c[j * s.d + k]);
    t += e * e;
  }
  return t;
}

export function naivePass(s: NaiveState, T: number, step: number, h: number, update: boolean) {
  const { n, d, m } = s;
  const H = new Float64Array(m).fill(Infinity);
  if (update && h > 0 && s.hasPrev) for (let j = 0; j < m; j++) if (s.count[j] > 0) H[j] = h * h * s.sse[j] / s.count[j];
  const r = (dist: number, j: number) => (dist <= H[j] ? 1 : Math.sqrt(H[j] / dist));
  const W = new Float64Array(m), S = new Float64Array(m * d);
  const count = new Float64Array(m), sse = new Float64Array(m), far = new Int32Array(m).fill(-1), farDist = new Float64Array(m);
  let energy = 0, changed = 0;
  for (let i = 0; i < n; i++) {
    const ds = Array.from({ length: m }, (_, j) => naiveDist(s, i, j));
    let j1 = 0;
    for (let j = 1; j < m; j++) if (ds[j] < ds[j1]) j1 = j;
    let j2 = -1;
    for (let j = 0; j < m; j++) if (j !== j1 && (j2 < 0 || ds[j] < ds[j2])) j2 = j;
    const d1 = ds[j1];
    let w2 = update && T > 0 && m > 1 ? 1 / (1 + Math.exp((ds[j2] - d1) / T)) : 0;
    if (w2 < 2 ** -20) w2 = 0; // MIN_SOFT_SHARE (engine.ts)
    const w1 = 1 - w2;
    W[j1] += w1 * r(d1, j1);
    for (let k = 0; k < d; k++) S[j1 * d + k] += w1 * r(d1, j1) * s.x[i * d + k];
    if (w2 > 0) {
      W[j2] += w2 * r(ds[j2], j2);
      for (let k = 0; k < d; k++) S[j2 * d + k] += w2 * r(ds[j2], j2) * s.x[i * d + k];
    }
    count[j1] += 1; sse[j1] += d1; energy += d1;
    if (far[j1] < 0 || d1 > farDist[j1]) { far[j1] = i; farDist[j1] = d1; }
    if (s.assign[i] !== j1) changed++;
    s.assign[i] = j1;
  }
  if (update) {
    for (let j = 0; j < m; j++) {
      if (!(W[j] > 0)) continue;
      for (let k = 0; k < d; k++) {
        const c = Math.fround(s.c[j * d + k]);
        s.c[j * d + k] = Math.fround(c + step * (S[j * d + k] / W[j] - c));
      }
    }
  }
  Object.assign(s, { count, sse, far, farDist, hasPrev: true });
  return { energy: energy / n, changed };
}
