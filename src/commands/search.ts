// `vlc search <in.vlc> --queries <file> -k 10`: k nearest neighbours of each query over the
// compressed index (src/search/). Output on stdout: one JSON line per query,
// {"query": q, "ids": [...], "distances": [...]} (squared L2 to the reconstructions), or with
// --json a single object holding them all.
import type { Command } from 'commander';
import { cpuKnn } from '../backend/cpu/index.js';
import { UsageError } from '../errors.js';
import { pieceRows, rowsF32 } from '../io/dataset.js';
import { readInputs } from '../io/shards.js';
import { readVlc } from '../io/vlc/file.js';
import { log } from '../log.js';
import { defaultNprobe, searchCompressed, vlcSearchIndex } from '../search/index.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { jsonResult } from './json.js';
import { addExamples } from './help.js';
import { addNprobeOption, addOutputOptions, applyVerbosity, parseInteger, type OutputFlags } from './options.js';
import { progressFor, reportBytes } from './progress.js';
import { quoteName } from '../io/names.js';

interface SearchFlags extends InputFlags, OutputFlags {
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
  addNprobeOption(cmd);
  addInputOptions(cmd, 'the queries');
  addOutputOptions(cmd, 'print one JSON object {schema, command, k, queries, nprobe, results: [{ids, distances}]} instead of JSON lines');
  addExamples(cmd, [
    ['vlc search emb.vlc --queries queries.npy -k 10', 'one JSON line per query: ids and distances'],
    ['vlc search emb.vlc --queries queries.npy -k 5 | jq -c .ids', 'a pipeline: only the ids'],
    ['vlc search emb.vlc --queries queries.npy --nprobe 32 --json', 'probe more anchors; one JSON object'],
  ]);
  cmd
    .action(async (vlcPath: string, o: SearchFlags) => {
      applyVerbosity(o);
      if (vlcPath === '-' && o.queries === '-') throw new UsageError('only one of the index and --queries can be stdin (-)');
      const progress = progressFor(o);
      let res: { ids: Int32Array; dists: Float32Array };
      let qs: Awaited<ReturnType<typeof readInputs>>;
      let nprobe: number;
      try {
        const file = await readVlc(vlcPath, reportBytes(progress, vlcPath), reportBytes(progress, vlcPath, 'checking'));
        qs = await readInputs(o.queries, { ...readOptionsFrom(o), onBytes: reportBytes(progress, o.queries) });
        progress.done();
        const { n, d } = file.manifest;
        if (qs.d !== d) throw new UsageError(`queries have ${qs.d} dimensions but ${quoteName(vlcPath)} holds ${d}-dimensional vectors`);
        if (o.k > n) throw new UsageError(`-k ${o.k} is more than the ${n} vectors in ${quoteName(vlcPath)}; use at most ${n}`);
        const t0 = performance.now();
        // The queries a view of rows at a time (any number of them), the results in one array.
        const index = vlcSearchIndex(file);
        nprobe = o.nprobe ?? defaultNprobe(index);
        const found = { ids: new Int32Array(qs.n * o.k), dists: new Float32Array(qs.n * o.k) };
        const searching = progress.step('searching', 'queries', qs.n);
        const per = pieceRows(d, 'f32');
        for (let q0 = 0; q0 < qs.n; q0 += per) {
          const q1 = Math.min(qs.n, q0 + per);
          const part = await searchCompressed(index, rowsF32(qs, q0, q1), q1 - q0, { k: o.k, nprobe, onProgress: (done) => searching.update(q0 + done) }, cpuKnn);
          found.ids.set(part.ids, q0 * o.k);
          found.dists.set(part.dists, q0 * o.k);
        }
        searching.end();
        res = found;
        log().debug({ queries: qs.n, seconds: (performance.now() - t0) / 1000 }, 'search done');
      } finally {
        progress.done();
      }
      const rowOf = (q: number) => ({
        ids: Array.from(res.ids.subarray(q * o.k, (q + 1) * o.k)),
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
        for (let q = q0; q < Math.min(qs.n, q0 + 1024); q++) text += JSON.stringify({ query: q, ...rowOf(q) }) + '\n';
        if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
      }
    });
}
