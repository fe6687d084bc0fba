// Group bounds for the hard (T = 0) assignment: Yinyang k-means (Ding et al., ICML 2015) on the
// CPU engine's kernel. The anchors are split into G groups of nearby anchors; each point keeps,
// per group, a lower bound on its distance to every anchor of the group but its own. After the
// anchors move, a group's bounds drop by the largest drift in that group only (Hamerly's single
// bound drops by the largest drift of all anchors, which in high dimension leaves most points
// unskippable). A pass computes each point's exact distance to its anchor; groups whose bound
// stays above it cannot hold a nearer anchor and are skipped; the others are searched in full.
// The results are those of the brute-force search: the distances are the kernel's own values,
// the bounds carry a margin for f32 rounding, and ties go to the lowest anchor id.
//
// formGroups runs on the main thread; assignGrouped in the workers (worker.ts).
import type { Kernel, Top2Out } from './kernel.js';

/** Anchors per group (at most; Ding et al. use m/10 groups). */
export const GROUP_ANCHORS = 8;
/** Most groups: each point keeps one bound per group (4 bytes each). */
export const GROUPS_MAX = 64;
/** Most bound values in all (n × G doubles, 128 MiB), so large n gets fewer groups. */
export const GROUP_BOUNDS_MAX = 2 ** 24;
/** Lloyd passes that cluster the anchors into groups. */
const GROUPING_PASSES = 5;

export interface Groups {
  /** Number of groups. */
  G: number;
  /** Anchor ids in group order: group g holds perm[start[g]] .. perm[start[g + 1] − 1], ids ascending. */
  perm: Int32Array;
  start: Int32Array;
  /** group[j]: the group of anchor j; pos[j]: its place in perm. */
  group: Int32Array;
  pos: Int32Array;
}

/** How many groups to use for n points and m anchors (below 2, plain Hamerly bounds serve). */
export function groupCount(n: number, m: number): number {
  return Math.min(Math.ceil(m / GROUP_ANCHORS), GROUPS_MAX, Math.floor(GROUP_BOUNDS_MAX / Math.max(1, n)));
}

/**
 * Split the m anchors into at most G groups of nearby anchors: a few Lloyd passes over the anchors
 * from G evenly spaced ones (deterministic: no random choice), empty groups dropped.
 */
export function formGroups(kernel: Kernel, anchors: Float32Array, m: number, d: number, G: number): Groups {
  const centres = new Float32Array(G * d);
  for (let g = 0; g < G; g++) {
    const j = Math.floor((g * m) / G);
    centres.set(anchors.subarray(j * d, (j + 1) * d), g * d);
  }
  const top: Top2Out = {
    j1: new Int32Array(m), d1: new Float32Array(m), j2: new Int32Array(m), d2: new Float32Array(m), d3: new Float32Array(m),
  };
  for (let pass = 0; pass < GROUPING_PASSES; pass++) {
    kernel.top2(anchors, m, centres, G, d, top);
    const sums = new Float64Array(G * d), count = new Float64Array(G);
    for (let j = 0; j < m; j++) {
      const g = top.j1[j];
      count[g]++;
      for (let k = 0; k < d; k++) sums[g * d + k] += anchors[j * d + k];
    }
    for (let g = 0; g < G; g++) if (count[g] > 0) for (let k = 0; k < d; k++) centres[g * d + k] = sums[g * d + k] / count[g];
  }
  kernel.top2(anchors, m, centres, G, d, top);
  // Renumber the non-empty groups 0..G'-1 in order, anchors by id within each.
  const used = new Int32Array(G).fill(-1);
  let count = 0;
  for (let j = 0; j < m; j++) if (used[top.j1[j]] < 0) used[top.j1[j]] = count++;
  const group = new Int32Array(m);
  const size = new Int32Array(count);
  for (let j = 0; j < m; j++) size[(group[j] = used[top.j1[j]])]++;
  const start = new Int32Array(count + 1);
  for (let g = 0; g < count; g++) start[g + 1] = start[g] + size[g];
  const perm = new Int32Array(m);
  const fill = start.slice(0, count);
  const pos = new Int32Array(m);
  for (let j = 0; j < m; j++) perm[(pos[j] = fill[group[j]]++)] = j;
  return { G: count, perm, start, group, pos };
}

/**
 * The largest drift (distance moved since the last pass) of each group's anchors, but those that
 * jumped: the points' exact distances to them are computed instead (assignGrouped).
 */
export function groupDrift(groups: Groups, drift: Float64Array, jumped: Int32Array): Float64Array {
  const out = new Float64Array(groups.G);
  const skip = new Set(jumped);
  for (let j = 0; j < groups.group.length; j++) if (!skip.has(j)) out[groups.group[j]] = Math.max(out[groups.group[j]], drift[j]);
  return out;
}

/** What a worker needs for a grouped pass over its points (the arrays in shared memory or copied). */
export interface GroupedPass {
  groups: Groups;
  /** Per group the drift of its anchors summed over the passes, through this one (groupDrift). */
  cum: Float64Array;
  /** Per anchor, 1 when it moved since the last pass. */
  moved: Uint8Array;
  /** n×G bounds, shared, net of the drift: point i's bound for group g is lower[i·G + g] − cum[g]. */
  lower: Float64Array;
  /** The bounds hold: false searches every group of every point (and sets the bounds). */
  valid: boolean;
}

/** Scratch of one worker, grown on demand. */
interface Scratch {
  permAnchors: Float32Array;
  permVersion: number;
  permOf: unknown;
  own: Int32Array; // np: each point's anchor, as a place in perm
  need: Uint8Array; // np × G: the point searches the group
  list: Int32Array; // points of the tile searching one group
  rows: Float32Array;
  gd1: Float32Array; // np × G: the group's nearest (distance), second nearest, and the nearest's id
  gd2: Float32Array;
  gj1: Int32Array;
  gj2: Int32Array;
  dist: Float32Array; // np: exact distance to the old anchor
  best: Int32Array; // np: the nearest anchor found so far, and its distance
  bestD: Float32Array;
  jd: Float32Array; // np × jumped: exact distances to the anchors that jumped
  todo: Uint8Array; // np × G: the groups searched in the current phase
  centres: Float32Array; // G × d: each group's mean anchor, and the radius of its anchors around it
  radius: Float64Array;
  centresVersion: number;
  cd: Float32Array; // np × G: distances to the centres
  top: Top2Out;
}
let scratch: Scratch | undefined;

function scratchFor(np: number, G: number, m: number, d: number, nj: number): Scratch {
  const s = scratch;
  if (s && s.need.length >= np * G && s.centres.length >= G * d && s.rows.length >= np * d && s.permAnchors.length >= m * d && s.jd.length >= np * nj) return s;
  const top = { j1: new Int32Array(np), d1: new Float32Array(np), j2: new Int32Array(np), d2: new Float32Array(np), d3: new Float32Array(np) };
  return (scratch = {
    permAnchors: new Float32Array(m * d), permVersion: -1, permOf: undefined,
    own: new Int32Array(np), need: new Uint8Array(np * G), list: new Int32Array(np), rows: new Float32Array(np * d),
    gd1: new Float32Array(np * G), gd2: new Float32Array(np * G), gj1: new Int32Array(np * G), gj2: new Int32Array(np * G),
    dist: new Float32Array(np), best: new Int32Array(np), bestD: new Float32Array(np), jd: new Float32Array(np * Math.max(1, nj)),
    todo: new Uint8Array(np * G), centres: new Float32Array(G * d), radius: new Float64Array(G), centresVersion: -1, cd: new Float32Array(np * G), top,
  });
}

/** The anchors that jumped (engine.ts splitDrift) and their rows, for exact distances. */
export interface Jumped {
  ids: Int32Array;
  rows: Float32Array;
}

/**
 * Squared distance beyond the nearest, in units of T, past which the runner-up's soft share is
 * below MIN_SOFT_SHARE (../engine.ts): 1/(1 + e^z) < 2⁻²⁰ when z > ln(2²⁰ − 1) = 13.86; with a 5%
 * margin for rounding. A runner-up farther than d1 + SOFT_WINDOW·T gets no share, so it need not
 * be known: at T > 0 a point searches only the groups that may hold an anchor within that window.
 */
export const SOFT_WINDOW = 1.05 * Math.log(2 ** 20 - 1);

/**
 * Nearest anchor (j1, d1) of points i0 .. i0 + np − 1 (rows xs), through the group bounds, and at
 * temperature T > 0 the runner-up (j2, d2) when it lies within the soft window (else j2 = −1,
 * d2 = +∞: its share would be 0 anyway, exactly as the full search gives). `eps` is the relative
 * f32 margin of worker.ts. The bounds are kept net of each group's cumulative drift (pass.cum), so
 * a point that skips its search writes nothing. The anchors that jumped are left out of the drift
 * (it would void every bound of their groups): each point's exact distances to them are computed
 * instead (`jKernel`, which keeps their rows). A point whose anchor did not move keeps its distance
 * to it. Returns how many point-anchor distances the searches computed.
 */
export function assignGrouped(
  kernel: Kernel, jKernel: Kernel, pass: GroupedPass, jumped: Jumped, xs: Float32Array, i0: number, np: number,
  anchors: Float32Array, m: number, d: number, version: number, temperature: number,
  out: { j1: Int32Array; d1: Float32Array; j2: Int32Array; d2: Float32Array }, eps: number,
): number {
  const { j1, d1 } = out;
  const W = temperature > 0 ? SOFT_WINDOW * temperature : 0;
  const { groups, cum, moved, lower, valid } = pass;
  const { G, perm, group, pos } = groups;
  const nj = valid ? jumped.ids.length : 0;
  const s = scratchFor(np, G, m, d, nj);
  // The anchors in group order, copied once per anchor version; every distance below is taken
  // against this copy (same values, one copy in the kernel's memory per version).
  if (s.permVersion !== version || s.permOf !== anchors) {
    for (let q = 0; q < m; q++) s.permAnchors.set(anchors.subarray(perm[q] * d, (perm[q] + 1) * d), q * d);
    s.permVersion = version;
    s.permOf = anchors;
    s.centresVersion = -1;
  }
  const { need, best, bestD } = s;
  const lo = 1 - eps, hi = 1 + eps;
  let work = 0;
  if (!valid) {
    // No bounds yet: bounds from the groups' centres (triangle inequality: every anchor of group g
    // is at least |x − centre_g| − radius_g away), the group of the nearest centre searched first,
    // then every group whose bound is not above the best distance found.
    if (s.centresVersion !== version) centresOf(s, groups, d, version);
    jKernel.dists(xs, np, s.centres, G, d, s.cd);
    best.fill(-1, 0, np);
    bestD.fill(Infinity, 0, np);
    const todo = s.todo;
    todo.fill(0, 0, np * G);
    for (let p = 0; p < np; p++) {
      const lb = (i0 + p) * G;
      let first = 0, firstL = Infinity;
      for (let g = 0; g < G; g++) {
        const l = Math.max(0, Math.sqrt(s.cd[p * G + g]) * lo - s.radius[g]);
        lower[lb + g] = l + cum[g];
        if (l < firstL) {
          first = g;
          firstL = l;
        }
      }
      todo[p * G + first] = 1;
    }
    work += searchGroups(kernel, s, groups, todo, xs, np, m, d, version);
    need.set(todo.subarray(0, np * G));
    for (let p = 0; p < np; p++) {
      const ub = Math.sqrt(bestD[p] + W) * hi, lb = (i0 + p) * G;
      for (let g = 0; g < G; g++) need[p * G + g] |= todo[p * G + g] = !need[p * G + g] && (lower[lb + g] - cum[g]) * lo <= ub ? 1 : 0;
    }
    work += searchGroups(kernel, s, groups, todo, xs, np, m, d, version);
  } else {
    // Exact distances to the old anchors that moved (the others' are kept), and to the jumped ones.
    let cnt = 0;
    for (let p = 0; p < np; p++) {
      const a = j1[i0 + p];
      if (moved[a]) {
        s.list[cnt] = p;
        s.own[cnt++] = pos[a];
      } else s.dist[p] = d1[i0 + p];
    }
    if (cnt > 0) {
      if (cnt < np) for (let q = 0; q < cnt; q++) s.rows.set(xs.subarray(s.list[q] * d, (s.list[q] + 1) * d), q * d);
      kernel.distIdx(cnt < np ? s.rows : xs, cnt, s.permAnchors, m, d, s.own, s.bestD, version);
      for (let q = 0; q < cnt; q++) s.dist[s.list[q]] = s.bestD[q];
    }
    if (nj > 0) jKernel.dists(xs, np, jumped.rows, nj, d, s.jd);
    for (let p = 0; p < np; p++) {
      // The best of the old anchor and the jumped ones (exact); then the groups that may hold a
      // nearer anchor: those whose bound, net of their drift, is not above it.
      const a = j1[i0 + p];
      let b = a, bd = s.dist[p];
      for (let q = 0; q < nj; q++) {
        const j = jumped.ids[q], v = s.jd[p * nj + q];
        if (v < bd || (v === bd && j < b)) {
          b = j;
          bd = v;
        }
      }
      best[p] = b;
      bestD[p] = bd;
      const ub = Math.sqrt(bd + W) * hi, lb = (i0 + p) * G;
      for (let g = 0; g < G; g++) need[p * G + g] = (lower[lb + g] - cum[g]) * lo <= ub ? 1 : 0;
    }
    work += searchGroups(kernel, s, groups, need, xs, np, m, d, version);
  }
  // New bounds: a searched group's is its nearest anchor but the new one (exact); an unsearched
  // one keeps its bound (valid for its members that did not jump), lowered to the exact distances
  // of its jumped members and of the old anchor, unless that is the new one.
  for (let p = 0; p < np; p++) {
    const i = i0 + p, lb = i * G, b = best[p];
    for (let g = 0; g < G; g++) {
      const at = p * G + g;
      if (need[at]) lower[lb + g] = Math.sqrt(s.gj1[at] === b ? s.gd2[at] : s.gd1[at]) * lo + cum[g];
    }
    if (valid) {
      for (let q = 0; q < nj; q++) {
        const j = jumped.ids[q], g = group[j];
        if (j !== b && !need[p * G + g]) lower[lb + g] = Math.min(lower[lb + g], Math.sqrt(s.jd[p * nj + q]) * lo + cum[g]);
      }
      const a = j1[i];
      if (a !== b && !need[p * G + group[a]]) lower[lb + group[a]] = Math.min(lower[lb + group[a]], Math.sqrt(s.dist[p]) * lo + cum[group[a]]);
    }
    if (W > 0) runnerUp(s, groups, jumped, nj, p, valid ? j1[i] : -1, W, out, i);
    j1[i] = b;
    d1[i] = bestD[p];
  }
  return work;
}

/**
 * The runner-up of point p (tile index; i in the data) among the anchors known exactly this pass —
 * its old anchor, the jumped ones, every member of each searched group (whose two nearest the
 * search kept) — when within W of the nearest: then no unsearched anchor can be nearer (their
 * bounds exceed the window). Else none (−1, +∞): its share is 0 whatever it is.
 */
function runnerUp(
  s: Scratch, groups: Groups, jumped: Jumped, nj: number, p: number, old: number, W: number,
  out: { j2: Int32Array; d2: Float32Array }, i: number,
): void {
  const G = groups.G, b = s.best[p];
  let r = -1, rd = Infinity;
  const offer = (j: number, v: number) => {
    if (j !== b && (v < rd || (v === rd && j < r))) {
      r = j;
      rd = v;
    }
  };
  if (old >= 0) offer(old, s.dist[p]);
  for (let q = 0; q < nj; q++) offer(jumped.ids[q], s.jd[p * nj + q]);
  for (let g = 0; g < G; g++) {
    const at = p * G + g;
    if (!s.need[at]) continue;
    if (s.gj1[at] !== b) offer(s.gj1[at], s.gd1[at]);
    else if (s.gj2[at] >= 0) offer(s.gj2[at], s.gd2[at]);
  }
  const inside = r >= 0 && rd <= s.bestD[p] + W;
  out.j2[i] = inside ? r : -1;
  out.d2[i] = inside ? rd : Infinity;
}

/**
 * Search each group for the points of the tile marked in `mask` (rows gathered, the group's
 * anchors in one kernel call): each group's nearest and second nearest (s.gd1, s.gd2, s.gj1), and
 * each point's best so far (s.best, s.bestD; ties: lowest id). Returns the distances computed.
 */
function searchGroups(kernel: Kernel, s: Scratch, groups: Groups, mask: Uint8Array, xs: Float32Array, np: number, m: number, d: number, version: number): number {
  const { G, perm, start } = groups;
  let work = 0;
  for (let g = 0; g < G; g++) {
    let cnt = 0;
    for (let p = 0; p < np; p++) if (mask[p * G + g]) s.list[cnt++] = p;
    if (cnt === 0) continue;
    if (cnt < np) for (let q = 0; q < cnt; q++) s.rows.set(xs.subarray(s.list[q] * d, (s.list[q] + 1) * d), q * d);
    kernel.top2Range(cnt < np ? s.rows : xs, cnt, s.permAnchors, m, d, start[g], start[g + 1], s.top, version);
    work += cnt * (start[g + 1] - start[g]);
    for (let q = 0; q < cnt; q++) {
      const p = s.list[q], at = p * G + g, j = perm[s.top.j1[q]], v = s.top.d1[q];
      s.gd1[at] = v;
      s.gd2[at] = s.top.d2[q];
      s.gj1[at] = j;
      s.gj2[at] = s.top.j2[q] >= 0 ? perm[s.top.j2[q]] : -1;
      if (v < s.bestD[p] || (v === s.bestD[p] && j < s.best[p])) {
        s.best[p] = j;
        s.bestD[p] = v;
      }
    }
  }
  return work;
}

/** Each group's centre (mean of its anchors, from s.permAnchors) and radius (largest distance to them, with margin). */
function centresOf(s: Scratch, groups: Groups, d: number, version: number): void {
  const { G, start } = groups;
  for (let g = 0; g < G; g++) {
    const c = s.centres.subarray(g * d, (g + 1) * d);
    const k0 = start[g], k1 = start[g + 1];
    for (let k = 0; k < d; k++) {
      let sum = 0;
      for (let q = k0; q < k1; q++) sum += s.permAnchors[q * d + k];
      c[k] = sum / (k1 - k0);
    }
    let r = 0;
    for (let q = k0; q < k1; q++) {
      let e = 0;
      for (let k = 0; k < d; k++) e += (s.permAnchors[q * d + k] - c[k]) ** 2;
      r = Math.max(r, e);
    }
    s.radius[g] = Math.sqrt(r) * (1 + 4 * d * 2 ** -24) + Number.MIN_VALUE; // f64 sum: a margin for the f32 centre
  }
  s.centresVersion = version;
}
