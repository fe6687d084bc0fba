// How `--quality R` (and the default, 0.9) finds the smallest codec whose decoded vectors keep
// recall@10 >= R, measuring as few candidates as it can (docs/quality.md "How --quality R chooses"):
//
//   1. bracket: the codecs cheap to measure (no training: none, bits at a ladder of sizes, int4,
//      int8), in order of size, searched by bisection for the first that meets the goal — recall
//      grows with the bytes a codec keeps, so the smallest that meets lies between the largest
//      measured that fails and the smallest measured that meets;
//   2. by error: a variable-rate codec whose error at any size its sample predicts without coding
//      (ec: its step, codecs/ec/predict.ts) is planned at the error where the measured points'
//      recall reaches R (recall falls with the error a codec leaves, whichever the codec), measured
//      only when that plan is smaller than the choice so far, and narrowed between its own meeting
//      and failing errors until its sizes there are within RESOLUTION (at most MAX_ERROR_PROBES);
//   3. refine: between the largest failing size and the smallest meeting one, the codecs that size
//      themselves to any budget (bits) are measured at an interpolated size until the two are
//      within RESOLUTION of each other (nothing to do when step 2 met R below the failing size);
//   4. predict: a codec that trains before it can be measured (pq's codebooks) and would make a
//      smaller file is measured only when its predicted error (an optimistic bound, its codec's
//      predictMse) is below that of every cheap codec measured that failed: a codec that keeps
//      no less error than one that missed the goal cannot meet it.
//
// The candidates do not depend on R: `--quality 0.9` does the same work as the default, and any R
// only moves where the bisection goes.
import { trainsFirst, type CodecPlan } from '../codec-registry/index.js';

/**
 * Refinement stops when the failing and the meeting sizes are within this fraction of the meeting
 * one: the file may be this much larger than the size where recall crosses R, and issue 30 asks for
 * at most 5 % over the smallest file reaching R, so the rest is left to the recall's own noise.
 */
export const RESOLUTION = 0.02;

/** Measurements of one error-sized codec (step 2) at most: each is one coding of the sample. */
export const MAX_ERROR_PROBES = 6;

/** A refinement step's size stays within this fraction of the bracket's ends, so every step shrinks it by a quarter at least. */
const STEP_CLAMP = 0.25;

/** What measuring one codec on the sample gave. */
export interface Probe {
  /** recall@10 over all n as the sample predicts it (null: not measurable): the goal is met when >= R. */
  recall: number | null;
  /** Mean squared error per vector on the sample. */
  mse: number;
}

export interface SearchHooks {
  /** The file's bytes per vector with this codec. */
  size: (c: CodecPlan) => number;
  measure: (c: CodecPlan) => Promise<Probe>;
  /** The optimistic error of a codec that trains first (undefined: no prediction). */
  predictMse: (c: CodecPlan) => number | undefined;
  /** Plans cheap to measure within a budget in bytes per vector (quality/choose.ts asks the registry). */
  within: (budget: number) => CodecPlan[];
  /** The error-sized codecs' plans predicted to leave `mse` a vector (step 2; quality/choose.ts asks the registry): planned, not coded. */
  atError?: (mse: number) => CodecPlan[];
  /** Before each measurement: the codec, how many were measured, and how many the search expects in all. */
  onMeasure?: (c: CodecPlan, done: number, expected: number) => void;
}

export interface SearchResult {
  /** The smallest codec measured that meets the goal (undefined: none did). */
  chosen: CodecPlan | undefined;
  /** Codecs that train first, left out because a codec measured failed with no more error than they could leave at best. */
  skipped: Array<{ codec: CodecPlan; predictedMse: number; beatenBy: CodecPlan }>;
}

interface Point {
  c: CodecPlan;
  size: number;
  probe: Probe;
}

export async function searchQuality(target: number, options: readonly CodecPlan[], h: SearchHooks): Promise<SearchResult> {
  const sorted = [...options].sort((a, b) => h.size(a) - h.size(b));
  const cheap = sorted.filter((c) => !trainsFirst(c));
  const costly = sorted.filter(trainsFirst);
  const meets = (p: Point) => p.probe.recall !== null && p.probe.recall >= target;
  const points: Point[] = [];
  const key = (c: CodecPlan) => JSON.stringify(c);
  let expected = Math.ceil(Math.log2(cheap.length + 1)) + 2 + (h.atError ? 2 : 0);
  const measure = async (c: CodecPlan): Promise<Point> => {
    const seen = points.find((p) => key(p.c) === key(c));
    if (seen) return seen;
    h.onMeasure?.(c, points.length, Math.max(expected, points.length + 1));
    const p = { c, size: h.size(c), probe: await h.measure(c) };
    points.push(p);
    return p;
  };

  // 1. Bisection over the cheap codecs by size.
  let fail: Point | undefined;
  let pass: Point | undefined;
  for (let lo = -1, hi = cheap.length; hi - lo > 1; ) {
    const mid = (lo + hi) >> 1;
    const p = await measure(cheap[mid]);
    if (meets(p)) [hi, pass] = [mid, p];
    else [lo, fail] = [mid, p];
  }

  // 2. The codecs sized by their error, each narrowed on its own measurements (their plans kept by error: planning costs a pass over the sample).
  if (h.atError) {
    const planned = new Map<number, CodecPlan[]>();
    const atError = (mse: number) => planned.get(mse) ?? (planned.set(mse, h.atError!(mse)), planned.get(mse)!);
    const first = nextError(points, [], target, meets);
    const modes = first === undefined ? [] : [...new Set(atError(first).map((c) => c.mode))];
    for (const mode of modes) {
      const found = await byError((mse) => atError(mse).find((c) => c.mode === mode), points, target, pass, h.size, measure);
      if (found && (!pass || found.size < pass.size)) pass = found;
    }
  }

  // 3. Refinement between the largest failing and the smallest meeting size.
  if (fail && pass) {
    expected = points.length + Math.max(0, Math.ceil(Math.log2((pass.size - fail.size) / (RESOLUTION * pass.size))));
    while (pass.size - fail.size > RESOLUTION * pass.size) {
      const budget = fail.size + stepFraction(fail, pass, target) * (pass.size - fail.size);
      // The largest plans within the budget, and (where the budget rounds down to the failing size) just below the meeting one.
      const inside = [...h.within(budget), ...h.within(pass.size * (1 - 1e-9))].filter(
        (c) => h.size(c) > fail!.size && h.size(c) < pass!.size && !points.some((p) => key(p.c) === key(c)),
      );
      if (inside.length === 0) break;
      const c = inside.reduce((a, b) => (Math.abs(h.size(b) - budget) < Math.abs(h.size(a) - budget) ? b : a));
      const p = await measure(c);
      if (meets(p)) pass = p;
      else fail = p;
    }
  }

  // 4. The codecs that train first, smaller than the choice so far, when they can beat what failed.
  const skipped: SearchResult['skipped'] = [];
  for (const c of costly) {
    if (pass && h.size(c) >= pass.size) break;
    const bound = h.predictMse(c);
    const beaten = bound === undefined ? undefined : points.find((p) => !meets(p) && p.probe.mse <= bound);
    if (beaten) {
      skipped.push({ codec: c, predictedMse: bound!, beatenBy: beaten.c });
      continue;
    }
    expected = points.length + 1;
    const p = await measure(c);
    if (meets(p)) {
      pass = p;
      break;
    }
  }
  return { chosen: pass?.c, skipped };
}

/** The meeting point with the most error, and the failing one with the least error above it, among `pool`. */
function bracket(pool: Point[], meets: (p: Point) => boolean): { M?: Point; F?: Point } {
  const M = pool.filter(meets).reduce<Point | undefined>((a, p) => (!a || p.probe.mse > a.probe.mse ? p : a), undefined);
  const F = pool
    .filter((p) => p.probe.recall !== null && !meets(p) && (!M || p.probe.mse > M.probe.mse))
    .reduce<Point | undefined>((a, p) => (!a || p.probe.mse < a.probe.mse ? p : a), undefined);
  return { M, F };
}

/** Recall's change per unit of log(error) between two points (undefined: not a falling line). */
function slope(a: Point, b: Point): number | undefined {
  const dl = Math.log(a.probe.mse) - Math.log(b.probe.mse), dr = a.probe.recall! - b.probe.recall!;
  return dl !== 0 && dr / dl < 0 ? dr / dl : undefined;
}

/**
 * Where step 2 plans next, recall taken as linear in log(error): between this codec's own meeting
 * and failing points (`own`) once it has both (within the clamp); before that, from its own point
 * nearest the goal (its meeting one with the most error, or its failing one with the least) along the slope of its own two last points, or of every codec's bracket
 * (recall falls with error whichever the codec), moving at least 3 % and at most 4× in error (16×
 * far from the target); the
 * first probe between every codec's meeting and failing points.
 */
function nextError(points: Point[], own: Point[], target: number, meets: (p: Point) => boolean): number | undefined {
  const at = (A: Point, B: Point, t: number) => Math.exp(Math.log(A.probe.mse) + t * (Math.log(B.probe.mse) - Math.log(A.probe.mse)));
  const frac = (F: Point, M: Point) => {
    const rM = M.probe.recall!, rF = F.probe.recall!;
    return rM > rF ? Math.min(1 - STEP_CLAMP, Math.max(STEP_CLAMP, (target - rF) / (rM - rF))) : 0.5;
  };
  const mine = bracket(own, meets);
  if (mine.M && mine.F) return at(mine.F, mine.M, frac(mine.F, mine.M));
  const all = bracket(points, meets);
  const measured = own.filter((p) => p.probe.recall !== null && p.probe.mse > 0);
  if (measured.length === 0) {
    if (all.M && all.F) return at(all.F, all.M, frac(all.F, all.M));
    if (all.M) return all.M.probe.mse * 2; // nothing measured failed with more error: try coarser
    if (all.F) return all.F.probe.mse / 4; // nothing met: try finer
    return undefined;
  }
  // Its point nearest the goal's side: the meeting one with the most error, or the failing one with the least.
  const A = measured.reduce((a, p) => (meets(p) ? p.probe.mse > a.probe.mse : p.probe.mse < a.probe.mse) ? p : a);
  const k = (measured.length >= 2 ? slope(measured.at(-1)!, measured.at(-2)!) : undefined) ?? (all.M && all.F ? slope(all.M, all.F) : undefined);
  const ok = meets(A);
  // Far from the target (beyond half the distance to recall 1 from it), where recall saturates and
  // other codecs' slopes say little of this one's, the step may reach 16 times the error.
  const far = Math.abs(A.probe.recall! - target) > (1 - target) / 2 ? 16 : 4;
  let mse = k === undefined ? A.probe.mse * (ok ? 2 : 0.5) : Math.exp(Math.log(A.probe.mse) + (target - A.probe.recall!) / k);
  mse = ok ? Math.min(far * A.probe.mse, Math.max(1.03 * A.probe.mse, mse)) : Math.max(A.probe.mse / far, Math.min(0.97 * A.probe.mse, mse));
  return mse;
}

/**
 * Step 2 for one codec, `plan(mse)` its plan predicted to leave that error: probes at nextError's
 * error, each skipped when no smaller than the choice so far, until its plans at its smallest
 * meeting error and at the nearest failing error above it are within RESOLUTION in size. Returns
 * the smallest of its plans that met the goal.
 */
async function byError(
  plan: (mse: number) => CodecPlan | undefined, points: Point[], target: number, choice: Point | undefined,
  size: (c: CodecPlan) => number, measure: (c: CodecPlan) => Promise<Point>,
): Promise<Point | undefined> {
  const meets = (p: Point) => p.probe.recall !== null && p.probe.recall >= target;
  const own: Point[] = [];
  let best: Point | undefined;
  for (let probe = 0; probe < MAX_ERROR_PROBES; probe++) {
    if (best) {
      // Narrow enough: its plan at the failing error nearest above its best's (its own, else any codec's) is within RESOLUTION of it.
      const above = (pool: Point[]) =>
        pool.filter((p) => p.probe.recall !== null && !meets(p) && p.probe.mse > best!.probe.mse).reduce<Point | undefined>((a, p) => (!a || p.probe.mse < a.probe.mse ? p : a), undefined);
      const F = above(own) ?? above(points);
      const atF = F && plan(F.probe.mse);
      if (F && (!atF || best.size - size(atF) <= RESOLUTION * best.size)) break;
    }
    const mse = nextError(points, own, target, meets);
    if (mse === undefined || !(mse > 0)) break;
    const c = plan(mse);
    if (!c || points.some((p) => JSON.stringify(p.c) === JSON.stringify(c))) break;
    const smallest = best ?? choice;
    if (smallest && size(c) >= smallest.size) break; // no smaller than what already meets
    const p = await measure(c);
    own.push(p);
    if (meets(p) && (!best || p.size < best.size)) best = p;
  }
  return best;
}

/** Where in the bracket to measure next: where recall, linear in size between its ends, reaches the target; within the clamp. */
function stepFraction(fail: Point, pass: Point, target: number): number {
  const a = fail.probe.recall, b = pass.probe.recall;
  const t = a === null || b === null || b <= a ? 0.5 : (target - a) / (b - a);
  return Math.min(1 - STEP_CLAMP, Math.max(STEP_CLAMP, t));
}
