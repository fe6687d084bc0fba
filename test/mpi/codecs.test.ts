// Every residual codec under MPI (api/compress-mpi.ts: the ranks train; rank 0 gathers the rows
// it measures and chooses as one process does, compress-steps.ts; the ranks code their own rows,
// rank-encode.ts): `mpirun -n 2` and `-n 3` write the file one process writes from the same input
// and seed, byte for byte (sha256), for each fixed codec, the default goal (--quality 0.9) and a
// --bytes budget, on an input of odd sizes (n and d divide into nothing: the ranks' shares
// differ), and on an input past the rows rank 0 measures, where rank 0 must gather only those.
// Also: data of tiny magnitude (trained at a power-of-two scale, the same over the ranks as in one
// process), --json's phases adding up under MPI (the gathering counted with choosing), and a
// failure after training (at rank 0 alone) ending every rank with rank 0's one line and exit 2.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clustered, tempDir, vlc, writeNpy } from '../cli/helpers.js';
import { rng } from '../rng.js';
import { MPIRUN, mpirun, SKIPPED } from './helpers.js';

const dir = tempDir('mpi-codecs');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const n = 1237;
const d = 13;
/** Uniform noise: no structure for any codec to lean on. */
const noise = (() => {
  const r = rng(41);
  return Float32Array.from({ length: n * d }, () => r() * 2 - 1);
})();
const npy = writeNpy(path.join(dir, 'x.npy'), noise, n, d);
// --effort fast and few iterations: every pass is a few collectives, and what is tested here is what follows training.
const COMMON = ['--device', 'cpu', '--anchors', '24', '--seed', '5', '--effort', 'fast', '--iters', '30', '-f', '-q'];

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** `vlc compress input <extra>` in one process and under mpirun -n `ranks`: both results, the one process's JSON. */
function bothWays(input: string, extra: string[], ranks: number, tag: string) {
  const one = path.join(dir, `${tag}-1.vlc`);
  const many = path.join(dir, `${tag}-${ranks}.vlc`);
  const s = vlc(['compress', input, '-o', one, ...COMMON, ...extra, '--json']);
  expect(s.stderr).toBe('');
  expect(s.code).toBe(0);
  const m = mpirun(['compress', input, '-o', many, ...COMMON, ...extra, '--json'], ranks);
  expect(m.stderr).toBe('');
  expect(m.code).toBe(0);
  return { single: JSON.parse(s.stdout), ranks: JSON.parse(m.stdout), one, many };
}

/**
 * --json's phases under MPI: each at least 0, adding up to total_seconds (the JSON keeps 9
 * decimals), `other` a sliver (looser than test/api/phases.test.ts: two or three ranks share the
 * machine's cores with the test runner, and a rank descheduled between two phases adds to it).
 */
function phasesAddUp(s: { phases: Record<string, number>; total_seconds: number }): void {
  const { other, ...phases } = s.phases;
  for (const [k, v] of Object.entries(phases)) expect(v, k).toBeGreaterThanOrEqual(0);
  expect(Object.values(phases).reduce((a, b) => a + b, 0) + other).toBeCloseTo(s.total_seconds, 6);
  expect(other).toBeGreaterThan(-1e-6);
  expect(other).toBeLessThan(0.05 * s.total_seconds + 0.5);
  expect(phases.residual).toBeGreaterThan(0);
}

describe.skipIf(!MPIRUN)(`mpirun vlc compress with residuals, --device cpu${SKIPPED}`, () => {
  it.each([
    ['int8', ['--residual', 'int8'], 2],
    ['int4', ['--residual', 'int4'], 3],
    ['bits', ['--residual', 'bits'], 2],
    ['pq', ['--residual', 'pq'], 3],
    ['ec', ['--residual', 'ec'], 2],
    ['the default goal (--quality 0.9)', [], 3],
    ['a --bytes budget', ['--bytes', '11'], 2],
  ])('%s over the ranks: the same bytes as one process', (what, extra, ranks) => {
    const r = bothWays(npy, extra as string[], ranks as number, what.replace(/\W+/g, '_'));
    expect(r.single.coded).toBe(true); // residuals, not anchor ids alone
    if (extra.length === 2 && extra[0] === '--residual') expect(r.single.residual).toBe(extra[1]);
    expect(r.ranks.codec).toBe(r.single.codec);
    expect(r.ranks.device_label).toMatch(new RegExp(`^${ranks} MPI ranks`));
    expect(sha256(r.many)).toBe(sha256(r.one));
    phasesAddUp(r.ranks);
  }, 240_000);

  // Past the rows rank 0 measures (100,000 for the reconstruction figures, a recall sample of 65,536: at most 165,536),
  // and over several encoder blocks (16,384 rows) that the ranks' edges cut: rank 0 gathers only
  // the rows it measures, the ranks code their own rows (int8, int4, bits), and a codec coded in one
  // place (ec, pq) has every row gathered at rank 0 once it is chosen.
  const big = 300_000;
  it.each([
    ['bits', ['--residual', 'bits'], 3, true],
    ['int4', ['--residual', 'int4'], 2, true],
    ['ec', ['--residual', 'ec'], 2, false],
  ])('%s on 300,000 rows: the same bytes; rank 0 gathers every row only for a codec coded in one place', (what, extra, ranks, spread) => {
    const bigNpy = path.join(dir, 'big.npy');
    if (!fs.existsSync(bigNpy)) writeNpy(bigNpy, clustered(big, 6, 9, 40), big, 6);
    const one = path.join(dir, `big-${what}-1.vlc`);
    const many = path.join(dir, `big-${what}-${ranks}.vlc`);
    const s = vlc(['compress', bigNpy, '-o', one, ...COMMON, ...(extra as string[])]);
    expect(s.code).toBe(0);
    // -v: rank 0 says how many rows it gathered.
    const m = mpirun(['compress', bigNpy, '-o', many, ...COMMON.filter((a) => a !== '-q'), '-v', ...(extra as string[])], ranks as number);
    expect(m.code).toBe(0);
    expect(sha256(many)).toBe(sha256(one));
    const gathered = Number(/rank 0 gathered (\d+) of the 300000 rows/.exec(m.stderr)?.[1]);
    expect(gathered).toBeGreaterThan(100_000); // the reconstruction rows and the recall sample
    expect(gathered).toBeLessThanOrEqual(165_536);
    expect(/rank 0 gathers every row/.test(m.stderr)).toBe(!spread);
  }, 300_000);

  it.each([
    ['ip, int8', ['--metric', 'ip', '--residual', 'int8'], 2],
    ['cosine, int4', ['--metric', 'cosine', '--residual', 'int4'], 3],
    ['cosine, the default goal', ['--metric', 'cosine'], 2],
    ['ip, anchor ids alone', ['--metric', 'ip', '--residual', 'none'], 3],
  ])('--metric %s over the ranks: the same bytes as one process', (what, extra, ranks) => {
    const r = bothWays(npy, extra as string[], ranks as number, `metric_${what.replace(/\W+/g, '_')}`);
    expect(r.single.metric).toBe(extra[1]);
    expect(r.ranks.metric).toBe(extra[1]);
    expect(r.ranks.codec).toBe(r.single.codec);
    expect(sha256(r.many)).toBe(sha256(r.one));
  }, 240_000);

  it('--metric cosine with zero rows and anchor ids alone (every norm gathered at rank 0): the same bytes, the zero rows told once', () => {
    const withZeros = noise.slice();
    for (const i of [0, 700, 1236]) withZeros.fill(0, i * d, (i + 1) * d); // in the first and the last rank's rows
    const zeros = writeNpy(path.join(dir, 'zeros.npy'), withZeros, n, d);
    const one = path.join(dir, 'zeros-1.vlc');
    const many = path.join(dir, 'zeros-3.vlc');
    const args = [...COMMON.filter((a) => a !== '-q'), '--metric', 'cosine', '--residual', 'none'];
    const s = vlc(['compress', zeros, '-o', one, ...args]);
    expect(s.code).toBe(0);
    const m = mpirun(['compress', zeros, '-o', many, ...args], 3);
    expect(m.code).toBe(0);
    const told = (text: string) => text.split('\n').filter((l) => l.includes('3 vectors are zero'));
    expect(told(s.stderr)).toHaveLength(1);
    expect(told(m.stderr)).toEqual(told(s.stderr));
    expect(sha256(many)).toBe(sha256(one));
  }, 240_000);

  it('vectors of magnitude 1e-30 (trained at a power-of-two scale over the whole data): the same bytes', () => {
    const tiny = writeNpy(path.join(dir, 'tiny.npy'), noise.map((v) => v * 1e-30), n, d);
    const r = bothWays(tiny, ['--residual', 'int8'], 2, 'tiny');
    expect(r.single.relative_error).toBeLessThan(0.1); // trained, not collapsed by underflow
    expect(sha256(r.many)).toBe(sha256(r.one));
  }, 240_000);

  it('a failure after training, at rank 0 alone (f16 anchors asked for, beyond its range): one line, exit 2 on every rank, no output', () => {
    const huge = writeNpy(path.join(dir, 'huge.npy'), clustered(n, d, 3).map((v) => v * 1e5), n, d);
    const out = path.join(dir, 'f16.vlc');
    const args = ['compress', huge, '-o', out, ...COMMON, '--residual', 'int8', '--anchor-dtype', 'f16'];
    const s = vlc(args);
    expect(s.code).toBe(2);
    const m = mpirun(args, 3);
    expect(m.code).toBe(2);
    expect(m.stderr.trim().split('\n')).toEqual([s.stderr.trim()]); // rank 0's line, as one process words it
    expect(m.stderr).toMatch(/^vlc: the anchors reach .*use --anchor-dtype f32/);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('f16'))).toEqual([]); // no temporary file either
  }, 240_000);
});
