// search(): the k nearest neighbours of each query over a .vlc file's vectors — on the CPU by
// probing the nearest anchors' lists (search/index.ts); on a GPU (device 'cuda', or 'auto' with
// one and no nprobe) by exhaustive exact search over every decoded vector (search/exhaustive.ts; with a
// list of GPUs the rows split over them, backend/cuda/split-knn.ts),
// and with `exhaustive` on the CPU too. The file is read where it lies, a block of rows at a time
// (io/vlc/on-disk.ts; a pq file's codes whole for the CPU's index search).
// Distances are squared L2 to the reconstructions; under the metric ip or cosine (the file's, or
// `metric`) the results are ranked by it, their distances −⟨q, x⟩ or 1 − cos (ascending still). What `vlc search` runs, and what
// `import { search } from 'vlc'` gives a Node program.
import { inputRowId } from '../vectors/row-ids.js';
import { cpuKnn, prewarmKnn } from '../backend/cpu/index.js';
import { GPU_KNN_MAX_K } from '../backend/cuda/knn.js';
import { selectExactKnn, type DeviceChoice, type OpenedKnn } from '../backend/select.js';
import type { Neighbours } from '../backend/types.js';
import { UsageError } from '../errors.js';
import type { ReadOptions } from '../io/read.js';
import type { VlcFile } from '../io/vlc/format.js';
import { log, silentReporter, type Reporter } from '../log.js';
import { searchDecoded } from '../search/exhaustive.js';
import { defaultNprobe, searchCompressed, vlcSearchIndex } from '../search/index.js';
import { reportedInPlace } from '../search/metric.js';
import { isMetric, METRICS, type Metric } from '../vectors/metric.js';
import { pieceRows, rowsF32, type Dataset } from '../vectors/dataset.js';
import { nameOf, vectorsOf, vlcOnDiskOf, type VectorsInput, type VlcInput } from './inputs.js';

export interface SearchOptions extends ReadOptions {
  /** Neighbours per query (default 10), at most n. */
  k?: number;
  /** The CPU index search: visit at least this many nearest anchors (default: 1, or 8 with residuals); not with device 'cuda'. */
  nprobe?: number;
  /** 'auto' (default): exhaustive on a usable GPU, else the CPU's index search (or exhaustive, with `exhaustive`); 'cuda' never falls back. */
  device?: DeviceChoice;
  /** GPU index (default 0), or several: the exhaustive search splits the rows over them (one range each, the same results as one GPU). */
  gpu?: number | number[];
  /**
   * Rank every decoded vector, as the GPU does, also without one: on the CPU the file is read where
   * it lies, a block of rows at a time (memory: the anchors, one id per vector, one block), where
   * the index search holds the whole file. Not with nprobe.
   */
  exhaustive?: boolean;
  /**
   * Rank by this instead of the file's metric (l2 for files written before the metric was
   * recorded): l2 and ip files take any; a cosine file, whose index holds unit vectors, only cosine.
   */
  metric?: Metric;
  /** Hears reading and searching (the CLI draws them on a terminal). */
  progress?: Reporter;
}

/** The result of search(): `vlc search --json` prints k, queries and nprobe, and each query's row of ids and distances. */
export interface SearchResult {
  k: number;
  /** Number of queries. */
  queries: number;
  /** Anchors probed at least (the CPU's index search), or null: exhaustive over every decoded vector (a GPU, or `exhaustive`). */
  nprobe: number | null;
  /** queries × k ids (row q: query q's neighbours, nearest first). */
  ids: Int32Array;
  /** What the results are ranked by: the file's metric, or the one asked for. */
  metric: Metric;
  /**
   * queries × k distances to the decoded vectors beside `ids`, ascending: squared L2 (metric l2),
   * the negative inner product −⟨q, x⟩ (ip) or the cosine distance 1 − cos(q, x) (cosine).
   */
  distances: Float32Array;
}

/**
 * The metric a search of `file` ranks by: `asked`, else the file's. A cosine file's index holds its
 * vectors at unit length (search/vlc.ts), so it is searched by cosine only.
 */
export function searchMetric(file: VlcFile, asked: Metric | undefined, name: string): Metric {
  if (asked !== undefined && !isMetric(asked)) throw new UsageError(`--metric must be one of ${METRICS.join(', ')} (got ${JSON.stringify(asked)})`);
  const own = file.manifest.metric;
  if (asked === undefined || asked === own) return own;
  if (own === 'cosine')
    throw new UsageError(`${name} was compressed with --metric cosine (its vectors coded at unit length): search it by cosine, or decompress it for another metric`);
  return asked;
}

/** The k nearest neighbours of each of `queries` over the vectors of the .vlc file `index`. */
export async function search(index: VlcInput, queries: VectorsInput, o: SearchOptions = {}): Promise<SearchResult> {
  if (index === '-' && queries === '-') throw new UsageError('only one of the index and --queries can be stdin (-)');
  const k = o.k ?? 10;
  if (!Number.isInteger(k) || k < 1) throw new UsageError(`-k must be a whole number of at least 1 (got ${k})`);
  const progress = o.progress ?? silentReporter;
  if (o.exhaustive && o.nprobe !== undefined)
    throw new UsageError('--exhaustive ranks every decoded vector, --nprobe tunes the CPU index search: drop one of them');
  let gpu: OpenedKnn | undefined;
  let gpuOpening: Promise<OpenedKnn | undefined> | undefined;
  let opened: { file: VlcFile; close(): void } | undefined;
  try {
    // The GPU opens while a large file's checksums run on worker threads; its errors come after
    // the file's and the queries'.
    gpuOpening = exhaustiveOn(o.device ?? 'auto', { k, nprobe: o.nprobe, gpu: o.gpu ?? 0 });
    gpuOpening.catch(() => {}); // awaited below
    // The file is read where it lies, its codes a block of rows at a time: the exhaustive search
    // and the index search (search/block-scan.ts) on the CPU; on a GPU the codes go up block by
    // block (ec's blocks' bytes, decoded on the device alone: backend/cuda/decode.ts).
    const reading = vlcOnDiskOf(index, progress);
    reading.catch(() => {}); // awaited below
    opened = await reading;
    const { file } = opened;
    const qs = await vectorsOf(queries, o, progress);
    const { n, d } = file.manifest;
    if (qs.d !== d) throw new UsageError(`queries have ${qs.d} dimensions but ${nameOf(index)} holds ${d}-dimensional vectors`);
    if (k > n) throw new UsageError(`-k ${k} is more than the ${n} vectors in ${nameOf(index)}; use at most ${n}`);
    const metric = searchMetric(file, o.metric, nameOf(index));
    gpu = await gpuOpening;
    const onCpu = o.exhaustive === true && !gpu;
    const t0 = performance.now();
    let res: Neighbours;
    let nprobe: number | null = null;
    if (gpu || onCpu) {
      // ip / cosine: the vectors decoded on the host, ranked on the k-NN over one more dimension (search/metric.ts).
      res = await exhaustive(file, qs, k, gpu ?? { knn: cpuKnn, label: 'the CPU' }, progress, metric);
    } else {
      prewarmKnn(); // the CPU's workers start while the index is built
      const built = vlcSearchIndex(file, metric);
      nprobe = o.nprobe ?? defaultNprobe(built);
      res = await probed(built, qs, k, nprobe, progress);
    }
    const how = gpu || onCpu ? `exhaustive over the decoded vectors on ${gpu ? gpu.label : 'the CPU'}` : `probing at least ${nprobe} anchors`;
    log().debug({ queries: qs.n, seconds: (performance.now() - t0) / 1000 }, `search done (${how})`);
    // Ids are input row numbers: with rows dropped by --drop-invalid, a kept row's position is not its id.
    const dropped = file.manifest.input.droppedRows ?? [];
    if (dropped.length) for (let t = 0; t < res.ids.length; t++) if (res.ids[t] >= 0) res.ids[t] = inputRowId(res.ids[t], dropped);
    return { k, queries: qs.n, nprobe, metric, ids: res.ids, distances: reportedInPlace(metric, res.dists) };
  } finally {
    opened?.close();
    gpu ??= await gpuOpening?.catch(() => undefined); // opened, but an error came first
    await gpu?.close();
  }
}

/**
 * The GPU's exact k-NN when this search is to rank every decoded vector on it: device 'cuda', or
 * auto with a usable GPU — unless nprobe asks for the CPU's index search, or k is above what
 * the GPU keeps. Undefined: the CPU's index search.
 */
async function exhaustiveOn(device: DeviceChoice, o: { k: number; nprobe?: number; gpu: number | number[] }): Promise<OpenedKnn | undefined> {
  if (device === 'cpu') return undefined;
  if (o.nprobe !== undefined) {
    if (device === 'cuda') throw new UsageError('--nprobe tunes the CPU index search, --device cuda ranks every decoded vector on the GPU: drop one of them');
    return undefined;
  }
  if (o.k > GPU_KNN_MAX_K) {
    if (device === 'cuda') throw new UsageError(`-k ${o.k}: the GPU search keeps at most ${GPU_KNN_MAX_K} neighbours per query; use --device cpu`);
    return undefined;
  }
  const opened = await selectExactKnn({ device, gpu: o.gpu });
  if (opened.onGpu) return opened;
  await opened.close();
  return undefined;
}

/**
 * Exhaustive exact search of every query over every decoded vector (search/exhaustive.ts), the
 * queries a view of rows at a time: the base decoded a block of rows at a time (on a GPU, on the
 * device, its codes uploaded from the file a block at a time; on the CPU, on the host), each block
 * ranked for every query and the lists merged (ties: the lower id).
 */
async function exhaustive(file: VlcFile, qs: Dataset, k: number, gpu: Pick<OpenedKnn, 'knn' | 'label'>, progress: Reporter, metric: Metric): Promise<Neighbours> {
  const found = { ids: new Int32Array(qs.n * k), dists: new Float32Array(qs.n * k) };
  const per = pieceRows(qs.d, 'f32');
  const { n } = file.manifest;
  const searching = progress.step(`searching every decoded vector (${gpu.label})`, 'vectors', n * Math.ceil(qs.n / per));
  for (let q0 = 0, piece = 0; q0 < qs.n; q0 += per, piece++) {
    const q1 = Math.min(qs.n, q0 + per);
    const part = await searchDecoded(file, rowsF32(qs, q0, q1), q1 - q0, k, gpu.knn, (done) => searching.update(piece * n + done), metric);
    found.ids.set(part.ids, q0 * k);
    found.dists.set(part.dists, q0 * k);
  }
  searching.end();
  return found;
}

/** The CPU's index search (search/index.ts), the queries a view of rows at a time, the results in one array. */
async function probed(index: ReturnType<typeof vlcSearchIndex>, qs: Dataset, k: number, nprobe: number, progress: Reporter): Promise<Neighbours> {
  const found = { ids: new Int32Array(qs.n * k), dists: new Float32Array(qs.n * k) };
  const searching = progress.step('searching', 'queries', qs.n);
  const per = pieceRows(qs.d, 'f32');
  for (let q0 = 0; q0 < qs.n; q0 += per) {
    const q1 = Math.min(qs.n, q0 + per);
    const part = await searchCompressed(index, rowsF32(qs, q0, q1), q1 - q0, { k, nprobe, onProgress: (done) => searching.update(q0 + done) }, cpuKnn);
    found.ids.set(part.ids, q0 * k);
    found.dists.set(part.dists, q0 * k);
  }
  searching.end();
  return found;
}
