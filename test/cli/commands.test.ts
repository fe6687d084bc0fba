// The commands end to end through `node bin/vlc.js`, as a user runs them: compress → info → eval →
// decompress → search on the demo fixture, JSON on stdout, stdout/stderr separation, determinism,
// pipelines through stdin/stdout, EPIPE, and Ctrl-C.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeVlc, encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { readDataset } from '../../dist/io/read.js';
import { f32ToF16, viewAll } from '../../dist/vectors/dataset.js';
import { BIN, DEMO, clustered, npyBytes, readNpy, sh, tempDir, vlc, writeNpy } from './helpers.js';
import { rng } from '../rng.js';

const ITERS = '8'; // keep the suite fast; quality is measured elsewhere
let dir: string;
let model: string; // demo compressed once with --json
let stats: Record<string, unknown>;

beforeAll(() => {
  dir = tempDir('cmd');
  model = path.join(dir, 'demo.vlc');
  // Anchors alone (--residual none): the anchor-only paths of info, eval, decompress and search.
  const r = vlc(['compress', DEMO, '-o', model, '--iters', ITERS, '--device', 'cpu', '--residual', 'none', '--json']);
  expect(r.code, r.stderr).toBe(0);
  stats = JSON.parse(r.stdout);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('compress', () => {
  it('prints one JSON object with the figures, and writes a valid file of that size', () => {
    expect(stats).toMatchObject({ schema: 1, command: 'compress', n: 2000, d: 64, m: 128, device: 'cpu', anchor_dtype: 'f16', assignment_width: 'u8' });
    for (const k of ['energy', 'mse', 'relative_error', 'mean_cosine', 'recall_at_10', 'iterations', 'train_seconds', 'iter_ms_median', 'seed_ratio', 'ratio_f32', 'ratio_f16', 'bytes_per_vector', 'bytes'])
      expect(typeof stats[k], k).toBe('number');
    expect((stats.iterations as number) + (stats.init_iterations as number)).toBeLessThanOrEqual(Number(ITERS));
    expect(stats.seed_ratio).toBeCloseTo((128 * 64 * 2 + 2000 * 4) / (2000 * 64 * 4), 12);
    const bytes = fs.statSync(model).size;
    expect(stats.bytes).toBe(bytes);
    expect(stats.bytes_per_vector).toBe(bytes / 2000);
    expect(stats.ratio_f32).toBeCloseTo(bytes / (2000 * 64 * 4), 12);
    expect(stats.ratio_f16).toBeCloseTo(bytes / (2000 * 64 * 2), 12);
    expect(stats.quality_vectors).toBe(2000); // small input: measured on every vector
    expect(stats.choice).toBeNull(); // --residual fixed it
    const f = decodeVlc(fs.readFileSync(model));
    // The JSON rounds its floats to 10 significant digits (commands/json.ts); the manifest keeps them whole.
    expect(f.manifest.training.energy).toBeCloseTo(stats.energy, 9);
    expect(f.manifest.training.energy.toPrecision(10)).toBe(stats.energy.toPrecision(10));
    expect(f.manifest.quality!.mse.toPrecision(10)).toBe(stats.mse.toPrecision(10));
    expect(f.manifest.quality!.relativeError!.toPrecision(10)).toBe(stats.relative_error.toPrecision(10));
    expect(f.manifest.quality!.meanCosine!.toPrecision(10)).toBe(stats.mean_cosine.toPrecision(10));
    expect(f.manifest.seed).toBe(1234);
  });

  it('default m is the largest power of two <= 4*sqrt(n): 128 for the 2000-vector demo', () => {
    expect(stats.m).toBe(2 ** Math.floor(Math.log2(4 * Math.sqrt(2000))));
  });

  it('is reproducible: same input and seed give the same bytes, to a file or to stdout', () => {
    const again = path.join(dir, 'again.vlc');
    expect(vlc(['compress', DEMO, '-o', again, '--iters', ITERS, '--device', 'cpu', '--residual', 'none', '-q']).code).toBe(0);
    const a = fs.readFileSync(model);
    expect(fs.readFileSync(again).equals(a)).toBe(true);
    const piped = vlc(['compress', DEMO, '-o', '-', '--iters', ITERS, '--device', 'cpu', '--residual', 'none', '-q']);
    expect(piped.code).toBe(0);
    expect(piped.stdoutBytes.equals(a)).toBe(true);
    const other = vlc(['compress', DEMO, '-o', '-', '--iters', ITERS, '--device', 'cpu', '--residual', 'none', '-q', '--seed', '7']);
    expect(other.stdoutBytes.equals(a)).toBe(false);
  });

  it('-o - puts only the .vlc on stdout; --stats FILE gets the JSON', () => {
    const statsFile = path.join(dir, 'stats.json');
    const r = vlc(['compress', DEMO, '-o', '-', '--iters', '3', '--device', 'cpu', '--anchors', '300', '--stats', statsFile]);
    expect(r.code, r.stderr).toBe(0);
    const f = decodeVlc(r.stdoutBytes);
    expect(f.manifest.m).toBe(300);
    expect(f.manifest.assignmentWidth).toBe('u16');
    const s = JSON.parse(fs.readFileSync(statsFile, 'utf8'));
    expect(s.m).toBe(300);
    expect(s.bytes).toBe(r.stdoutBytes.length);
    expect(r.stderr).toMatch(/stdout: [\d.]+ bytes\/vector = [\d.]+% of f32 .*relative error [\d.]+, cosine [\d.]+.*2,000 x 64, 300 anchors/); // the summary goes to stderr
  });

  it('-q leaves stderr empty; --anchor-dtype f32 doubles the anchor bytes', () => {
    const out = path.join(dir, 'f32.vlc');
    const r = vlc(['compress', DEMO, '-o', out, '--iters', '2', '--device', 'cpu', '-q', '--anchor-dtype', 'f32', '--anchors', '16']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('');
    const f = decodeVlc(fs.readFileSync(out));
    expect(f.sections.find((s) => s.name === 'anchors')!.bytes).toBe(16 * 64 * 4);
  });
});

describe('info', () => {
  it('--json agrees with compress and the file', () => {
    const r = vlc(['info', model, '--json']);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({
      n: 2000,
      d: 64,
      m: 128,
      schema: 1,
      command: 'info',
      energy: stats.energy,
      iterations: stats.iterations,
      init_iterations: stats.init_iterations,
      device: 'cpu',
      bytes: stats.bytes,
      bytes_per_vector: stats.bytes_per_vector,
      seed_ratio: stats.seed_ratio,
      ratio_f32: stats.ratio_f32,
      ratio_f16: stats.ratio_f16,
      mse: stats.mse,
      relative_error: stats.relative_error,
      mean_cosine: stats.mean_cosine,
      recall_at_10: stats.recall_at_10,
      format_version: 2,
    });
    expect(info.sections).toEqual([
      { name: 'anchors', bytes: 128 * 64 * 2 },
      { name: 'assignments', bytes: 2000 },
    ]);
    expect(r.stderr).toBe('');
  });

  it('prints the sizes, ratios and training stats as text', () => {
    const r = vlc(['info', model]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/n = 2,000, d = 64/);
    expect(r.stdout).toMatch(/m = 128 anchors \(f16\), u8 assignments/);
    expect(r.stdout).toMatch(/size +[\d.]+ bytes\/vector \(f32: 256\), [\d.]+% of f32, [\d.]+% of f16 .*residuals not counted: 4\.76%/);
    expect(r.stdout).toMatch(/quality +relative error [\d.]+, mean cosine [\d.]+, mse .* measured on every vector; recall@10 [\d.]+/);
    expect(r.stdout).toMatch(/training\s+energy \d/);
  });
});

describe('sections from a newer vlc', () => {
  it('an unknown optional section is skipped with a warning on stderr; the file still works', () => {
    const f = decodeVlc(fs.readFileSync(model));
    const withExtra = path.join(dir, 'extra.vlc');
    fs.writeFileSync(
      withExtra,
      encodeVlcBytes({
        manifest: f.manifest,
        anchors: f.anchors,
        assignments: f.assignments,
        extra: [{ tag: 'PQ16', name: 'product-codes', required: false, payload: new Uint8Array(16) }],
      }),
    );
    const r = vlc(['info', withExtra, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/skipping unknown section 'product-codes' \(type 'PQ16'\)/);
    expect(JSON.parse(r.stdout).m).toBe(128);
  });
});

describe('eval', () => {
  it('--json: MSE matches the training energy and compress\'s figures, recall within [0, 1]', () => {
    const r = vlc(['eval', DEMO, model, '--json', '--queries', '200']);
    expect(r.code, r.stderr).toBe(0);
    const e = JSON.parse(r.stdout);
    expect(e).toMatchObject({ schema: 1, command: 'eval', queries: 200, k: 10, bytes: stats.bytes, ratio_f32: stats.ratio_f32 });
    // compress measured the same file on every vector: the same reconstruction figures.
    expect(e.mse).toBeCloseTo(stats.mse as number, 12);
    expect(e.mean_cosine).toBeCloseTo(stats.mean_cosine as number, 12);
    // f16 anchors move the reconstruction a little from the f32 anchors the energy was measured on.
    expect(Math.abs(e.mse - (stats.energy as number)) / (stats.energy as number)).toBeLessThan(1e-3);
    expect(e.relative_error).toBeGreaterThan(0);
    expect(e.relative_error).toBeLessThan(1);
    expect(e.mean_cosine).toBeGreaterThan(0.5);
    expect(e.mean_cosine).toBeLessThanOrEqual(1);
    for (const v of [e.recall_at_1, e.recall_at_10]) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
    expect(e.search).toBeNull(); // search quality only with --nprobe
    // 128 anchors over 2000 clustered vectors: neighbours mostly share the anchor.
    expect(e.recall_at_10).toBeGreaterThan(0.2);
    // Same seed, same sample, same figures.
    const again = JSON.parse(vlc(['eval', DEMO, model, '--json', '--queries', '200']).stdout);
    expect(again.recall_at_10).toBe(e.recall_at_10);
  });
});

describe('decompress', () => {
  it('rebuilds every vector as its anchor (npy, f32 by default for f32 input)', () => {
    const out = path.join(dir, 'rec.npy');
    expect(vlc(['decompress', model, '-o', out, '-q']).code).toBe(0);
    const { shape, descr, data } = readNpy(out);
    expect(shape).toEqual([2000, 64]);
    expect(descr).toBe('<f4');
    const f = decodeVlc(fs.readFileSync(model));
    for (const i of [0, 1, 999, 1999]) {
      const a = f.assignments[i];
      expect(Array.from((data as Float32Array).subarray(i * 64, (i + 1) * 64))).toEqual(Array.from(f.anchors.subarray(a * 64, (a + 1) * 64)));
    }
  });

  it('--dtype f16, --anchors, --assignments (npy and txt)', () => {
    const f = decodeVlc(fs.readFileSync(model));
    const half = path.join(dir, 'rec16.npy');
    expect(vlc(['decompress', model, '-o', half, '--dtype', 'f16']).code).toBe(0);
    expect(readNpy(half).descr).toBe('<f2');
    const anchors = path.join(dir, 'anchors.npy');
    expect(vlc(['decompress', model, '-o', anchors, '--anchors']).code).toBe(0);
    expect(readNpy(anchors).shape).toEqual([128, 64]);
    const ids = path.join(dir, 'ids.npy');
    expect(vlc(['decompress', model, '-o', ids, '--assignments']).code).toBe(0);
    const got = readNpy(ids);
    expect(got.descr).toBe('<u1');
    expect(Array.from(got.data)).toEqual(Array.from(f.assignments));
    const txt = vlc(['decompress', model, '-o', '-', '--assignments', '--format', 'txt']);
    expect(txt.stdout.trimEnd().split('\n').map(Number)).toEqual(Array.from(f.assignments));
  });

  it('keeps f16 input f16 by default (fvecs, which is f32 only, excepted)', async () => {
    const demo = viewAll(await readDataset(DEMO)) as Float32Array;
    const half = Uint16Array.from(demo, (v) => f32ToF16(v));
    const input = path.join(dir, 'half.npy');
    fs.writeFileSync(input, npyBytes('<f2', [2000, 64], new Uint8Array(half.buffer)));
    const out = path.join(dir, 'half.vlc');
    const r = vlc(['compress', input, '-o', out, '--iters', '2', '--anchors', '16', '--device', 'cpu', '--json', '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).input_dtype).toBe('f16');
    expect(vlc(['decompress', out, '-o', path.join(dir, 'half-rec.npy')]).code).toBe(0);
    expect(readNpy(path.join(dir, 'half-rec.npy')).descr).toBe('<f2');
    expect(vlc(['decompress', out, '-o', path.join(dir, 'half-rec.fvecs')]).code).toBe(0);
    expect(fs.statSync(path.join(dir, 'half-rec.fvecs')).size).toBe(2000 * (4 + 64 * 4));
  });

  it('writes Arrow and fvecs that vlc reads back', async () => {
    for (const ext of ['arrow', 'fvecs']) {
      const out = path.join(dir, `rec.${ext}`);
      const r = vlc(['decompress', model, '-o', out]);
      expect(r.code, r.stderr).toBe(0);
      const ds = await readDataset(out);
      expect([ds.n, ds.d]).toEqual([2000, 64]);
    }
  });
});

describe('search', () => {
  it('prints one JSON line per query with k ids and ascending distances', () => {
    const q = writeNpy(path.join(dir, 'q.npy'), clustered(5, 64, 3), 5, 64);
    const r = vlc(['search', model, '--queries', q, '-k', '7']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    lines.forEach((l, i) => {
      expect(l.query).toBe(i);
      expect(l.ids).toHaveLength(7);
      expect(new Set(l.ids).size).toBe(7);
      for (const id of l.ids) expect(id >= 0 && id < 2000).toBe(true);
      for (let j = 1; j < 7; j++) expect(l.distances[j]).toBeGreaterThanOrEqual(l.distances[j - 1]);
    });
    const all = JSON.parse(vlc(['search', model, '--queries', q, '-k', '7', '--json']).stdout);
    expect(all).toMatchObject({ schema: 1, command: 'search', k: 7, queries: 5, nprobe: 1 });
    expect(all.results.map((x: { ids: number[] }) => x.ids)).toEqual(lines.map((l) => l.ids));
  });

  it('finds a stored vector among the vectors of its own anchor', () => {
    const r = vlc(['search', model, '--queries', DEMO, '-k', '1', '--json']);
    const f = decodeVlc(fs.readFileSync(model));
    const { results } = JSON.parse(r.stdout);
    // The first hit is in the query's own anchor for almost every vector (its anchor is nearest).
    let same = 0;
    results.forEach((x: { ids: number[] }, i: number) => (same += f.assignments[x.ids[0]] === f.assignments[i] ? 1 : 0));
    expect(same / 2000).toBeGreaterThan(0.95);
  });
});

describe('--residual int8 / int4', () => {
  it('stores per-vector residuals: far lower error, high recall, and decompress reproduces it', async () => {
    const results: Record<string, { bytes: number; mse: number; recall10: number }> = {};
    for (const mode of ['int8', 'int4']) {
      const out = path.join(dir, `res-${mode}.vlc`);
      const r = vlc(['compress', DEMO, '-o', out, '--iters', ITERS, '--device', 'cpu', '--residual', mode, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout);
      expect(s.residual).toBe(mode);
      expect(s.energy).toBe(stats.energy); // same anchors as without residuals
      expect(s.mse).toBeLessThan((stats.energy as number) / 20);
      const info = JSON.parse(vlc(['info', out, '--json']).stdout);
      expect(info).toMatchObject({ residual: mode, mse: s.mse, bytes: s.bytes });
      // d f32 scales, then one byte (int8) or half a byte (int4) per coordinate.
      expect(info.sections[2]).toEqual({ name: 'residuals', bytes: 4 * 64 + 2000 * (mode === 'int8' ? 64 : 32) });
      const e = JSON.parse(vlc(['eval', DEMO, out, '--json', '--queries', '200', '--nprobe', '8']).stdout);
      expect(Math.abs(e.mse - s.mse) / s.mse).toBeLessThan(1e-9);
      // search quality apart: probing 8 of 128 anchors finds at most what exact search over the decoded vectors finds
      expect(e.search.nprobe).toBe(8);
      expect(e.search.recall_at_10).toBeLessThanOrEqual(e.recall_at_10);
      expect(e.search.recall_at_10).toBeGreaterThan(0.5);
      results[mode] = { bytes: s.bytes, mse: s.mse, recall10: e.recall_at_10 };
    }
    expect(results.int8.recall10).toBeGreaterThan(0.95);
    expect(results.int4.recall10).toBeGreaterThan(0.8);
    expect(results.int8.mse).toBeLessThan(results.int4.mse);
    // decompress gives anchor + residual: close to the original vectors.
    const rec = path.join(dir, 'res.npy');
    expect(vlc(['decompress', path.join(dir, 'res-int8.vlc'), '-o', rec]).code).toBe(0);
    const orig = await readDataset(DEMO);
    const back = readNpy(rec).data as Float32Array;
    let worst = 0;
    for (let i = 0; i < back.length; i++) worst = Math.max(worst, Math.abs(back[i] - (viewAll(orig) as Float32Array)[i]));
    expect(worst).toBeLessThan(0.01);
  });
});

// Each case runs up to three compressions with codebook training: more time than the default.
describe('--residual pq', { timeout: 240_000 }, () => {
  // 4-bit codes keep the suite fast (16 centroids a subspace); the 8-bit path shares all but the packing.
  const pqFile = () => path.join(dir, 'pq-b.vlc');

  it('--bytes B: the largest M whose file fits, decoded as measured, searchable, and damage is exit 2', () => {
    const r = vlc(['compress', DEMO, '-o', pqFile(), '--iters', ITERS, '--device', 'cpu', '--residual', 'pq', '--pq-bits', '4', '--bytes', '13', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ residual: 'pq', pq_bits: 4 });
    expect(s.energy).toBe(stats.energy); // same anchors as without residuals
    expect(s.bytes_per_vector).toBeLessThanOrEqual(13);
    // One subspace more would not have fitted: it costs at most a byte per vector (two 4-bit codes a
    // byte), and the size is judged before training with the manifest's longest numbers, an upper
    // bound at most 0.1 byte per vector above the file here.
    expect(13 - s.bytes_per_vector).toBeLessThan(1.1);
    expect(s.pq_subspaces).toBeGreaterThan(1);
    expect(s.mse).toBeLessThan((stats.energy as number) * 0.9);
    const info = JSON.parse(vlc(['info', pqFile(), '--json']).stdout);
    expect(info).toMatchObject({ residual: 'pq', mse: s.mse, bytes: s.bytes, format_version: 2 });
    expect(vlc(['info', pqFile()]).stdout).toMatch(/residuals pq/);
    const e = JSON.parse(vlc(['eval', DEMO, pqFile(), '--json', '--queries', '200']).stdout);
    expect(Math.abs(e.mse - s.mse) / s.mse).toBeLessThan(1e-9);
    expect(e.recall_at_10).toBeGreaterThan(0.3);
    expect(vlc(['decompress', pqFile(), '-o', path.join(dir, 'pq.npy')]).code).toBe(0);
    expect(vlc(['search', pqFile(), '--queries', DEMO, '-k', '3', '--json']).code).toBe(0);

    // A flipped bit in the codes, a cut file: one line, exit 2.
    const bytes = fs.readFileSync(pqFile());
    const flipped = Buffer.from(bytes);
    flipped[bytes.length - 100] ^= 4;
    fs.writeFileSync(path.join(dir, 'pq-bad.vlc'), flipped);
    const bad = vlc(['info', path.join(dir, 'pq-bad.vlc')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^vlc: .*pq-bad\.vlc: section 'residuals' checksum mismatch: file is corrupted$/);
    fs.writeFileSync(path.join(dir, 'pq-cut.vlc'), bytes.subarray(0, bytes.length - 1000));
    const cut = vlc(['eval', DEMO, path.join(dir, 'pq-cut.vlc')]);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/truncated in section 'residuals'/);
  });

  it('--pq M: more subspaces, lower error; same seed, same bytes', () => {
    const run = (M: string, out: string) =>
      vlc(['compress', DEMO, '-o', out, '--iters', ITERS, '--device', 'cpu', '--residual', 'pq', '--pq-bits', '4', '--pq', M, '--json']);
    const small = run('2', path.join(dir, 'pq2.vlc'));
    const large = run('8', path.join(dir, 'pq8.vlc'));
    const again = run('2', path.join(dir, 'pq2-again.vlc'));
    for (const x of [small, large, again]) expect(x.code, x.stderr).toBe(0);
    expect(JSON.parse(large.stdout).mse).toBeLessThan(JSON.parse(small.stdout).mse);
    expect(fs.readFileSync(path.join(dir, 'pq2.vlc')).equals(fs.readFileSync(path.join(dir, 'pq2-again.vlc')))).toBe(true);
  });

  it('--pq-dims k: codes on k principal directions, format version 4, info/eval/decompress/search read it; same seed, same bytes', () => {
    const out = path.join(dir, 'pqd.vlc');
    const run = (file: string) =>
      vlc(['compress', DEMO, '-o', file, '--iters', ITERS, '--device', 'cpu', '--residual', 'pq', '--pq', '5', '--pq-dims', '17', '--json']);
    const r = run(out);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({ residual: 'pq', pq_subspaces: 5, pq_bits: 8, pq_dims: 17 });
    expect(r.stderr).toMatch(/pq 5x8 on 17 directions residuals/);
    const info = JSON.parse(vlc(['info', out, '--json']).stdout);
    expect(info).toMatchObject({ residual: 'pq', format_version: 4, mse: s.mse, pq: { subspaces: 5, bits: 8, code_bytes: 5, dims: 17 } });
    expect(vlc(['info', out]).stdout).toMatch(/on 17 principal directions/);
    const e = JSON.parse(vlc(['eval', DEMO, out, '--json', '--queries', '200']).stdout);
    expect(e.mse).toBeCloseTo(s.mse, 6);
    expect(vlc(['decompress', out, '-o', path.join(dir, 'pqd.npy')]).code).toBe(0);
    expect(vlc(['search', out, '--queries', DEMO, '-k', '3', '--json']).code).toBe(0);
    expect(run(path.join(dir, 'pqd-again.vlc')).code).toBe(0);
    expect(fs.readFileSync(out).equals(fs.readFileSync(path.join(dir, 'pqd-again.vlc')))).toBe(true);
  });

  it.each([
    [['--pq-dims', '8'], '--pq-dims applies to product-quantized residuals; add --residual pq'],
    [['--residual', 'int4', '--pq-dims', '8'], '--pq-dims applies to product-quantized residuals; add --residual pq'],
    [['--residual', 'pq', '--pq-dims', '65'], '--pq-dims 65: the vectors have d = 64 dimensions, so at most 64 directions'],
    [['--residual', 'pq', '--pq-dims', '0'], '--pq-dims must be at least 1 (got 0)'],
    [['--residual', 'pq', '--pq', '9', '--pq-dims', '8'], '--pq 9 subspaces need at least as many dimensions, but --pq-dims is 8: lower --pq or raise --pq-dims'],
    [['--residual', 'pq', '--pq-dims', '60', '--bytes', '5'], '--bytes 5: the smallest pq file (M = 1, 60 directions) takes'],
    [['--pq', '8'], '--pq applies to product-quantized residuals; add --residual pq'],
    [['--bytes', '20', '--residual', 'int8'], '--residual int8 fixes the codec and --bytes chooses one (or, with --residual pq, bits or ec, its size): give one of them'],
    [['--pq-bits', '4'], '--pq-bits applies to product-quantized residuals; add --residual pq'],
    [['--residual', 'pq', '--pq', '8', '--bytes', '20'], '--pq M and --bytes B both choose the number of subspaces; give one'],
    [['--residual', 'pq', '--pq', '65'], '--pq 65: the vectors have d = 64 dimensions, so at most 64 subspaces'],
    [['--residual', 'pq', '--pq', '0'], '--pq must be at least 1 (got 0)'],
    [['--residual', 'pq', '--bytes', 'x'], "--bytes must be a positive number of bytes per vector (got 'x')"],
    [['--residual', 'pq', '--bytes', '5'], '--bytes 5: the smallest pq file (M = 1) takes'],
  ])('%j is a usage error', (args, message) => {
    const r = vlc(['compress', DEMO, '-o', path.join(dir, 'never.vlc'), '--iters', '1', '--device', 'cpu', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(fs.existsSync(path.join(dir, 'never.vlc'))).toBe(false);
  });
});

describe('--quality, --bytes (and the default: --quality 0.9)', () => {
  it('by default (= --quality 0.9), bisects by size, plans ec at the error that reaches 0.9 and narrows it to 2 %, and says so', () => {
    const r = vlc(['compress', DEMO, '-o', path.join(dir, 'q.vlc'), '--iters', ITERS, '--device', 'cpu', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.choice).toMatchObject({ goal: 'quality', target: 0.9, met: true, sample: 2000, queries: 1000 });
    type M = { residual: string; bits_code_bytes: number | null; bytes_per_vector: number; recall_at_10: number; recall_at_10_all: number; recall_at_10_all_se: number };
    const measured: M[] = s.choice.measured;
    // the choice is made on the point figure over all n (its standard error reported beside it)
    const lower = (c: M) => c.recall_at_10_all;
    // The demo's 64 dimensions: between ids alone (~10 B) and int4 (32 code bytes), the entropy-coded residuals at the step
    // the search planned keep 0.9 in fewer bytes than the bits codec at any size: the file is ec.
    expect(s.residual).toBe('ec');
    expect(s.codec).toMatch(/^ec [\d.]+B$/);
    // the chosen plan is the smallest measured that meets the goal
    const chosen = measured.filter((c) => lower(c) >= 0.9).reduce((a, c) => (c.bytes_per_vector < a.bytes_per_vector ? c : a));
    expect(chosen.residual).toBe('ec');
    // its size an estimate (ec is variable-rate): the file within 1 % of it
    expect(Math.abs(s.bytes_per_vector / chosen.bytes_per_vector - 1)).toBeLessThan(0.01);
    // n <= 65,536: the sample is every vector, nothing is extrapolated; the chosen codec's figure reaches the goal
    expect(chosen.recall_at_10_all).toBe(chosen.recall_at_10);
    expect(lower(chosen)).toBeGreaterThanOrEqual(0.9);
    // every smaller codec measured missed it (the bisection measures out of size order: not only those before it)
    const smaller = measured.filter((c) => c.bytes_per_vector < chosen.bytes_per_vector);
    expect(smaller.length).toBeGreaterThan(0);
    for (const c of smaller) expect(lower(c)).toBeLessThan(0.9);
    // and the largest of them lies within the refinement's 4 % (or one code byte: 1 B/vector) of the choice
    const gap = chosen.bytes_per_vector - Math.max(...smaller.map((c) => c.bytes_per_vector));
    expect(gap).toBeLessThanOrEqual(Math.max(0.04 * chosen.bytes_per_vector, 1 + 1e-9));
    // without measuring every candidate: ids alone, 6 bits sizes, int4, int8 and pq's two are 11, and ec at most 4; pq
    // (trained codebooks) is left out, its predicted error no better than a size that missed
    expect(measured.length).toBeLessThan(9);
    expect(measured.map((c) => c.residual)).not.toContain('pq');
    expect(measured.map((c) => c.residual)).not.toContain('int8');
    expect(s.recall_at_10).toBeGreaterThanOrEqual(0.9);
    // one line says what was chosen, on the same figures (the sample is every vector: the file's own)
    expect(r.stderr).toMatch(new RegExp(`chose ${s.codec} residuals for --quality 0\\.9: recall@10 ${chosen.recall_at_10.toFixed(3)} ± [\\d.]+ of exact search over the decoded vectors, 1,000 queries among all 2,000 vectors`));
    expect(r.stderr).toMatch(new RegExp(`recall@10 ${s.recall_at_10.toFixed(3)} \\(95 % interval [\\d.]+–[\\d.]+\\);`));
    expect(s.recall_at_10_all_low).toBeLessThanOrEqual(s.recall_at_10);
    expect(s.recall_at_10_all_high).toBeGreaterThanOrEqual(s.recall_at_10);
  });

  it('--bytes B: the file fits B bytes per vector; with only ids affordable, as many anchors as fit', () => {
    for (const budget of [50, 20, 12]) {
      const out = path.join(dir, `b${budget}.vlc`);
      const r = vlc(['compress', DEMO, '-o', out, '--iters', '3', '--device', 'cpu', '--bytes', String(budget), '--json']);
      expect(r.code, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout);
      expect(fs.statSync(out).size / 2000).toBeLessThanOrEqual(budget);
      expect(s.bytes_per_vector).toBeLessThanOrEqual(budget);
      expect(s.choice).toMatchObject({ goal: 'bytes', target: budget, met: true });
      // 50 and 20: a codec sized to the budget measures best — the entropy-coded one (ec) or the bits codec
      // with the most code bytes that fit (int4 and pq 16x8 at 50 too); 12: not even 1 bit a dimension
      // (d/8 = 8 code bytes) fits beside the anchors, so ids alone, more anchors.
      if (budget === 12) expect([s.residual, s.m > 128]).toEqual(['none', true]);
      else {
        expect(['ec', 'bits']).toContain(s.residual);
        expect(s.m).toBe(128);
        expect(s.choice.measured.map((c: { residual: string }) => c.residual)).toEqual(expect.arrayContaining(['bits', 'ec']));
      }
    }
  }, 180_000); // three compresses on the CPU

  it('one of --quality, --bytes, --residual; values checked; a budget below any file is refused', () => {
    const base = ['compress', DEMO, '-o', path.join(dir, 'x.vlc'), '--device', 'cpu'];
    expect(vlc([...base, '--quality', '0.9', '--residual', 'int8']).stderr).toMatch(/--residual and --quality both say what to store; give one of them/);
    expect(vlc([...base, '--quality', '1.5']).stderr).toMatch(/--quality is the recall@10 to reach, a number in \(0, 1\]/);
    const r = vlc([...base, '--bytes', '0.5']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--bytes 0\.5 is below the smallest file for these vectors: [\d.]+ bytes\/vector/);
    expect(fs.existsSync(path.join(dir, 'x.vlc'))).toBe(false);
  });

  it('--residual none on data it serves badly: a warning naming the options that keep more (nothing under -q)', () => {
    const r0 = rng(8);
    const x = Float32Array.from({ length: 1500 * 32 }, () => r0() - 0.5); // no structure at all
    const input = writeNpy(path.join(dir, 'noise.npy'), x, 1500, 32);
    const r = vlc(['compress', input, '-o', path.join(dir, 'noise.vlc'), '--iters', '3', '--device', 'cpu', '--residual', 'none']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: recall@10 of search over the decoded vectors is 0\.\d+: they keep few true neighbours; --residual int4, --residual int8 or --quality 0\.9 keeps more/);
    const q = vlc(['compress', input, '-o', path.join(dir, 'noise2.vlc'), '--iters', '3', '--device', 'cpu', '--residual', 'none', '-q']);
    expect(q.stderr).toBe('');
  });
});

describe('pipelines and streams', () => {
  it('cat x.npy | vlc compress - -o - | vlc info -', () => {
    const r = sh(`cat ${DEMO} | node ${BIN} compress - -o - --iters 3 --device cpu -q | node ${BIN} info - --json`);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n: 2000, d: 64, m: 128 });
  });

  it('vlc decompress -o - | vlc compress - round-trips through stdin', () => {
    const r = sh(`node ${BIN} decompress ${model} -o - --format npy | node ${BIN} compress - -o - --iters 2 --anchors 8 -q --device cpu | node ${BIN} info - --json`);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n: 2000, d: 64, m: 8 });
  });

  it('a closed stdout (| head) ends quietly with exit 0', () => {
    const r = sh(`node ${BIN} decompress ${model} -o - --format npy | head -c 100 > /dev/null`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = sh(`node ${BIN} search ${model} --queries ${DEMO} -k 10 | head -n 1`);
    expect(s.code).toBe(0);
    expect(s.stderr).toBe('');
    expect(JSON.parse(s.stdout).ids).toHaveLength(10);
  });
});

describe('Ctrl-C', () => {
  it('exits 130, leaves no partial output and keeps an existing output file (even with --force)', async () => {
    const big = writeNpy(path.join(dir, 'big.npy'), clustered(20000, 32, 5, 50), 20000, 32);
    const out = path.join(dir, 'big.vlc');
    fs.writeFileSync(out, 'previous contents');
    const child = spawn(process.execPath, [BIN, 'compress', big, '-o', out, '--force', '--anchors', '512', '--iters', '100000', '--device', 'cpu', '-v']);
    let stderr = '';
    const code = await new Promise<number | null>((resolve) => {
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
        if (stderr.includes('[debug] iteration') && !child.killed) child.kill('SIGINT'); // training is under way
      });
      child.on('exit', (c) => resolve(c));
    });
    expect(code).toBe(130);
    expect(fs.readFileSync(out, 'utf8')).toBe('previous contents');
    expect(fs.readdirSync(dir).filter((f) => f.includes('big.vlc'))).toEqual(['big.vlc']);
  });
});

// `script` runs a command on a pseudo-terminal, as an interactive user would (util-linux; skipped without it).
const hasScript = sh('command -v script').code === 0;
describe.skipIf(!hasScript)('on a terminal', () => {
  const onTty = (cmd: string) => sh(`script -q -e -c ${JSON.stringify(cmd)} /dev/null`);

  it('draws each long step in place on stderr (training, exact search...) and erases it; nothing when stderr is not a terminal', () => {
    // Big enough that training and eval's exact search last more than the half second before a step shows.
    const input = writeNpy(path.join(dir, 'tty-in.npy'), clustered(50_000, 64, 9, 40), 50_000, 64);
    const out = path.join(dir, 'tty.vlc');
    const r = onTty(`node ${BIN} compress ${input} -o ${out} --anchors 128 --iters 120 --device cpu --residual int8`);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/\r\x1b\[Ktraining  iter \d+\/120 +T [\d.e-]+ +energy [\d.e+-]+ +changed \d+ +ETA ≤\d+s/);
    expect(r.stdout).toMatch(/\r\x1b\[Kvlc: .*tty\.vlc: [\d.]+ bytes\/vector/); // the line is erased before the summary
    const e = onTty(`node ${BIN} eval ${input} ${out} --queries 3000`);
    expect(e.code, e.stdout).toBe(0);
    expect(e.stdout).toMatch(/\r\x1b\[Kexact search over the originals \(3,000 queries\)  [\d,]+ \/ 50,000 vectors  .*\d+s/);
    expect(e.stdout).not.toMatch(/\x1b\[K[^\r\x1b]+\n/); // every drawn line is erased before anything is printed
    const plain = vlc(['eval', DEMO, model]);
    expect(plain.code).toBe(0);
    expect(plain.stderr + plain.stdout).not.toMatch(/\x1b|\r/);
    const json = onTty(`node ${BIN} eval ${DEMO} ${model} --json 2>/dev/null`);
    expect(JSON.parse(json.stdout.replace(/\r/g, '')).recall_at_1).toBeGreaterThan(0); // --json output is only JSON
  }, 300_000);

  it('refuses to write binary data to the terminal', () => {
    const r = onTty(`node ${BIN} compress ${DEMO} -o - --iters 2 --device cpu`);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/refusing to write the binary \.vlc file to a terminal/);
  });
});

describe('help', () => {
  it('lists the commands of this README', () => {
    const r = vlc(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['compress', 'decompress', 'info', 'eval', 'search']) expect(r.stdout).toMatch(new RegExp(`\\n  ${c} `));
  });
});
