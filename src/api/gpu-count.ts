// How many of the GPUs listed in --gpu pay for themselves on one compress. Every GPU beyond the
// first costs fixed time (its context and modules, its engines' allocations, k-means++ rounds
// agreed across GPUs, teardown); what it saves is its share of the loop's and the final pass's
// arithmetic. On small work the cost wins: 10,000,000 × 128 with 16,384 anchors took 11.2 s on four
// GPUs, 10.0 on two and 10.1 on one. Any count writes the same bytes (the sharded engine is exact),
// so this only decides the time. The constants are fitted to one machine's runs
// (bench/results/2026-11-27-h200x4-r3d.json and -r3f.json, 4 × H200); --all-gpus skips the prediction.

/** The size of one compress, as known before training. */
export interface GpuWork {
  n: number;
  d: number;
  m: number;
  /** Rows the loop trains on (the sample; n without one). */
  sampleRows: number;
  /** Iterations the loop is expected to run (its cap, or fewer: a run converges well before a large cap). */
  iterations: number;
}

/** Seconds per row × anchor × dimension of one pass on one GPU (one iteration of 16.8M × 65,536 × 128 f16: 0.91 s). */
const SECONDS_PER_MAC = 6.45e-15;
/** Fixed seconds of each GPU beyond the first (0.8-1.1 s measured at 10M and 50M rows). */
const EXTRA_GPU_SECONDS = 1.0;
/** Share of linear speed-up the sharded loop reaches (measured 3.6× on 4 GPUs). */
const SHARDED_EFFICIENCY = 0.9;
/** More GPUs are kept unless fewer are predicted faster by more than this share (the model is rough; more GPUs also hold more). */
const PREFER_MORE = 0.1;

/** Predicted seconds of the parts that depend on the GPU count: loop, final pass's arithmetic, the extra GPUs' costs. */
export function predictedSeconds(gpus: number, w: GpuWork): number {
  const pass = (rows: number) => rows * w.m * w.d * SECONDS_PER_MAC;
  const speedUp = gpus === 1 ? 1 : gpus * SHARDED_EFFICIENCY;
  const extra = (gpus - 1) * EXTRA_GPU_SECONDS;
  return extra + (w.iterations * pass(w.sampleRows) + pass(w.n)) / speedUp;
}

/** The count of GPUs to use out of `listed`, with the predicted seconds of each count (index 0 = one GPU). */
export function gpusThatPay(listed: number, w: GpuWork): { count: number; predicted: number[] } {
  const predicted = Array.from({ length: listed }, (_, k) => predictedSeconds(k + 1, w));
  const best = Math.min(...predicted);
  let count = 1;
  for (let k = 0; k < listed; k++) if (predicted[k] <= best * (1 + PREFER_MORE)) count = k + 1;
  return { count, predicted };
}
