// Every command's --json output against docs/json.md: each documented field with its type, nothing
// undocumented, `schema` and `command` first. (The fake-GPU variants — devices with a GPU, test-cuda
// with both halves — are checked in test/cuda-host/errors.test.ts.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkJson, jsonLayouts } from '../json-schema.js';
import { DEMO, tempDir, vlc } from './helpers.js';

const dir = tempDir('json');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'demo.vlc');
const noGpu = { ...process.env, VLC_CUDA_LIB: '/nonexistent/libcuda.so.1' };

function json(args: string[], code = 0): Record<string, unknown> {
  const r = vlc(args);
  expect(r.code, r.stderr).toBe(code);
  const v = JSON.parse(r.stdout);
  expect(Object.keys(v).slice(0, 2)).toEqual(['schema', 'command']);
  expect(v.schema).toBe(1);
  return v;
}

describe('docs/json.md', () => {
  it('documents every command that prints JSON, and the checker catches what is wrong', () => {
    expect([...jsonLayouts().keys()]).toEqual(['compress', 'info', 'eval', 'search', 'test-cuda', 'devices', 'bench']);
    const ok = { schema: 1, command: 'search', k: 1, queries: 1, nprobe: 1, metric: 'l2', results: [{ ids: [3], distances: [0.5] }] };
    expect(checkJson('search', ok)).toEqual([]);
    expect(checkJson('search', { ...ok, extra: 1 })).toEqual(["search: field 'extra' is not in docs/json.md"]);
    expect(checkJson('search', { ...ok, k: 'one' })).toEqual(["search: 'k' is string, docs/json.md says integer"]);
    expect(checkJson('search', { ...ok, results: [{ ids: [3] }] })).toEqual(["search: field 'results[].distances' is missing"]);
  });
});

describe('every command --json conforms to docs/json.md', () => {
  it('compress (with --residual, and with the codec chosen), info, eval, search', () => {
    const fixed = json(['compress', DEMO, '-o', file, '--iters', '5', '--device', 'cpu', '--residual', 'int8', '--json']);
    expect(checkJson('compress', fixed)).toEqual([]);
    const chosen = json(['compress', DEMO, '-o', path.join(dir, 'chosen.vlc'), '--iters', '5', '--device', 'cpu', '--json']);
    expect(chosen.choice).not.toBeNull();
    expect(checkJson('compress', chosen)).toEqual([]);
    expect(checkJson('info', json(['info', file, '--json']))).toEqual([]);
    const pq = path.join(dir, 'pq.vlc');
    const pqStats = json(['compress', DEMO, '-o', pq, '--iters', '5', '--device', 'cpu', '--residual', 'pq', '--pq', '2', '--pq-bits', '4', '--json']);
    expect(pqStats).toMatchObject({ residual: 'pq', pq_subspaces: 2, pq_bits: 4 });
    expect(checkJson('compress', pqStats)).toEqual([]);
    expect(checkJson('info', json(['info', pq, '--json']))).toEqual([]);
    expect(checkJson('eval', json(['eval', DEMO, file, '--json', '--queries', '50']))).toEqual([]);
    expect(checkJson('eval', json(['eval', DEMO, file, '--json', '--queries', '50', '--nprobe', '4']))).toEqual([]);
    expect(checkJson('search', json(['search', file, '--queries', DEMO, '-k', '3', '--json']))).toEqual([]);
  }, 120_000);

  it('test-cuda and devices without a GPU (exit 3, the JSON still printed), bench on the CPU', () => {
    const run = (args: string[]) => {
      const r = vlc(args, { env: noGpu });
      return { code: r.code, v: JSON.parse(r.stdout) };
    };
    const t = run(['test-cuda', '--json']);
    expect(t.code).toBe(3);
    expect(checkJson('test-cuda', t.v)).toEqual([]);
    const d = run(['devices', '--json']);
    expect(d.code).toBe(3);
    expect(checkJson('devices', d.v)).toEqual([]);
    const b = json(['bench', '--device', 'cpu', '--workloads', 'seed-small', '--iters', '2', '--anneal', '--json', '-q']);
    expect(checkJson('bench', b)).toEqual([]);
  }, 120_000);
});
