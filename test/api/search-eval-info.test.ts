// search(), evaluate() and info() called as a library: each gives what its command prints with
// --json (schema and command aside; eval's seconds are a timing), from paths, from vectors in
// memory and from files already opened, and refuses bad input with the command's UsageError.
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { clustered, tempDir, vlc, writeNpy } from '../cli/helpers.js';
import { compress, evaluate, info, openVlc, readVectors, search, UsageError } from '../../dist/index.js';
// The CLI's JSON rounds every float to 10 significant digits (commands/json.ts); the library gives them whole.
import { roundFloats } from '../../dist/commands/json.js';

const dir = tempDir('api-search');
const n = 600;
const d = 8;
const nq = 25;
const input = path.join(dir, 'x.npy');
const queriesPath = path.join(dir, 'q.npy');
const file = path.join(dir, 'x.vlc');
const queries = clustered(nq, d, 9, 5);

/** The command's --json result without its two leading fields. */
function cliJson(args: string[]): Record<string, unknown> {
  const r = vlc([...args, '--json', '-q']);
  expect(r.code, r.stderr).toBe(0);
  const { schema, command, ...rest } = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(schema).toBe(1);
  expect(command).toBe(args[0]);
  return rest;
}

/** search()'s typed arrays as the JSON's rows. */
function rowsOf(r: { k: number; queries: number; nprobe: number | null; metric: string; ids: Int32Array; distances: Float32Array }) {
  const results = Array.from({ length: r.queries }, (_, q) => ({
    ids: Array.from(r.ids.subarray(q * r.k, (q + 1) * r.k)),
    distances: Array.from(r.distances.subarray(q * r.k, (q + 1) * r.k)),
  }));
  return { k: r.k, queries: r.queries, nprobe: r.nprobe, metric: r.metric, results };
}

beforeAll(async () => {
  writeNpy(input, clustered(n, d, 3, 6), n, d);
  writeNpy(queriesPath, queries, nq, d);
  await compress(input, { output: file, anchors: 16, iters: 15, residual: 'int8', device: 'cpu' });
}, 120_000);

describe('info()', () => {
  it("is `vlc info --json`, from a path or from a file opened already", async () => {
    const want = cliJson(['info', file]);
    expect(roundFloats(await info(file))).toEqual(want);
    expect(roundFloats(await info(await openVlc(file)))).toEqual(want);
    expect(want).toMatchObject({ n, d, m: 16, residual: 'int8' });
  });

  it('names a file that is not a .vlc', async () => {
    await expect(info(input)).rejects.toBeInstanceOf(UsageError);
  });
});

describe('search()', () => {
  it('is `vlc search --json` (the CPU index search, nprobe given and by default)', async () => {
    for (const nprobe of [undefined, 3]) {
      const args = ['search', file, '--queries', queriesPath, '-k', '5', '--device', 'cpu', ...(nprobe ? ['--nprobe', String(nprobe)] : [])];
      const want = cliJson(args);
      const got = await search(file, queriesPath, { k: 5, nprobe, device: 'cpu' });
      expect(roundFloats(rowsOf(got))).toEqual(want);
      expect(got.nprobe).toBe(nprobe ?? 8); // int8 residuals: 8 anchors by default
    }
  }, 60_000);

  it('is `vlc search --exhaustive --json` on the CPU (every decoded vector ranked, nprobe null); refused with --nprobe', async () => {
    const want = cliJson(['search', file, '--queries', queriesPath, '-k', '6', '--device', 'cpu', '--exhaustive']);
    const got = await search(file, queriesPath, { k: 6, device: 'cpu', exhaustive: true });
    expect(roundFloats(rowsOf(got))).toEqual(want);
    expect(got.nprobe).toBeNull();
    // Exhaustive finds at least the index search's neighbours: its k-th distance is never larger
    // (up to f32 rounding: the index search scores int8 codes in its own order of operations).
    const probed = await search(file, queriesPath, { k: 6, device: 'cpu' });
    for (let q = 0; q < nq; q++) expect(got.distances[q * 6 + 5]).toBeLessThanOrEqual(probed.distances[q * 6 + 5] * (1 + 1e-6));
    const cli = vlc(['search', file, '--queries', queriesPath, '--device', 'cpu', '--exhaustive', '--nprobe', '3']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/--exhaustive ranks every decoded vector, --nprobe tunes the CPU index search/);
    await expect(search(file, queriesPath, { exhaustive: true, nprobe: 3 })).rejects.toBeInstanceOf(UsageError);
  }, 60_000);

  it('takes queries in memory and a file opened already, with the same answer', async () => {
    const fromPaths = await search(file, queriesPath, { k: 4, device: 'cpu' });
    const fromMemory = await search(await openVlc(file), { data: queries, n: nq, d }, { k: 4, device: 'cpu' });
    const fromDataset = await search(file, await readVectors(queriesPath), { k: 4, device: 'cpu' });
    expect(rowsOf(fromMemory)).toEqual(rowsOf(fromPaths));
    expect(rowsOf(fromDataset)).toEqual(rowsOf(fromPaths));
    expect(fromPaths.ids.length).toBe(nq * 4);
  });

  it('refuses what the command refuses, with its message', async () => {
    const cli = vlc(['search', file, '--queries', queriesPath, '-k', String(n + 1), '--device', 'cpu']);
    expect(cli.code).toBe(2);
    const err = await search(file, queriesPath, { k: n + 1, device: 'cpu' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect(cli.stderr).toContain((err as Error).message);
    await expect(search(file, { data: new Float32Array(3), n: 1, d: 3 }, { device: 'cpu' })).rejects.toThrow(/queries have 3 dimensions but .* holds 8-dimensional/);
    await expect(search('-', '-')).rejects.toThrow(/only one of the index and --queries can be stdin/);
    await expect(search(file, queriesPath, { k: 0 })).rejects.toBeInstanceOf(UsageError);
  });
});

describe('evaluate()', () => {
  it('is `vlc eval --json` but for the time taken, from paths or from what was read already', async () => {
    const want = cliJson(['eval', input, file, '--queries', '40', '--seed', '4', '--nprobe', '2', '--device', 'cpu']);
    const strip = ({ seconds, ...rest }: { seconds: number } & Record<string, unknown>) => {
      expect(seconds).toBeGreaterThan(0);
      return rest;
    };
    delete want.seconds;
    const o = { queries: 40, seed: 4, nprobe: 2, device: 'cpu' as const };
    expect(roundFloats(strip(await evaluate(input, file, o)))).toEqual(want);
    expect(roundFloats(strip(await evaluate(await readVectors(input), await openVlc(file), o)))).toEqual(want);
    expect(want).toMatchObject({ n, d, queries: 40, search: { nprobe: 2 } });
  }, 60_000);

  it('without --nprobe (the .vlc and the .npy read in blocks) is `vlc eval --json` and the whole reads', async () => {
    const want = cliJson(['eval', input, file, '--queries', '40', '--seed', '4', '--device', 'cpu']);
    delete want.seconds;
    const o = { queries: 40, seed: 4, device: 'cpu' as const };
    const { seconds: _a, ...fromDisk } = await evaluate(input, file, o);
    const { seconds: _b, ...whole } = await evaluate(await readVectors(input), await openVlc(file), o);
    expect(fromDisk).toEqual(whole);
    expect(roundFloats(fromDisk)).toEqual(want);
  }, 60_000);

  it('refuses vectors that are not the ones compressed', async () => {
    const other = writeNpy(path.join(dir, 'other.npy'), clustered(n - 1, d, 5), n - 1, d);
    await expect(evaluate(other, file, { device: 'cpu' })).rejects.toThrow(/holds 599 x 8 vectors but .* encodes 600 x 8; give the file it was compressed from/);
    await expect(evaluate(input, file, { queries: 0 })).rejects.toBeInstanceOf(UsageError);
    // A NaN in an original read in blocks is refused as reading it whole refuses it.
    const x = clustered(n, d, 3, 6);
    x[417 * d + 5] = NaN;
    const nan = writeNpy(path.join(dir, 'nan.npy'), x, n, d);
    const whole = (await readVectors(nan).catch((e: unknown) => e)) as Error;
    expect(whole).toBeInstanceOf(UsageError);
    await expect(evaluate(nan, file, { device: 'cpu' })).rejects.toThrow(whole.message);
  });
});
