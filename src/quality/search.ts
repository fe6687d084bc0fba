// How `--quality R` (and the default, 0.9) finds the smallest codec whose decoded vectors keep
// recall@10 >= R, measuring as few candidates as it can (docs/quality.md "How --quality R chooses"):
//
//   1. bracket: the codecs cheap to measure (no training: none, bits at a ladder of sizes, int4,
//      int8), in order of size, searched by bisection for the first that meets the goal — recall
//      grows with the bytes a codec keeps, so the smallest that meets lies between the largest
//      measured that fails and the smallest measured that meets;
//   2. refine: between those two sizes, the codecs that size themselves to any budget (bits) are
//      measured at an interpolated size until the two are within RESOLUTION of each other;
//   3. predict: a codec that trains before it can be measured (pq's codebooks) and would make a
//      smaller file is measured only when its predicted error (an optimistic bound, its codec's
//      predictMse) is below that of every cheap codec measured that failed: a codec that keeps
//      no less error than one that missed the goal cannot meet it.
//
// The candidates do not depend on R: `--quality 0.9` does the same work as the default, and any R
// only moves where the bisection goes.
import { trainsFirst, type CodecPlan } from '../codec-registry/index.js';

/** Refinement stops when the failing and the meeting sizes are within this fraction of the meeting one. */
export const RESOLUTION = 0.04;

/** A refinement step's size stays within this fraction of the bracket's ends, so every step shrinks it by a quarter at least. */
const STEP_CLAMP = 0.25;

/** What measuring one codec on the sample gave. */
export interface Probe {
  /** recall@10 over all n less its confidence margin (null: not measurable): the goal is met when >= R. */
  lowerRecall: number | null;
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
  const meets = (p: Point) => p.probe.lowerRecall !== null && p.probe.lowerRecall >= target;
  const points: Point[] = [];
  const key = (c: CodecPlan) => JSON.stringify(c);
  let expected = Math.ceil(Math.log2(cheap.length + 1)) + 2;
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

  // 2. Refinement between the largest failing and the smallest meeting size.
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

  // 3. The codecs that train first, smaller than the choice so far, when they can beat what failed.
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

/** Where in the bracket to measure next: where recall, linear in size between its ends, reaches the target; within the clamp. */
function stepFraction(fail: Point, pass: Point, target: number): number {
  const a = fail.probe.lowerRecall, b = pass.probe.lowerRecall;
  const t = a === null || b === null || b <= a ? 0.5 : (target - a) / (b - a);
  return Math.min(1 - STEP_CLAMP, Math.max(STEP_CLAMP, t));
}
