// Helpers for the end-to-end CLI tests: run `node bin/vlc.js` as a user would, and make small
// input files (valid and deliberately broken) in a fresh temp directory.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { encodeVlcBytes } from '../../dist/io/vlc/format.js';
import { npyBytes as npyFile } from '../io/helpers.js';
import { rng } from '../rng.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/vlc.js');
export const DEMO = path.join(ROOT, 'fixtures/demo-2000x64.npy');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

/** `vlc <args>`, with optional stdin bytes. Never throws; inspect code/stdout/stderr. */
export function vlc(args: string[], o: { input?: Uint8Array | string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const r: SpawnSyncReturns<Buffer> = spawnSync(process.execPath, [BIN, ...args], {
    cwd: o.cwd ?? ROOT,
    input: o.input,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...(o.env ?? process.env), FORCE_COLOR: '0' },
  });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), stdoutBytes: r.stdout };
}

/** A shell pipeline (bash -o pipefail), for tests of `|` and EPIPE. */
export function sh(script: string, cwd = ROOT): Run {
  const r = spawnSync('bash', ['-o', 'pipefail', '-c', script], { cwd, maxBuffer: 256 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), stdoutBytes: r.stdout };
}

export function tempDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vlc-${tag}-`));
}

/** n×d f32 values in a few clusters. */
export function clustered(n: number, d: number, seed = 1, clusters = 5): Float32Array {
  const r = rng(seed);
  const centres = Array.from({ length: clusters }, () => Array.from({ length: d }, () => r() * 10));
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) x[i * d + k] = centres[i % clusters][k] + r() - 0.5;
  return x;
}

/** A .npy file: header with `descr` and `shape` as given (they may lie), then `body`. */
export function npyBytes(descr: string, shape: number[], body: Uint8Array, fortran = false): Uint8Array {
  return npyFile({ descr, shape, body, fortran });
}

export function writeNpy(file: string, x: Float32Array, n: number, d: number): string {
  fs.writeFileSync(file, npyBytes('<f4', [n, d], new Uint8Array(x.buffer, x.byteOffset, x.byteLength)));
  return file;
}

/** Read a 2-D little-endian f4/f2 (or 1-D u1/u2/u4) .npy written by vlc. */
export function readNpy(file: string): { shape: number[]; descr: string; data: ArrayLike<number> } {
  const b = fs.readFileSync(file);
  const hl = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + hl).toString('latin1');
  const descr = /'descr': '([^']+)'/.exec(header)![1];
  const shape = /'shape': \(([^)]*)\)/.exec(header)![1].split(',').filter((s) => s.trim()).map(Number);
  const body = b.subarray(10 + hl);
  const ab = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength);
  const data =
    descr === '<f4' ? new Float32Array(ab) : descr === '<u1' || descr === '|u1' ? new Uint8Array(ab) : descr === '<u2' ? new Uint16Array(ab) : descr === '<u4' ? new Uint32Array(ab) : new Uint16Array(ab);
  return { shape, descr, data };
}

/** Files in a directory other than the given inputs (what a failed command must not leave). */
export function leftovers(dir: string, inputs: string[]): string[] {
  const keep = new Set(inputs.map((f) => path.basename(f)));
  return fs.readdirSync(dir).filter((f) => !keep.has(f));
}

/**
 * A python3 that has numpy (the one on PATH, else Debian's, where .ci/run installs python3-numpy),
 * or undefined when there is none.
 */
export const PYTHON_WITH_NUMPY: string | undefined = ['python3', '/usr/bin/python3'].find(
  (py) => spawnSync(py, ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0,
);

/** A valid .vlc (no residuals) of these anchors (m×d) and each vector's anchor. */
export function vlcBytesOf(d: number, anchors: Float32Array, assignments: Uint32Array): Uint8Array {
  return encodeVlcBytes({
    manifest: {
      n: assignments.length,
      d,
      m: anchors.length / d,
      metric: 'l2',
      anchorDtype: 'f32',
      residual: 'none',
      input: { dtype: 'f32', dropped: 0 },
      training: { energy: 1, iterations: 1, converged: false, init: 'kmeans++' },
      config: {},
      seed: 1,
      tool: { name: 'vlc', version: 'test' },
      device: 'cpu',
    },
    anchors,
    assignments,
  });
}

/** A valid .vlc of n × d vectors over m anchors, no residuals (anchors: clustered(m, d, 7); vector i on anchor i mod m). */
export function smallVlc(n = 100, d = 8, m = 4): Uint8Array {
  return vlcBytesOf(d, clustered(m, d, 7), Uint32Array.from({ length: n }, (_, i) => i % m));
}

/**
 * What a residual codec's end-to-end test file shares (test/cli/bits.test.ts, ec.test.ts): its own
 * temp directory, removed after the file, and `compress(out, ...args)` of the demo with
 * `--residual mode` on the CPU, few iterations (quality is measured in bench/).
 */
export function residualRuns(mode: string) {
  const ITERS = '8';
  const dir = tempDir(mode);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const compress = (out: string, ...args: string[]) =>
    vlc(['compress', DEMO, '-o', out, '--iters', ITERS, '--device', 'cpu', '--residual', mode, '--json', ...args]);
  /** The file every command reads: eval measures compress's error (`mse`), decompress writes it, a CPU search answers every query. */
  const readsBack = (file: string, mse: number) => {
    const e = JSON.parse(vlc(['eval', DEMO, file, '--json', '--queries', '200']).stdout);
    expect(Math.abs(e.mse - mse) / mse).toBeLessThan(1e-9);
    expect(vlc(['decompress', file, '-o', `${file}.npy`]).code).toBe(0);
    const found = vlc(['search', file, '--queries', DEMO, '-k', '3', '--json', '--device', 'cpu']);
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout).results).toHaveLength(2000);
  };
  /** The byte flipped at `at` of `file` is refused by info with exit 2 and the residual section's checksum named. */
  const flipRefused = (file: string, at: number) => {
    const flipped = Buffer.from(fs.readFileSync(file));
    flipped[at] ^= 2;
    fs.writeFileSync(path.join(dir, 'bad.vlc'), flipped);
    const bad = vlc(['info', path.join(dir, 'bad.vlc')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^vlc: .*bad\.vlc: section 'residuals' checksum mismatch: file is corrupted$/);
  };
  /** compress with `args` stops with one line holding `message`, exit 2, and writes no file. */
  const refused = (args: string[], message: string) => {
    const r = compress(path.join(dir, 'never.vlc'), ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(fs.existsSync(path.join(dir, 'never.vlc'))).toBe(false);
  };
  return { dir, compress, ITERS, readsBack, flipRefused, refused };
}
