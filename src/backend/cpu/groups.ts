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
/** Most bound values in all (n × G floats, 128 MiB), so large n gets fewer groups. */
export const GROUP_BOUNDS_MAX = 2 ** 25;
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
  /** groupDrift of this pass. */
  drift: Float64Array;
  /** n×G bounds, shared; point i's are lower[i·G .. i·G + G). */
  lower: Float32Array;
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
  dist: Float32Array; // np: exact distance to the old anchor
  best: Int32Array; // np: the nearest anchor found so far, and its distance
  bestD: Float32Array;
  jd: Float32Array; // np × jumped: exact distances to the anchors that jumped
  top: Top2Out;
}
let scratch: Scratch | undefined;

function scratchFor(np: number, G: number, m: number, d: number, nj: number): Scratch {
  const s = scratch;
  if (s && s.need.length >= np * G && s.rows.length >= np * d && s.permAnchors.length >= m * d && s.jd.length >= np * nj) return s;
  const top = { j1: new Int32Array(np), d1: new Float32Array(np), j2: new Int32Array(np), d2: new Float32Array(np), d3: new Float32Array(np) };
  return (scratch = {
    permAnchors: new Float32Array(m * d), permVersion: -1, permOf: undefined,
    own: new Int32Array(np), need: new Uint8Array(np * G), list: new Int32Array(np), rows: new Float32Array(np * d),
    gd1: new Float32Array(np * G), gd2: new Float32Array(np * G), gj1: new Int32Array(np * G),
    dist: new Float32Array(np), best: new Int32Array(np), bestD: new Float32Array(np), jd: new Float32Array(np * Math.max(1, nj)), top,
  });
}

/** The anchors that jumped (engine.ts splitDrift) and their rows, for exact distances. */
export interface Jumped {
  ids: Int32Array;
  rows: Float32Array;
}

/**
 * Nearest anchor (j1, d1) of points i0 .. i0 + np − 1 (rows xs), through the group bounds; `eps` is
 * the relative f32 margin of worker.ts. The anchors that jumped are left out of the groups' drift
 * (it would void every bound of their groups): each point's exact distances to them are computed
 * instead (`jKernel`, which keeps their rows). j2/d2 are not maintained (T = 0 does not use them).
 * Returns how many point-anchor distances the searches computed.
 */
export function assignGrouped(
  kernel: Kernel, jKernel: Kernel, pass: GroupedPass, jumped: Jumped, xs: Float32Array, i0: number, np: number,
  anchors: Float32Array, m: number, d: number, version: number, j1: Int32Array, d1: Float32Array, eps: number,
): number {
  const { groups, drift, lower, valid } = pass;
  const { G, perm, start, group, pos } = groups;
  const nj = valid ? jumped.ids.length : 0;
  const s = scratchFor(np, G, m, d, nj);
  // The anchors in group order, copied once per anchor version; every distance below is taken
  // against this copy (same values, one copy in the kernel's memory per version).
  if (s.permVersion !== version || s.permOf !== anchors) {
    for (let q = 0; q < m; q++) s.permAnchors.set(anchors.subarray(perm[q] * d, (perm[q] + 1) * d), q * d);
    s.permVersion = version;
    s.permOf = anchors;
  }
  const need = s.need;
  const { best, bestD } = s;
  if (!valid) {
    need.fill(1, 0, np * G); // no bounds yet: every group of every point
    best.fill(-1, 0, np);
    bestD.fill(Infinity, 0, np);
  } else {
    for (let p = 0; p < np; p++) s.own[p] = pos[j1[i0 + p]];
    kernel.distIdx(xs, np, s.permAnchors, m, d, s.own, s.dist, version);
    if (nj > 0) jKernel.dists(xs, np, jumped.rows, nj, d, s.jd);
    for (let p = 0; p < np; p++) {
      // The best of the old anchor (exact) and the jumped ones (exact); then the groups that may
      // hold a nearer anchor: those whose bound, less their drift, is not above it.
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
      const ub = Math.sqrt(bd) * (1 + eps), lb = (i0 + p) * G;
      for (let g = 0; g < G; g++) {
        const l = lower[lb + g] * (1 - eps) - drift[g];
        lower[lb + g] = l;
        need[p * G + g] = l <= ub ? 1 : 0;
      }
    }
  }
  // Search each group for the points that need it (rows gathered, the group's anchors in one call).
  let work = 0;
  for (let g = 0; g < G; g++) {
    let cnt = 0;
    for (let p = 0; p < np; p++) if (need[p * G + g]) s.list[cnt++] = p;
    if (cnt === 0) continue;
    if (cnt < np) for (let q = 0; q < cnt; q++) s.rows.set(xs.subarray(s.list[q] * d, (s.list[q] + 1) * d), q * d);
    kernel.top2Range(cnt < np ? s.rows : xs, cnt, s.permAnchors, m, d, start[g], start[g + 1], s.top, version);
    work += cnt * (start[g + 1] - start[g]);
    for (let q = 0; q < cnt; q++) {
      const p = s.list[q], at = p * G + g, j = perm[s.top.j1[q]], v = s.top.d1[q];
      s.gd1[at] = v;
      s.gd2[at] = s.top.d2[q];
      s.gj1[at] = j;
      if (v < bestD[p] || (v === bestD[p] && j < best[p])) {
        best[p] = j;
        bestD[p] = v;
      }
    }
  }
  // New bounds, for every group: its nearest anchor but the new one. A searched group's is exact;
  // an unsearched one keeps its decayed bound (valid for its members that did not jump), lowered
  // to the exact distances of its jumped members and of the old anchor, unless that is the new one.
  for (let p = 0; p < np; p++) {
    const i = i0 + p, lb = i * G, b = best[p];
    for (let g = 0; g < G; g++) {
      const at = p * G + g;
      if (need[at]) lower[lb + g] = Math.sqrt(s.gj1[at] === b ? s.gd2[at] : s.gd1[at]);
    }
    if (valid) {
      for (let q = 0; q < nj; q++) {
        const j = jumped.ids[q], g = group[j];
        if (j !== b && !need[p * G + g]) lower[lb + g] = Math.min(lower[lb + g], Math.sqrt(s.jd[p * nj + q]));
      }
      const a = j1[i];
      if (a !== b && !need[p * G + group[a]]) lower[lb + group[a]] = Math.min(lower[lb + group[a]], Math.sqrt(s.dist[p]));
    }
    j1[i] = b;
    d1[i] = bestD[p];
  }
  return work;
}
