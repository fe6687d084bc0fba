// The .vlc manifest: the JSON that says what a file holds and how it was made. It is reproducible by
// design — no wall-clock times, host names, device names or input paths — so the same input and
// seed give the same bytes. Keys are written in the fixed order built here (JSON.stringify keeps
// insertion order), which is what makes the bytes stable.
import { UsageError } from '../../errors.js';
import { quoteName } from '../names.js';
import { hasResiduals, knownModes } from '../../codecs/sections.js';
import type { ResidualMode } from '../../codecs/types.js';
import { INPUT_DTYPES, type InputDtype } from '../../vectors/dataset.js';
import { METRICS, type Metric } from '../../vectors/metric.js';

export type AnchorDtype = 'f16' | 'f32';
export type AssignmentWidth = 'u8' | 'u16' | 'u32';
export type { ResidualMode };

export interface TrainingStats {
  /** Mean squared L2 distance to the (f32) anchors after the final hard assignment. */
  energy: number;
  /** Iterations the loop ran (init's polishing passes not counted). */
  iterations: number;
  /** Lloyd passes that polished init's k-means++ tries (absent in older files, whose `iterations` counted them too). */
  initIterations?: number;
  /** Whether the loop stopped on its convergence test (false: it hit maxIters). */
  converged: boolean;
  /** How the anchors were initialised. */
  init: 'kmeans++' | 'given';
}

/**
 * The file's own quality, measured at compress time on its reconstructions (src/quality/): over
 * every vector, or a seeded sample of `vectors` of them; recall@10 of exact search over the decoded
 * vectors on a sample (`recallQueries` queries among `recallBase` vectors), and what that sample
 * predicts over all n (`recallAt10All`), with its 95 % interval (`recallAt10AllLow`/`High`, absent
 * in files of vlc before it: quality/measure.ts). Absent in older files.
 */
export interface QualityStats {
  mse: number;
  relativeError: number;
  meanCosine: number;
  vectors: number;
  recallAt10: number | null;
  recallAt10All: number | null;
  recallAt10AllLow?: number | null;
  recallAt10AllHigh?: number | null;
  recallQueries: number;
  recallBase: number;
}

export interface VlcManifest {
  n: number;
  d: number;
  m: number;
  /**
   * What the file is searched by (vectors/metric.ts). l2 in every file before version 6; ip and
   * cosine need version 6, and a cosine file holds its vectors at unit length, their norms in a
   * 'norms' section (format.ts).
   */
  metric: Metric;
  anchorDtype: AnchorDtype;
  assignmentWidth: AssignmentWidth;
  residual: ResidualMode;
  /** With residuals: mean squared L2 error of the full reconstruction (anchor + residual). */
  residualEnergy?: number;
  /** Section names in file order (lets a reader name a section whose own header is damaged). */
  sections: string[];
  /**
   * The input's element type (files before it was widened hold f32 or f16), the number of rows
   * --drop-invalid removed, and their input row ids, ascending (absent when none were dropped, and
   * in files written before the ids were kept).
   */
  input: { dtype: InputDtype; dropped: number; droppedRows?: number[] };
  training: TrainingStats;
  quality?: QualityStats;
  /** The annealing configuration (src/anneal/config.ts), as run. */
  config: Record<string, number>;
  seed: number;
  tool: { name: 'vlc'; version: string };
  /** Backend kind, not a device name: a file made on one GPU model equals one made on another. */
  device: 'cpu' | 'cuda';
}

/** The narrowest unsigned integer that holds anchor ids 0..m-1 (docs/quality.md, "The codecs": u8, u16, u32). */
export function assignmentWidthFor(m: number): AssignmentWidth {
  if (m <= 256) return 'u8';
  if (m <= 65536) return 'u16';
  return 'u32';
}

export const WIDTH_BYTES: Record<AssignmentWidth, number> = { u8: 1, u16: 2, u32: 4 };
export const DTYPE_BYTES: Record<AnchorDtype, number> = { f16: 2, f32: 4 };

/** Rebuild the manifest with its keys in canonical order (the input may come from anywhere). */
export function canonicalManifest(x: VlcManifest): VlcManifest {
  const config: Record<string, number> = {};
  for (const k of Object.keys(x.config).sort()) config[k] = x.config[k];
  return {
    n: x.n,
    d: x.d,
    m: x.m,
    metric: x.metric,
    anchorDtype: x.anchorDtype,
    assignmentWidth: x.assignmentWidth,
    residual: x.residual,
    ...(hasResiduals(x.residual) ? { residualEnergy: x.residualEnergy } : {}),
    sections: [...x.sections],
    input: { dtype: x.input.dtype, dropped: x.input.dropped, ...(x.input.droppedRows?.length ? { droppedRows: [...x.input.droppedRows] } : {}) },
    training: {
      energy: x.training.energy,
      iterations: x.training.iterations,
      ...(x.training.initIterations !== undefined ? { initIterations: x.training.initIterations } : {}),
      converged: x.training.converged,
      init: x.training.init,
    },
    ...(x.quality ? { quality: canonicalQuality(x.quality) } : {}),
    config,
    seed: x.seed,
    tool: { name: 'vlc', version: x.tool.version },
    device: x.device,
  };
}

function canonicalQuality(q: QualityStats): QualityStats {
  return {
    mse: q.mse,
    relativeError: q.relativeError,
    meanCosine: q.meanCosine,
    vectors: q.vectors,
    recallAt10: q.recallAt10,
    recallAt10All: q.recallAt10All,
    ...(q.recallAt10AllLow !== undefined ? { recallAt10AllLow: q.recallAt10AllLow, recallAt10AllHigh: q.recallAt10AllHigh ?? null } : {}),
    recallQueries: q.recallQueries,
    recallBase: q.recallBase,
  };
}

/** The optional quality record, or undefined when absent or not well formed (it is informative only). */
function readQuality(v: unknown): QualityStats | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const q = v as Record<string, unknown>;
  const num = (k: string) => (typeof q[k] === 'number' && Number.isFinite(q[k]) ? (q[k] as number) : undefined);
  const mse = num('mse');
  const relativeError = num('relativeError');
  const meanCosine = num('meanCosine');
  const vectors = num('vectors');
  if (mse === undefined || relativeError === undefined || meanCosine === undefined || vectors === undefined) return undefined;
  const low = num('recallAt10AllLow'), high = num('recallAt10AllHigh');
  return {
    mse, relativeError, meanCosine, vectors, recallAt10: num('recallAt10') ?? null, recallAt10All: num('recallAt10All') ?? null,
    ...(low !== undefined && high !== undefined ? { recallAt10AllLow: low, recallAt10AllHigh: high } : {}),
    recallQueries: num('recallQueries') ?? 0, recallBase: num('recallBase') ?? 0,
  };
}

/**
 * The input record: a dtype this vlc does not know reads as f32 (how older vlc held every input but
 * f16); dropped row ids, when present, must be ascending whole numbers, one per dropped row, each
 * below the input's row count (n kept + dropped).
 */
function readInput(input: Record<string, unknown>, n: number, bad: (what: string) => Error): VlcManifest['input'] {
  const dtype = (INPUT_DTYPES as readonly unknown[]).includes(input.dtype) ? (input.dtype as InputDtype) : 'f32';
  const dropped = typeof input.dropped === 'number' && Number.isSafeInteger(input.dropped) && input.dropped >= 0 ? input.dropped : 0;
  const ids = input.droppedRows;
  if (ids === undefined) return { dtype, dropped };
  if (!Array.isArray(ids) || ids.length !== dropped)
    throw bad(`field 'input.droppedRows' must list the ${dropped} dropped rows`);
  for (let i = 0; i < ids.length; i++) {
    const v = ids[i];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < (i > 0 ? ids[i - 1] + 1 : 0) || v >= n + dropped)
      throw bad(`field 'input.droppedRows' must hold ascending row ids below ${n + dropped} (entry ${i} is ${JSON.stringify(v)})`);
  }
  return { dtype, dropped, droppedRows: ids as number[] };
}

/**
 * Check a parsed manifest field by field; the first problem becomes one UsageError line naming the
 * field. Unknown extra fields are allowed (a newer vlc may add some).
 */
const isString = (v: unknown): v is string => typeof v === 'string';

export function validateManifest(raw: unknown, source: string): VlcManifest {
  const bad = (what: string) => new UsageError(`${quoteName(source)}: manifest ${what}: file is corrupted or not made by vlc`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('is not a JSON object');
  const o = raw as Record<string, unknown>;
  const posInt = (k: string, min = 1) => {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw bad(`field '${k}' must be an integer >= ${min}`);
    return v;
  };
  const oneOf = <T extends string>(k: string, allowed: readonly T[]): T => {
    const v = o[k];
    if (typeof v !== 'string' || !allowed.includes(v as T))
      throw bad(`field '${k}' must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`);
    return v as T;
  };
  const obj = (k: string) => {
    const v = o[k];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`field '${k}' must be an object`);
    return v as Record<string, unknown>;
  };
  const n = posInt('n');
  const d = posInt('d');
  const m = posInt('m');
  if (m > n) throw bad(`has m = ${m} anchors for only n = ${n} vectors`);
  const metric = o.metric === undefined ? 'l2' : oneOf('metric', METRICS);
  const anchorDtype = oneOf('anchorDtype', ['f16', 'f32'] as const);
  const assignmentWidth = oneOf('assignmentWidth', ['u8', 'u16', 'u32'] as const);
  if (assignmentWidth !== assignmentWidthFor(m))
    throw bad(`field 'assignmentWidth' is ${assignmentWidth} but m = ${m} needs ${assignmentWidthFor(m)}`);
  const residual = o.residual;
  if (!isString(residual)) throw bad(`field 'residual' must be a string`);
  if (!knownModes().includes(residual))
    throw new UsageError(`${quoteName(source)}: residual mode ${JSON.stringify(residual)} is not supported by this vlc; upgrade vlc`);
  const residualEnergy = o.residualEnergy;
  if (hasResiduals(residual) && typeof residualEnergy !== 'number') throw bad(`field 'residualEnergy' must be a number`);
  const sections = o.sections;
  if (!Array.isArray(sections) || !sections.every((s) => typeof s === 'string'))
    throw bad(`field 'sections' must be a list of names`);
  const input = obj('input');
  const training = obj('training');
  const config = obj('config');
  const tool = obj('tool');
  const seed = o.seed;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) throw bad(`field 'seed' must be an integer`);
  const device = oneOf('device', ['cpu', 'cuda'] as const);
  if (typeof training.energy !== 'number' || typeof training.iterations !== 'number')
    throw bad(`field 'training' must hold numbers 'energy' and 'iterations'`);
  return {
    n,
    d,
    m,
    metric,
    anchorDtype,
    assignmentWidth,
    residual: residual as ResidualMode,
    ...(hasResiduals(residual) ? { residualEnergy: residualEnergy as number } : {}),
    sections: sections as string[],
    input: readInput(input, n, bad),
    training: {
      energy: training.energy,
      iterations: training.iterations,
      ...(typeof training.initIterations === 'number' ? { initIterations: training.initIterations } : {}),
      converged: training.converged === true,
      init: training.init === 'given' ? 'given' : 'kmeans++',
    },
    ...(readQuality(o.quality) ? { quality: readQuality(o.quality) } : {}),
    config: Object.fromEntries(Object.entries(config).filter(([, v]) => typeof v === 'number')) as Record<
      string,
      number
    >,
    seed,
    tool: { name: 'vlc', version: typeof tool.version === 'string' ? tool.version : 'unknown' },
    device,
  };
}
