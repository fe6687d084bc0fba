// `--metric l2|ip|cosine` end to end, as a user runs it: compress records the metric (ip and cosine
// in format version 6, cosine with its f32 norms), decompress restores cosine's lengths, `search`
// and `eval` rank by the file's metric (a flag overrides where meaningful) — checked against numpy
// (float64) on odd sizes; bad values are one-line usage errors (exit 2); files without a metric read as l2.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { PYTHON_WITH_NUMPY, readNpy, smallVlc, tempDir, vlc, writeNpy } from './helpers.js';
import { rng } from '../rng.js';

const n = 611, d = 29, M = 17;
const dir = tempDir('metric-cli');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Clustered rows of lengths 0.3 .. 4 (so the metrics rank apart), row 100 zero. */
const x = (() => {
  const r = rng(21);
  const centres = Array.from({ length: 6 }, () => Array.from({ length: d }, () => (r() - 0.5) * 4));
  const v = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const len = 0.3 + 3.7 * r();
    for (let k = 0; k < d; k++) v[i * d + k] = i === 100 ? 0 : len * (centres[i % 6][k] + (r() - 0.5) * 1.5);
  }
  return v;
})();
const input = writeNpy(path.join(dir, 'x.npy'), x, n, d);
const queries = writeNpy(path.join(dir, 'q.npy'), x.slice(0, 13 * d).map((v, i) => v + Math.sin(i) * 0.3), 13, d);

const compressed: Record<string, string> = {};
function compressed_(metric: 'l2' | 'ip' | 'cosine'): string {
  if (compressed[metric]) return compressed[metric];
  const out = path.join(dir, `x-${metric}.vlc`);
  const r = vlc(['compress', input, '-o', out, '--metric', metric, '--anchors', String(M), '--iters', '6', '--device', 'cpu', '--residual', 'int8', '-f']);
  expect(r.stderr).toMatch(metric === 'cosine' ? /1 vector is zero: its cosine to any query is 0/ : /x-/);
  expect(r.code).toBe(0);
  return (compressed[metric] = out);
}

function numpy(script: string): any {
  return JSON.parse(execFileSync(PYTHON_WITH_NUMPY!, ['-c', `import json, numpy as np\n${script}`]).toString());
}
const UNIT = `
def unit(a):
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return np.divide(a, n, out=np.zeros_like(a), where=n > 0)
def sim(a, b, metric):
    return a @ b.T if metric == 'ip' else unit(a) @ unit(b).T
`;

describe('--metric: usage', () => {
  it.each([
    ['compress', () => ['compress', input, '-o', path.join(dir, 'never.vlc'), '--metric', 'foo']],
    ['search', () => ['search', path.join(dir, 'small.vlc'), '--queries', queries, '--metric', 'foo']],
    ['eval', () => ['eval', input, path.join(dir, 'small.vlc'), '--metric', 'dot']],
  ])('%s --metric <unknown>: one line, exit 2', (_, args) => {
    fs.writeFileSync(path.join(dir, 'small.vlc'), smallVlc(50, d, 4));
    const r = vlc(args());
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--metric must be l2, ip or cosine \(got '(foo|dot)'\)/);
    expect(fs.existsSync(path.join(dir, 'never.vlc'))).toBe(false);
  });

  it('a file without a metric (as before it was recorded) reads as l2; l2 files keep their format version', () => {
    const bytes = smallVlc(50, d, 4);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    const len = view.getUint32(12, true);
    const manifest = JSON.parse(new TextDecoder().decode(bytes.subarray(24, 24 + len)));
    expect(manifest.metric).toBe('l2');
    delete manifest.metric;
    const json = new TextEncoder().encode(JSON.stringify(manifest).padEnd(len, ' '));
    bytes.set(json, 24);
    view.setUint32(20, crc32c(json, crc32c(bytes.subarray(8, 20))), true);
    const old = path.join(dir, 'old.vlc');
    fs.writeFileSync(old, bytes);
    const info = JSON.parse(vlc(['info', old, '--json']).stdout);
    expect(info.metric).toBe('l2');
    expect(info.format_version).toBe(2);
    const found = JSON.parse(vlc(['search', old, '--queries', queries, '-k', '3', '--device', 'cpu']).stdout.split('\n')[0]);
    expect(found.distances).toHaveLength(3);
  });
});

describe.skipIf(!PYTHON_WITH_NUMPY)(`--metric against numpy (${n} x ${d}, int8, ${M} anchors)`, () => {
  it('cosine: recorded (version 6, f32 norms); decompress gives the input\'s lengths; another metric refused', () => {
    const file = compressed_('cosine');
    const info = JSON.parse(vlc(['info', file, '--json']).stdout);
    expect(info.metric).toBe('cosine');
    expect(info.format_version).toBe(6);
    expect(info.sections.find((s: { name: string }) => s.name === 'norms').bytes).toBe(4 * n);
    expect(vlc(['info', file]).stdout).toMatch(/metric cosine \(vectors coded at unit length, their norms stored as f32\)/);
    const back = path.join(dir, 'back.npy');
    expect(vlc(['decompress', file, '-o', back]).code).toBe(0);
    const y = readNpy(back).data as Float32Array;
    for (let i = 0; i < n; i++) {
      let a = 0, b = 0;
      for (let k = 0; k < d; k++) {
        a += x[i * d + k] ** 2;
        b += y[i * d + k] ** 2;
      }
      if (i === 100) expect(b).toBe(0);
      else expect(Math.abs(Math.sqrt(b / a) - 1)).toBeLessThan(0.02);
    }
    const r = vlc(['search', file, '--queries', queries, '--metric', 'ip', '--device', 'cpu']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/compressed with --metric cosine .*search it by cosine/);
  });

  it.each(['ip', 'cosine'] as const)('%s: vlc search (every anchor probed) = numpy\'s exact top-10 over the decoded vectors', (metric) => {
    const file = compressed_(metric);
    const back = path.join(dir, `decoded-${metric}.npy`);
    expect(vlc(['decompress', file, '-o', back, '-f']).code).toBe(0);
    const r = vlc(['search', file, '--queries', queries, '-k', '10', '--device', 'cpu', '--nprobe', String(M), '--json']);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.metric).toBe(metric);
    const want = numpy(`${UNIT}
x = np.load(${JSON.stringify(back)}).astype(np.float64); q = np.load(${JSON.stringify(queries)}).astype(np.float64)
s = sim(q, x, ${JSON.stringify(metric)}); i = np.argsort(-s, axis=1, kind='stable')[:, :10]
print(json.dumps({'ids': i.tolist(), 'scores': np.take_along_axis(s, i, axis=1).tolist()}))`);
    let same = 0;
    got.results.forEach((row: { ids: number[]; distances: number[] }, q: number) => {
      expect(row.distances).toHaveLength(10);
      // Reported ascending: −⟨q, x⟩ (ip), 1 − cos (cosine).
      const scores = row.distances.map((v) => (metric === 'ip' ? -v : 1 - v));
      scores.forEach((s, t) => expect(Math.abs(s - want.scores[q][t])).toBeLessThan(1e-4 * (Math.abs(want.scores[q][0]) + 1)));
      same += row.ids.filter((id, t) => id === want.ids[q][t]).length;
    });
    expect(same / (13 * 10)).toBeGreaterThan(0.95);
  });

  it.each(['ip', 'cosine'] as const)('%s: eval\'s recall@10 (every vector a query) = numpy\'s, exact search over decoded vs original', (metric) => {
    const file = compressed_(metric);
    const back = path.join(dir, `decoded-${metric}.npy`);
    if (!fs.existsSync(back)) expect(vlc(['decompress', file, '-o', back]).code).toBe(0);
    const r = vlc(['eval', input, file, '--queries', String(n), '--device', 'cpu', '--json']);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.metric).toBe(metric);
    const want = numpy(`${UNIT}
x = np.load(${JSON.stringify(input)}).astype(np.float64); y = np.load(${JSON.stringify(back)}).astype(np.float64)
def top(s):
    np.fill_diagonal(s, -np.inf)
    return np.argsort(-s, axis=1, kind='stable')[:, :10]
a = top(sim(x, x, ${JSON.stringify(metric)})); b = top(sim(x, y, ${JSON.stringify(metric)}))
print(json.dumps(float(np.mean([len(set(a[i]) & set(b[i])) / 10 for i in range(len(x))]))))`);
    expect(Math.abs(got.recall_at_10 - want)).toBeLessThan(0.01);
  });

  it('l2 file searched by --metric ip: the negative inner products, ascending', () => {
    const file = compressed_('l2');
    expect(JSON.parse(vlc(['info', file, '--json']).stdout).format_version).toBe(2);
    const row = JSON.parse(vlc(['search', file, '--queries', queries, '-k', '5', '--device', 'cpu', '--metric', 'ip']).stdout.split('\n')[0]);
    expect(row.distances).toHaveLength(5);
    expect([...row.distances].sort((a: number, b: number) => a - b)).toEqual(row.distances);
    expect(row.distances[0]).toBeLessThan(0);
  });
});
