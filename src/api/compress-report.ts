// What compress reports when it is done: the result (the JSON of --json and --stats; fields in
// docs/json.md) — size and quality first, then how the codec was chosen and training went.
import type { Backend } from '../backend/types.js';
import { inputDtypeOf, type Dataset } from '../vectors/dataset.js';
import { assignmentWidthFor } from '../io/vlc/manifest.js';
import { grouped, percent, sizeFigures } from '../io/vlc/stats.js';
import { codecName, isCoded, jsonFieldsOf } from '../codec-registry/index.js';
import type { Choice, CodecPlan } from '../quality/choose.js';
import type { FileQuality } from '../quality/measure.js';
import type { CodecGoal } from './compress-codec.js';
import type { TrainResult } from './train.js';
import type { Metric } from '../vectors/metric.js';

export interface CompressFacts {
  ds: Dataset;
  m: number;
  /** Default l2. */
  metric?: Metric;
  codec: CodecPlan;
  anchorDtype: 'f16' | 'f32';
  bytes: number;
  result: TrainResult;
  quality: FileQuality;
  goal: CodecGoal;
  choice?: Choice;
  /** Where it ran: the backend's kind and label (what the report says of it). */
  backend: Pick<Backend, 'kind' | 'label'>;
  seed: number;
  seconds: { read: number; setup: number; choose: number; residual: number; quality: number; write: number; teardown: number; total: number };
}

export function compressStats(f: CompressFacts) {
  const { ds, result: r, quality: q, goal, choice, codec } = f;
  return {
    n: ds.n,
    d: ds.d,
    m: f.m,
    metric: f.metric ?? 'l2',
    residual: codec.mode,
    /** The codec as messages name it ("int4", "pq 32x8", "bits 64B"). */
    codec: codecName(codec),
    /** Whether the file stores residuals beside the anchor ids (every codec but 'none'). */
    coded: isCoded(codec),
    // Each codec's parameters (pq_subspaces, pq_bits, pq_dims, bits_code_bytes), null when not this file's codec.
    ...jsonFieldsOf(codec),
    anchor_dtype: f.anchorDtype,
    assignment_width: assignmentWidthFor(f.m),
    input_dtype: inputDtypeOf(ds),
    ...sizeFigures(f.bytes, ds.n, ds.d, f.m, inputDtypeOf(ds)),
    energy: r.energy,
    mse: q.mse,
    relative_error: q.relative_error,
    mean_cosine: q.mean_cosine,
    quality_vectors: q.measured,
    recall_at_10: q.recall.recall_at_10,
    recall_at_10_all: q.recall.recall_at_10_all,
    recall_at_10_all_low: q.recall.recall_at_10_all_low,
    recall_at_10_all_high: q.recall.recall_at_10_all_high,
    recall_queries: q.recall.queries,
    recall_base: q.recall.base,
    choice:
      goal.kind === 'fixed' || !choice
        ? null
        : {
            goal: goal.kind,
            target: goal.kind === 'quality' ? goal.recall : goal.perVector,
            chosen: codec.mode,
            met: choice.met,
            sample: choice.sample,
            queries: choice.queries,
            measured: choice.measured,
          },
    iterations: r.iterations - r.initIterations,
    init_iterations: r.initIterations,
    converged: r.converged,
    iter_ms_median: r.iterMsMedian,
    init_seconds: r.initSeconds,
    loop_seconds: r.seconds - r.initSeconds - r.finalSeconds,
    train_seconds: r.seconds,
    /** Rows the loop trained on (n when it trained on every row), their energy, and the final pass's seconds. */
    sample_rows: r.sampleRows,
    train_energy: r.trainEnergy,
    final_pass_seconds: r.finalSeconds,
    choose_seconds: f.seconds.choose,
    residual_seconds: f.seconds.residual,
    quality_seconds: f.seconds.quality,
    read_seconds: f.seconds.read,
    write_seconds: f.seconds.write,
    total_seconds: f.seconds.total,
    phases: phasesOf(f.seconds, r),
    device: f.backend.kind,
    device_label: f.backend.label,
    seed: f.seed,
    input_format: ds.format,
    dropped: ds.dropped,
    /** The input rows --drop-invalid skipped, ascending ids (the file keeps them too). */
    dropped_rows: ds.droppedRows ?? [],
  };
}

export type CompressStats = ReturnType<typeof compressStats>;

/** compress()'s phases; `start`, the process's own start before compress() ran, is the command line's (commands/compress.ts). */
export interface Phases {
  start?: number;
  read: number;
  setup: number;
  open: number;
  init: number;
  loop: number;
  final_pass: number;
  choose: number;
  residual: number;
  quality: number;
  write: number;
  teardown: number;
  other: number;
}

/**
 * Where the wall time went, phase by phase, in the order they run; `other` is what no phase holds
 * (the total less their sum: log lines, the summary), so the phases add up to total_seconds.
 */
function phasesOf(s: CompressFacts['seconds'], r: TrainResult): Phases {
  const phases = {
    read: s.read,
    setup: s.setup,
    open: r.openSeconds,
    init: r.initSeconds,
    // The loop's own seconds and the training's bookkeeping around it: what train()'s wall leaves.
    loop: r.wallSeconds - r.openSeconds - r.initSeconds - r.finalSeconds,
    final_pass: r.finalSeconds,
    choose: s.choose,
    residual: s.residual,
    quality: s.quality,
    write: s.write,
    teardown: s.teardown,
  };
  const accounted = Object.values(phases).reduce((a, b) => a + b, 0);
  return { ...phases, other: s.total - accounted };
}
