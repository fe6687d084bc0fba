// `vlc search <in.vlc> --queries <file> -k 10`: k nearest neighbours of each query over the
// compressed index (src/search/): on the CPU by probing the nearest anchors' lists; on a GPU
// (--device cuda, or auto with one and no --nprobe) by exhaustive exact search over every decoded
// vector (search/exhaustive.ts). Output on stdout: one JSON line per query,
// {"query": q, "ids": [...], "distances": [...]} (squared L2 to the reconstructions), or with
// --json a single object holding them all.
import type { Command } from 'commander';
import { cpuKnn, prewarmKnn } from '../backend/cpu/index.js';
import { UsageError } from '../errors.js';
import { pieceRows, rowsF32 } from '../vectors/dataset.js';
import { inputRowId } from '../vectors/row-ids.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import { log } from '../log.js';
import { defaultNprobe, searchCompressed, vlcSearchIndex } from '../search/index.js';
import { searchDecoded } from '../search/exhaustive.js';
import { selectExactKnn, type OpenedKnn } from '../backend/select.js';
import type { VlcFile } from '../io/vlc/format.js';
import type { Dataset } from '../vectors/dataset.js';
import type { Reporter } from '../log.js';
import type { DeviceChoice } from '../backend/select.js';
import type { Neighbours } from '../backend/types.js';
import { GPU_KNN_MAX_K } from '../backend/cuda/knn.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { jsonResult, roundFloats } from './json.js';
import { addExamples } from './help.js';
import {
  addDeviceOptions, addNprobeOption, addOutputOptions, applyVerbosity, effectiveDevice, parseInteger, type DeviceFlags, type OutputFlags,
} from './options.js';
import { progressFor, reportBytes } from './progress.js';
import { quoteName } from '../io/names.js';

interface SearchFlags extends InputFlags, OutputFlags, DeviceFlags {
  queries: string;
  k: number;
  nprobe?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('search')
    .description('k nearest neighbours of query vectors over a .vlc index (nearest anchors, then their vectors)')
    .argument('<in.vlc>', 'the .vlc index, or - for stdin')
    .requiredOption('--queries <file>', 'query vectors, any input format (- for stdin)')
    .option('-k <k>', 'neighbours per query', (v) => parseInteger('-k', v, 1), 10);
  addNprobeOption(cmd, 'CPU index search: visit at least this many nearest anchors (default: 1, or 8 with residuals); not with --device cuda');
  addInputOptions(cmd, 'the queries');
  addDeviceOptions(cmd);
  addOutputOptions(cmd, 'print one JSON object {schema, command, k, queries, nprobe (null: exhaustive), results: [{ids, distances}]} instead of JSON lines');
  addExamples(cmd, [
    ['vlc search emb.vlc --queries queries.npy -k 10', 'one JSON line per query: ids and distances (with a GPU: exhaustive over every decoded vector)'],
    ['vlc search emb.vlc --queries queries.npy -k 5 | jq -c .ids', 'a pipeline: only the ids'],
    ['vlc search emb.vlc --queries queries.npy --device cpu --nprobe 32 --json', 'the CPU index search, probing 32 anchors; one JSON object'],
  ]);
  cmd
    .action(async (vlcPath: string, o: SearchFlags) => {
      applyVerbosity(o);
      if (vlcPath === '-' && o.queries === '-') throw new UsageError('only one of the index and --queries can be stdin (-)');
      const progress = progressFor(o);
      let res: { ids: Int32Array; dists: Float32Array };
      let qs: Awaited<ReturnType<typeof readInputs>>;
      let nprobe: number | null;
      let dropped: readonly number[] = [];
      let gpu: OpenedKnn | undefined;
      let gpuOpening: Promise<OpenedKnn | undefined> | undefined;
      try {
        const reading = readVlc(vlcPath, reportBytes(progress, vlcPath), reportBytes(progress, vlcPath, 'checking'));
        reading.catch(() => {}); // awaited below
        // The GPU opens while a large file's checksums run on worker threads; its errors come after
        // the file's and the queries'.
        gpuOpening = exhaustiveOn(effectiveDevice(cmd, o), o);
        gpuOpening.catch(() => {}); // awaited below
        const file = await reading;
        dropped = file.manifest.input.droppedRows ?? [];
        qs = await readInputs(o.queries, { ...readOptionsFrom(o), onBytes: reportBytes(progress, o.queries) });
        progress.done();
        const { n, d } = file.manifest;
        if (qs.d !== d) throw new UsageError(`queries have ${qs.d} dimensions but ${quoteName(vlcPath)} holds ${d}-dimensional vectors`);
        if (o.k > n) throw new UsageError(`-k ${o.k} is more than the ${n} vectors in ${quoteName(vlcPath)}; use at most ${n}`);
        gpu = await gpuOpening;
        const t0 = performance.now();
        if (gpu) {
          nprobe = null;
          res = await exhaustive(file, qs, o.k, gpu, progress);
        } else {
          prewarmKnn(); // the CPU's workers start while the index is built
          const index = vlcSearchIndex(file);
          nprobe = o.nprobe ?? defaultNprobe(index);
          res = await probed(index, qs, o.k, nprobe, progress);
        }
        const how = gpu ? `exhaustive over the decoded vectors on ${gpu.label}` : `probing at least ${nprobe} anchors`;
        log().debug({ queries: qs.n, seconds: (performance.now() - t0) / 1000 }, `search done (${how})`);
      } finally {
        progress.done();
        gpu ??= await gpuOpening?.catch(() => undefined); // opened, but an error came first
        await gpu?.close();
      }
      // Ids are input row numbers: with rows dropped by --drop-invalid, a kept row's position is not its id.
      const rowOf = (q: number) => ({
        ids: Array.from(res.ids.subarray(q * o.k, (q + 1) * o.k), (i) => (dropped.length ? inputRowId(i, dropped) : i)),
        distances: Array.from(res.dists.subarray(q * o.k, (q + 1) * o.k)),
      });
      if (o.json) {
        const results = Array.from({ length: qs.n }, (_, q) => rowOf(q));
        process.stdout.write(JSON.stringify(jsonResult('search', { k: o.k, queries: qs.n, nprobe, results })) + '\n');
        return;
      }
      // JSON lines, written in blocks so a million queries do not build one giant string.
      for (let q0 = 0; q0 < qs.n; q0 += 1024) {
        let text = '';
        for (let q = q0; q < Math.min(qs.n, q0 + 1024); q++) text += JSON.stringify(roundFloats({ query: q, ...rowOf(q) })) + '\n';
        if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
      }
    });
}

/**
 * The GPU's exact k-NN when this search is to rank every decoded vector on it: --device cuda, or
 * auto with a usable GPU — unless --nprobe asks for the CPU's index search, or -k is above what
 * the GPU keeps. Undefined: the CPU's index search.
 */
async function exhaustiveOn(device: DeviceChoice, o: SearchFlags): Promise<OpenedKnn | undefined> {
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

/** Exhaustive exact search of every query over every decoded vector (search/exhaustive.ts), the queries a view of rows at a time. */
async function exhaustive(file: VlcFile, qs: Dataset, k: number, gpu: OpenedKnn, progress: Reporter): Promise<Neighbours> {
  const found = { ids: new Int32Array(qs.n * k), dists: new Float32Array(qs.n * k) };
  const per = pieceRows(qs.d, 'f32');
  const { n } = file.manifest;
  const searching = progress.step(`searching every decoded vector (${gpu.label})`, 'vectors', n * Math.ceil(qs.n / per));
  for (let q0 = 0, piece = 0; q0 < qs.n; q0 += per, piece++) {
    const q1 = Math.min(qs.n, q0 + per);
    const part = await searchDecoded(file, rowsF32(qs, q0, q1), q1 - q0, k, gpu.knn, (done) => searching.update(piece * n + done));
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
