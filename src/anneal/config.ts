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
  /** Greedy k-means++: candidates tried per pick (1 = plain D² sampling). */
  initCandidates: number;
}

export const DEFAULT_CONFIG: Omit<AnnealConfig, 'm'> = {
  seed: 1234,
  maxIters: 100,
  t0: 1.0,
  cooling: 0.05,
  step: 0.2,
  huber: 0,
  maintenanceEvery: 20,
  energyTol: 1e-3,
  changeTol: 1e-3,
  patience: 3,
  initCandidates: 1,
};

/** The seed document's configuration, used by `vlc test-cuda` so figures compare. */
export const SEED_CONFIG: Omit<AnnealConfig, 'm'> = {
  ...DEFAULT_CONFIG,
  maxIters: 50,
  t0: 1.0,
  cooling: 0.05,
  step: 0.2,
  maintenanceEvery: 20,
  energyTol: 1e-3,
};
