// `mpirun -n 2 vlc compress ... --device cpu` (api/compress-mpi.ts): the ranks train together on
// their own rows, rank 0 writes the file, and it is the file one process writes from the same input
// and seed, byte for byte — for each way a rank finds its rows (a range of a .npy or .fvecs, one
// file of a sharded input each, its range of several files, a whole raw file read then sliced), with a training sample, and
// past 100,000 rows (the quality figures then measured on a sample). And failures —
// an unreadable input, ranks started with different options, a rank killed mid-run: a non-zero
// exit, no file, and (but for the killed rank, which mpirun reports) one line on stderr. The residual
// codecs under MPI: codecs.test.ts. CI installs Open MPI (.ci/run); without mpirun these tests are
// skipped, and say why.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, clustered, ROOT, tempDir, vlc, writeNpy } from '../cli/helpers.js';
import { MPIRUN, mpirun, SKIPPED } from './helpers.js';

const dir = tempDir('mpi');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const COMMON = ['--device', 'cpu', '--residual', 'none', '--anchors', '32', '-f', '-q'];

/** The same compress in one process and over two ranks: both files, byte for byte. */
function bothWays(input: string[], extra: string[] = [], tag = 'x'): { single: Buffer; ranks: Buffer } {
  const one = path.join(dir, `${tag}-single.vlc`);
  const two = path.join(dir, `${tag}-mpi.vlc`);
  const s = vlc(['compress', ...input, '-o', one, ...COMMON, ...extra]);
  expect(s.stderr).toBe('');
  expect(s.code).toBe(0);
  const m = mpirun(['compress', ...input, '-o', two, ...COMMON, ...extra]);
  expect(m.stderr).toBe('');
  expect(m.code).toBe(0);
  return { single: fs.readFileSync(one), ranks: fs.readFileSync(two) };
}

const n = 3000;
const d = 16;
const x = clustered(n, d, 7, 20);
const npy = writeNpy(path.join(dir, 'x.npy'), x, n, d);

describe.skipIf(!MPIRUN)(`mpirun -n 2 vlc compress --device cpu${SKIPPED}`, () => {
  it('a .npy, each rank reading its range of rows: the same bytes as one process', () => {
    const { single, ranks } = bothWays([npy], [], 'npy');
    expect(ranks.equals(single)).toBe(true);
  });

  it('training on a sample (--sample 0.5: each rank keeps its sampled rows), a .fvecs read by range: the same bytes', () => {
    const fvecs = path.join(dir, 'x.fvecs');
    const rec = Buffer.alloc(n * (4 + 4 * d));
    for (let i = 0; i < n; i++) {
      rec.writeInt32LE(d, i * (4 + 4 * d));
      for (let k = 0; k < d; k++) rec.writeFloatLE(x[i * d + k], i * (4 + 4 * d) + 4 + 4 * k);
    }
    fs.writeFileSync(fvecs, rec);
    const { single, ranks } = bothWays([fvecs], ['--sample', '0.5', '--seed', '11'], 'fvecs');
    expect(ranks.equals(single)).toBe(true);
  });

  it('a sharded input of two files (one per rank), and a raw file read whole then sliced: the same bytes', () => {
    const a = writeNpy(path.join(dir, 'part-a.npy'), x.subarray(0, 1700 * d), 1700, d);
    const b = writeNpy(path.join(dir, 'part-b.npy'), x.subarray(1700 * d), n - 1700, d);
    const sharded = bothWays([a, b], [], 'shards');
    expect(sharded.ranks.equals(sharded.single)).toBe(true);
    const raw = path.join(dir, 'x.f32');
    fs.writeFileSync(raw, new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
    const sliced = bothWays([raw], ['--format', 'raw', '--dim', String(d)], 'raw');
    expect(sliced.ranks.equals(sliced.single)).toBe(true);
    expect(sliced.ranks.equals(sharded.ranks)).toBe(true); // the same vectors, however they were stored
  }, 180_000); // four compresses, two of them MPI jobs

  it('a sharded input of three files over two ranks (each rank reading its rows where they lie, across a file edge): the same bytes', () => {
    const bounds = [0, 1100, 1400, n];
    const parts = [0, 1, 2].map((k) => writeNpy(path.join(dir, `three-${k}.npy`), x.subarray(bounds[k] * d, bounds[k + 1] * d), bounds[k + 1] - bounds[k], d));
    const { single, ranks } = bothWays(parts, [], 'three');
    expect(ranks.equals(single)).toBe(true);
  }, 120_000);

  it('130,000 rows (the quality figures on a sample of the rows rank 0 gathered): the same bytes', () => {
    const big = 130_000;
    const file = writeNpy(path.join(dir, 'big.npy'), clustered(big, 4, 3, 12), big, 4);
    const { single, ranks } = bothWays([file], ['--anchors', '16', '--effort', 'fast'], 'big');
    expect(ranks.equals(single)).toBe(true);
  });

  it("a rank's unreadable input: one line naming the rank and the file, exit 2, no output", () => {
    const good = writeNpy(path.join(dir, 'f-1.npy'), x.subarray(0, 1000 * d), 1000, d);
    const bad = path.join(dir, 'f-2.npy');
    fs.writeFileSync(bad, fs.readFileSync(good).subarray(0, 500)); // truncated: rank 1's file (name order)
    const out = path.join(dir, 'failed.vlc');
    const r = mpirun(['compress', good, bad, '-o', out, ...COMMON]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^vlc: rank 1: .*f-2\.npy: truncated/);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('failed'))).toEqual([]); // no temporary file either
  });

  it('ranks started with different options (mpirun with two programs): one line, exit 2, no output', () => {
    const out = path.join(dir, 'disagree.vlc');
    const rank = (seed: string) => ['-n', '1', process.execPath, BIN, 'compress', npy, '-o', out, ...COMMON, '--seed', seed];
    const r = spawnSync('mpirun', ['--quiet', '--oversubscribe', '--allow-run-as-root', ...rank('1'), ':', ...rank('2')], { cwd: ROOT });
    expect(r.status).toBe(2);
    expect(r.stderr.toString().trim().split('\n')).toEqual([expect.stringMatching(/^vlc: the MPI ranks were started with different inputs, options/)]);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a rank that dies (SIGKILL): mpirun ends the job, exit non-zero, no output', async () => {
    const out = path.join(dir, 'killed.vlc');
    const job = spawn('mpirun', ['--quiet', '-n', '2', '--oversubscribe', '--allow-run-as-root', process.execPath, BIN, 'compress', npy, '-o', out, ...COMMON, '--anchors', '256', '--effort', 'best'], { cwd: ROOT });
    const exited = new Promise<number | null>((resolve) => job.on('exit', (code) => resolve(code)));
    let killed = false;
    while (!killed) {
      await new Promise((r) => setTimeout(r, 50));
      for (const pid of childrenOf(job.pid!)) {
        if (rankOf(pid) === '1') {
          process.kill(pid, 'SIGKILL');
          killed = true;
        }
      }
    }
    expect(await exited).not.toBe(0);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('killed'))).toEqual([]);
  });
});

describe('--distributed without Open MPI', () => {
  it('one line naming the packages to install, exit 2, no output', () => {
    const out = path.join(dir, 'nompi.vlc');
    const r = vlc(['compress', npy, '-o', out, '--distributed', '--residual', 'none', '--device', 'cpu'], { env: { ...process.env, VLC_MPI_LIB: 'libmpi-missing.so' } });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^vlc: --distributed runs under Open MPI: .*install openmpi-bin and libopenmpi-dev/)]);
    expect(fs.existsSync(out)).toBe(false);
  });
});

/** The processes mpirun started (its children), by pid, from /proc (no procps needed). */
function childrenOf(pid: number): number[] {
  return fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((p) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid; // field 4: the parent
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** OMPI_COMM_WORLD_RANK of a process, from its environment (undefined once it has gone). */
function rankOf(pid: number): string | undefined {
  try {
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((e) => e.startsWith('OMPI_COMM_WORLD_RANK='))?.split('=')[1];
  } catch {
    return undefined;
  }
}
