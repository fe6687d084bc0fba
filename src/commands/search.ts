// `vlc search <in.vlc> --queries <file> -k 10`: k nearest neighbours of each query over the
// compressed index — search() (api/search.ts): on the CPU by probing the nearest anchors' lists, on
// a GPU (--device cuda, or auto with one and no --nprobe) exhaustive over every decoded vector, and
// so on the CPU with --exhaustive (the file read a block of rows at a time).
// Output on stdout: one JSON line per query, {"query": q, "ids": [...], "distances": [...]}
// (squared L2 to the reconstructions; under the metric ip −⟨q, x⟩, under cosine 1 − cos: ascending
// always), or with --json a single object holding them all.
import type { Command } from 'commander';
import type { SearchResult } from '../api/search.js';
import type { Metric } from '../api/options.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { jsonResult, roundFloats } from './json.js';
import { addExamples } from './help.js';
import {
  addDeviceOptions, addMetricOption, addNprobeOption, addOutputOptions, applyVerbosity, effectiveDevice, parseInteger, type DeviceFlags, type OutputFlags,
} from './options.js';
import { progressFor } from './progress.js';

interface SearchFlags extends InputFlags, OutputFlags, DeviceFlags {
  queries: string;
  k: number;
  nprobe?: number;
  exhaustive?: boolean;
  metric?: Metric;
}

export function register(program: Command): void {
  const cmd = program
    .command('search')
    .description('k nearest neighbours of query vectors over a .vlc index (nearest anchors, then their vectors)')
    .argument('<in.vlc>', 'the .vlc index, or - for stdin')
    .requiredOption('--queries <file>', 'query vectors, any input format (- for stdin)')
    .option('-k <k>', 'neighbours per query', (v) => parseInteger('-k', v, 1), 10);
  addNprobeOption(cmd, 'CPU index search: visit at least this many nearest anchors (default: 1, or 8 with residuals); not with --device cuda');
  cmd.option('--exhaustive', 'rank every decoded vector (what a GPU does) also on the CPU, reading the file a block of rows at a time instead of holding it; not with --nprobe');
  addMetricOption(cmd, "rank by l2 (distances: squared L2), ip (-<q, x>) or cosine (1 - cos); default: the file's metric (`vlc info`). A cosine file is searched by cosine only");
  addInputOptions(cmd, 'the queries');
  addDeviceOptions(cmd, { gpuList: 'the rows split over them, the same results as one' });
  addOutputOptions(cmd, 'print one JSON object {schema, command, k, queries, nprobe (null: exhaustive), metric, results: [{ids, distances}]} instead of JSON lines');
  addExamples(cmd, [
    ['vlc search emb.vlc --queries queries.npy -k 10', 'one JSON line per query: ids and distances (with a GPU: exhaustive over every decoded vector)'],
    ['vlc search emb.vlc --queries queries.npy -k 5 | jq -c .ids', 'a pipeline: only the ids'],
    ['vlc search emb.vlc --queries queries.npy --device cpu --nprobe 32 --json', 'the CPU index search, probing 32 anchors; one JSON object'],
  ]);
  cmd
    .action(async (vlcPath: string, o: SearchFlags) => {
      applyVerbosity(o);
      const { search } = await import('../api/search.js'); // on use: see src/commands/index.ts
      const progress = progressFor(o);
      let res: SearchResult;
      try {
        res = await search(vlcPath, o.queries, { ...readOptionsFrom(o), k: o.k, nprobe: o.nprobe, exhaustive: o.exhaustive, metric: o.metric, device: effectiveDevice(cmd, o), gpu: o.gpu, progress });
      } finally {
        progress.done();
      }
      const rowOf = (q: number) => ({
        ids: Array.from(res.ids.subarray(q * o.k, (q + 1) * o.k)),
        distances: Array.from(res.distances.subarray(q * o.k, (q + 1) * o.k)),
      });
      if (o.json) {
        const results = Array.from({ length: res.queries }, (_, q) => rowOf(q));
        process.stdout.write(JSON.stringify(jsonResult('search', { k: res.k, queries: res.queries, nprobe: res.nprobe, metric: res.metric, results })) + '\n');
        return;
      }
      // JSON lines, written in blocks so a million queries do not build one giant string.
      for (let q0 = 0; q0 < res.queries; q0 += 1024) {
        let text = '';
        for (let q = q0; q < Math.min(res.queries, q0 + 1024); q++) text += JSON.stringify(roundFloats({ query: q, ...rowOf(q) })) + '\n';
        if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
      }
    });
}
