// What compress writes, from what it learned and measured: the manifest (with the training and
// quality figures) beside the anchors, assignments and residuals. One place, so that a compress
// in one process (compress.ts) and one over MPI ranks (compress-mpi.ts) write the same bytes.
import type { AnnealConfig } from '../anneal/config.js';
import type { Dataset } from '../vectors/dataset.js';
import type { VlcContent } from '../io/vlc/format.js';
import type { FileQuality } from '../quality/measure.js';
import { manifestOf } from './compress-codec.js';
import type { TrainResult } from './train.js';
import type { Metric } from '../vectors/metric.js';

export interface FileFacts {
  ds: Dataset;
  /** Default l2; cosine comes with the n norms of the vectors (ds holds them at unit length). */
  metric?: Metric;
  norms?: Float32Array;
  m: number;
  anchorDtype: 'f16' | 'f32';
  residual: VlcContent['manifest']['residual'];
  residualEnergy?: number;
  residuals?: VlcContent['residuals'];
  cfg: AnnealConfig;
  /** Rows the annealing loop trained on (n, or the --sample: api/sample.ts). */
  sampleRows: number;
  seed: number;
  device: 'cpu' | 'cuda';
  result: TrainResult;
  /** The anchors' f16 bits, when stored as f16 and already converted (VlcContent.anchorHalves). */
  anchorHalves?: Uint16Array;
  quality: FileQuality;
}

export function vlcContent(f: FileFacts): VlcContent {
  const { result, quality } = f;
  return {
    manifest: manifestOf({
      ds: f.ds, metric: f.metric, m: f.m, anchorDtype: f.anchorDtype, residual: f.residual, residualEnergy: f.residualEnergy, cfg: f.cfg,
      sampleRows: f.sampleRows, seed: f.seed, device: f.device,
      training: {
        energy: result.energy,
        iterations: result.iterations - result.initIterations,
        initIterations: result.initIterations,
        converged: result.converged,
        init: 'kmeans++',
      },
      quality: {
        mse: quality.mse,
        relativeError: quality.relative_error,
        meanCosine: quality.mean_cosine,
        vectors: quality.measured,
        recallAt10: quality.recall.recall_at_10,
        recallAt10All: quality.recall.recall_at_10_all,
        recallAt10AllLow: quality.recall.recall_at_10_all_low,
        recallAt10AllHigh: quality.recall.recall_at_10_all_high,
        recallQueries: quality.recall.queries,
        recallBase: quality.recall.base,
      },
    }),
    anchors: result.anchors,
    ...(f.anchorHalves ? { anchorHalves: f.anchorHalves } : {}),
    assignments: result.assignments,
    residuals: f.residuals,
    ...(f.norms ? { norms: f.norms } : {}),
  };
}
