// `vlc eval <original> <in.vlc>`: how much a .vlc file lost — compression quality (error, cosine,
// recall of exact search over the decoded vectors) and, with --nprobe P, search quality (recall of
// `vlc search` probing P anchors) apart. Flags and the text report here; the measuring is
// evaluate() (api/evaluate.ts), whose result --json prints.
import type { Command } from 'commander';
import type { EvalResult } from '../api/evaluate.js';
import type { Metric } from '../api/options.js';
import { grouped, percent } from '../io/vlc/stats.js';
import { jsonResult } from './json.js';
import { addInputOptions, readOptionsFrom, type InputFlags } from './input-options.js';
import { addExamples } from './help.js';
import {
  addDeviceOptions, addMetricOption, addNprobeOption, addOutputOptions, addSeedOption, applyVerbosity, effectiveDevice, parseInteger, type DeviceFlags, type OutputFlags,
} from './options.js';
import { progressFor } from './progress.js';

interface EvalFlags extends InputFlags, OutputFlags, DeviceFlags {
  queries: number;
  seed: number;
  nprobe?: number;
  metric?: Metric;
}

export function register(program: Command): void {
  const cmd = program
    .command('eval')
    .description(
      'measure what a .vlc file lost against the original vectors: reconstruction error, cosine and recall@1/@10 of exact ' +
        'search over the decoded vectors; with --nprobe, the recall of `vlc search` (index probing) apart, as search quality',
    )
    .argument('<original>', 'the embedding file that was compressed, or its directory or quoted glob of shards (same reader options as for compress)')
    .argument('<in.vlc>', 'the .vlc file')
    .option('--queries <n>', 'number of original vectors sampled as queries for recall', (v) => parseInteger('--queries', v, 1), 1000);
  addSeedOption(cmd, 'seed of the query sample', 1);
  addNprobeOption(cmd, 'also measure search quality: recall of vlc search probing at least this many anchors per query (its default: 1, or 8 with residuals)');
  addMetricOption(cmd, "the neighbours of the recall figures by l2, ip (inner product) or cosine; default: the file's metric. A cosine file: cosine only");
  addInputOptions(cmd, 'the original');
  addDeviceOptions(cmd);
  addOutputOptions(cmd);
  addExamples(cmd, [
    ['vlc eval emb.npy emb.vlc', 'what compression cost: error, cosine, recall of exact search over the decoded vectors'],
    ['vlc eval emb.npy emb.vlc --nprobe 8 --queries 200', 'and search quality: recall of vlc search probing 8 anchors per query'],
    ['vlc eval emb.npy emb.vlc --nprobe 8 --json | jq \'{recall_at_10, search: .search.recall_at_10}\'', 'a pipeline: both recalls from the JSON'],
  ]);
  cmd
    .action(async (original: string, vlcPath: string, o: EvalFlags) => {
      applyVerbosity(o);
      const { evaluate } = await import('../api/evaluate.js'); // on use: see src/commands/index.ts
      const progress = progressFor(o);
      let out: EvalResult & { seconds: number };
      try {
        const device = effectiveDevice(cmd, o);
        out = await evaluate(original, vlcPath, { ...readOptionsFrom(o), queries: o.queries, seed: o.seed, nprobe: o.nprobe, metric: o.metric, device, gpu: o.gpu, progress });
      } finally {
        progress.done();
      }
      process.stdout.write(o.json ? JSON.stringify(jsonResult('eval', out)) + '\n' : evalText(out));
    });
}

function evalText(r: EvalResult & { seconds: number }): string {
  const f = (v: number | null, digits = 4) => (v === null ? 'n/a' : v.toFixed(digits));
  const at = `recall@${r.k}`.padEnd(17);
  return (
    [
      `file             ${grouped(r.n)} x ${r.d}, m = ${grouped(r.m)} anchors, residuals ${r.residual}; ` +
        `${grouped(r.bytes)} bytes = ${r.bytes_per_vector.toFixed(2)} bytes/vector, ${percent(r.ratio_f32)} of f32`,
      `compression quality (exact search${r.metric === 'l2' ? '' : ` by ${r.metric === 'ip' ? 'inner product' : 'cosine'}`} over the decoded vectors vs over the originals, ${grouped(r.queries)} sampled queries)`,
      `  mse            ${r.mse.toPrecision(6)} (mean squared L2 error per vector; ${r.mse_per_dim.toPrecision(4)} per coordinate)`,
      `  relative error ${f(r.relative_error)} (||X - X'|| / ||X||)`,
      `  mean cosine    ${f(r.mean_cosine, 5)}`,
      `  recall@1       ${f(r.recall_at_1)}`,
      `  ${at.slice(0, 15)}${f(r.recall_at_10)}`,
      ...(r.search
        ? [
            `search quality (vlc search: index probing with nprobe ${r.search.nprobe}, same queries)`,
            `  recall@1       ${f(r.search.recall_at_1)}`,
            `  ${at.slice(0, 15)}${f(r.search.recall_at_10)}`,
          ]
        : ['search quality   not measured (--nprobe P measures vlc search probing P anchors per query)']),
      `time             ${r.seconds.toFixed(2)} s`,
    ].join('\n') + '\n'
  );
}
