// What one annealing run reports (used by compress, test-cuda, bench and the .vlc manifest).

export interface IterRecord {
  iter: number;
  temperature: number;
  energy: number;
  changed: number;
  ms: number;
  /**
   * Set on iterations that ran maintenance: anchors moved by a swap trial (each taken from where it
   * was cheapest to remove into a costly cluster) and empty or duplicate anchors refilled.
   */
  maintenance?: { swapped: number; refilled: number };
  /** Set on the Lloyd passes that polish init's k-means++ tries: their time counts as init, not as loop iterations. */
  init?: true;
}

export interface AnnealResult {
  anchors: Float32Array; // m×d
  assignments: Uint32Array; // n
  /** Energy of the final hard assignment (exact); with anneal's `finalPass: false`, of the loop's last state. */
  energy: number;
  /** Passes in all, init's polishing passes included. */
  iterations: number;
  /** Of those, the passes that polished init's tries (their time is in initSeconds). */
  initIterations: number;
  converged: boolean;
  /** Wall seconds of init + loop + final pass (not reading or writing files). */
  seconds: number;
  initSeconds: number;
  /** Median ms of the loop's iterations (init's polishing passes excluded). */
  iterMsMedian: number;
  history: IterRecord[];
}

export interface AnnealHooks {
  /** Called after each iteration (progress display, -v logs). */
  onIter?: (rec: IterRecord, maxIters: number) => void;
  /** Called as each k-means++ try of init starts (progress display: a try reports nothing until done). */
  onInitTry?: (tryIndex: number, tries: number) => void;
  /** Called as the final exact pass starts (progress display: it reports nothing until done). */
  onFinalPass?: () => void;
  /** Aborts between backend calls (Ctrl-C): anneal() then throws InterruptedError. */
  signal?: AbortSignal;
  /** Start from these anchors instead of k-means++ (test-cuda parity: same init on both devices). */
  initAnchors?: Float32Array;
}
