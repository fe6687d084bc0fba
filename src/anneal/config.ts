// Every parameter of the annealing quantizer in one place, each with its default and why.
// The defaults were chosen by measurement (README "Algorithm", bench/quality.py).

export interface AnnealConfig {
  /** Number of anchors (codebook size). */
  m: number;
  /** Seed of every random choice (k-means++ sampling, splits). Same seed + input + device ⇒ same output. */
  seed: number;
  /** Stop after this many iterations even without convergence. */
  maxIters: number;
  /** Initial temperature, relative to the mean squared distance after init (scale-free). */
  t0: number;
  /** Geometric cooling: T ← T × (1 − cooling) each iteration. */
  cooling: number;
  /** Step toward the robust mean at the start; rises to 1 as the temperature falls. */
  step: number;
  /** Huber factor at the start (0 = plain mean); fades out with the temperature. */
  huber: number;
  /** Run maintenance (split / merge / refill empty anchors) every this many iterations (0 = never). */
  maintenanceEvery: number;
  /** Converged when the relative energy change stays below this ... */
  energyTol: number;
  /** ... and the fraction of changed assignments stays below this ... */
  changeTol: number;
  /** ... for this many consecutive iterations. */
  patience: number;
  /** Greedy k-means++: candidates tried per pick (1 = plain D² sampling, 0 = 2 + ⌊ln m⌋ as scikit-learn). */
  initCandidates: number;
  /** The warm phase ends (T = 0, plain Lloyd) once T falls below this × the energy after init. */
  tMin: number;
  /** First swap trial moves this share of the m anchors (at least 1); halves on each rejection. */
  swapShare: number;
  /** The swap phase ends after this many rejected single-anchor swaps. */
  swapRejects: number;
  /**
   * ...or once the best energy has fallen by less than energyTol (relative) over this many
   * iterations of it (0: no such limit): the trials no longer pay for their passes.
   */
  stallIters: number;
  /**
   * stallIters for a large input (a sampled init, below) when stallIters is 0. On small inputs the
   * late trials still pay (seed-large: 0.9743 of scikit-learn's energy without the rule, 0.9825
   * with 20, docs/algorithm.md §5); on large ones each trial costs passes over many points (10
   * instead of 20: the same energy on the clustered bench data, +0.006 % on gm, docs/algorithm.md §1).
   */
  sampledStallIters: number;
  /**
   * Before the first swap trial, end the run once the best energy has fallen by less than
   * energyTol (relative) over this many iterations while Lloyd has not settled (0: no such limit):
   * on data with little structure Lloyd moves points for tens of iterations at a few 0.01 % each.
   */
  plateauIters: number;
  /** plateauIters for a large input (a sampled init) when plateauIters is 0 (one more than patience: settled Lloyd goes to the trials first). */
  sampledPlateauIters: number;
  /** k-means++ tries; each gets up to `restartIters` Lloyd iterations and the best one is kept. */
  restarts: number;
  restartIters: number;
  /**
   * Init (k-means++ and its Lloyd polish) runs on all points while one pass over them costs at
   * most initSampleAbove point-anchor-dimension products (n·m·d); above (a large input), k-means++
   * runs on a uniform sample of initSample points per anchor (one try, not polished: on a sample,
   * restarts pick by the sample's noise and Lloyd fits its few points), so its cost stops growing
   * with n, and the run skips the warm phase, ends Lloyd at a plateau (sampledPlateauIters) and the
   * swap phase by the stall rule (sampledStallIters). initSample 0: always all points.
   */
  initSample: number;
  initSampleAbove: number;
  /**
   * Restarts and greedy candidates apply only while n·m is at most this; above it, init is one
   * plain k-means++ pass. Their cost grows with n·m (on the prod workload they took most of a GPU
   * compress: docs/algorithm.md §3), while their quality gains were measured on small problems
   * (bench/quality.py). A rule on sizes, so every device agrees.
   */
  initBudget: number;
  /**
   * k-means++ in rounds when m is above initRoundsAbove: about initRounds rounds (plus the first
   * few, which grow 1, 2, 4, …), each drawing its anchors from the same D and adding them in one
   * pass, instead of m passes (init.ts). On 1M × 128 with m 2048 (H100) the rounds took a third of
   * the m passes' time and the run ended at the same energy to 6 digits; at m 20,000 init took a
   * fifth (bench/results/2026-11-24-h100-init-rounds.json). At or below it, one anchor at a time
   * (and the greedy candidates of small problems), whose passes are cheap there.
   */
  initRounds: number;
  initRoundsAbove: number;
}

export const DEFAULT_CONFIG: Omit<AnnealConfig, 'm'> = {
  seed: 1234,
  maxIters: 300,
  t0: 0.3,
  cooling: 0.1,
  step: 0.5,
  huber: 0,
  maintenanceEvery: 10,
  energyTol: 1e-3,
  changeTol: 1e-3,
  patience: 3,
  initCandidates: 0,
  tMin: 1e-3,
  swapShare: 0.05,
  swapRejects: 5,
  stallIters: 0,
  sampledStallIters: 10,
  plateauIters: 0,
  sampledPlateauIters: 4,
  restarts: 5,
  restartIters: 10,
  initSample: 20,
  initSampleAbove: 2 ** 30,
  initBudget: 2 ** 25,
  initRounds: 64,
  initRoundsAbove: 1024,
};

/** How hard compress works (`--effort`): each one's changes to DEFAULT_CONFIG, the 'default'. */
export const EFFORTS = ['fast', 'default', 'best'] as const;
export type Effort = (typeof EFFORTS)[number];

const EFFORT_CHANGES: Record<Effort, Partial<Omit<AnnealConfig, 'm'>>> = {
  default: {},
  // k-means++ and Lloyd run to convergence, faster: no warm phase, no swap trials, one try.
  fast: { t0: 0, maintenanceEvery: 0, restarts: 1 },
  // The lowest energy: init on every point (best of `restarts` greedy k-means++ tries), the warm
  // phase, and swap trials until they are exhausted (or maxIters).
  best: { initSample: 0, t0: 0.3, stallIters: 0, plateauIters: 0 },
};

/**
 * Each device's changes to DEFAULT_CONFIG. The large-input rule (k-means++ on a sample, no warm phase,
 * the plateau and stall rules) pays where a pass is slow: on the CPU from n·m·d = 2^30. A GPU pass of the same
 * work is about a hundred times cheaper, and on 1M × 128 with m 2048 (n·m·d = 2^38) the rule
 * saved 0.16 s of a 2.96 s compress for 0.6 % more energy, above the PyTorch k-means++ + Lloyd
 * peer's (bench/results/2026-11-23-h100-final.json); so on CUDA it starts at 2^40.
 */
const DEVICE_CHANGES: Record<'cpu' | 'cuda', Partial<Omit<AnnealConfig, 'm'>>> = {
  cpu: {},
  cuda: { initSampleAbove: 2 ** 40 },
};

/** The configuration of an effort for m anchors on a device, with `over` applied last (seed, maxIters...). */
export function configFor(effort: Effort, m: number, over: Partial<Omit<AnnealConfig, 'm'>> = {}, device: 'cpu' | 'cuda' = 'cpu'): AnnealConfig {
  return { ...DEFAULT_CONFIG, ...DEVICE_CHANGES[device], ...EFFORT_CHANGES[effort], ...over, m };
}

/** The seed document's configuration, used by `vlc test-cuda` so figures compare. */
export const SEED_CONFIG: Omit<AnnealConfig, 'm'> = {
  ...DEFAULT_CONFIG,
  maxIters: 50,
  t0: 1.0,
  cooling: 0.05,
  step: 0.2,
  maintenanceEvery: 20,
  energyTol: 1e-3,
  // The seed had one init and no restarts: all 50 iterations follow its schedule. Plain D²
  // sampling keeps the init cheap on the GPU (3 engine calls per anchor instead of L + 2).
  restarts: 1,
  initCandidates: 1,
};
