// cuda/ec.cu's ec_decode — the kernel's own source, not an emulation — run on the CPU: g++ compiles
// it with each warp's 32 lanes as threads that meet at every warp vote (ec-simt.cpp), and it must
// give the host's codes (codecs/ec/blocks.ts decodeBlock), and ec_axis / ec_rotated from them the
// host's rows bit for bit (io/vlc/reconstruct.ts; x86-64 doubles round as the GPU's __d*_rn), for both layouts, odd sizes, d < 32 and
// d = 1, blocks of one row, scale bits 8 to 16, escapes, decoded in spans of blocks as ec.ts
// launches them; a damaged block sets its error word. The GPU suite (test/gpu/ec.test.ts) runs it
// on a device. Skipped (visibly) where there is no g++ with C++20's <barrier>.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateTable } from '../../dist/backend/cuda/ec.js';
import type { EcDecodable } from '../../dist/backend/device.js';
import { reconstructRange } from '../../dist/io/vlc/reconstruct.js';
import { ecProblem, escapedCodes, type EcLayoutKind } from './ec-problem.js';

// A g++ with C++20's <barrier> (GCC 11 on): without one the check is skipped, not failed.
const hasGxx =
  spawnSync('g++', ['-std=c++20', '-x', 'c++', '-fsyntax-only', '-'], { input: '#include <barrier>\nint main() { std::barrier<> b(1); }\n' }).status === 0;
const dir = hasGxx ? mkdtempSync(join(tmpdir(), 'vlc-ec-simt-')) : '';
const binary = join(dir, 'ec-simt');

/** The problem as the kernel gets it (ec.ts's uploads), and the host's codes, into `to`. */
function dump(file: EcDecodable, to: string, rows: [number, number], damage?: (bytes: Uint8Array, at: BigUint64Array) => void): void {
  const r = file.residuals, L = r.layout, D = L.dims.length, blocks = r.blockCount, d = r.d;
  const at = new BigUint64Array(blocks + 1);
  for (let b = 0; b < blocks; b++) at[b + 1] = at[b] + BigInt(r.blocks(b).size);
  const bytes = new Uint8Array(Number(at[blocks]));
  for (let b = 0; b < blocks; b++) {
    const { bytes: src, at: o, size } = r.blocks(b);
    bytes.set(src.subarray(o, o + size), Number(at[b]));
  }
  damage?.(bytes, at);
  const codes = new Int32Array(r.n * D);
  for (let b = 0; b < blocks; b++) codes.set(r.decodeBlock(b), b * L.blockRows * D);
  const put = (name: string, a: ArrayBufferView) => writeFileSync(join(to, name), new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  const [r0, r1] = rows;
  put('meta', new Int32Array([blocks, L.blockRows, r.n, D, L.models.scaleBits, r0, r1, d, L.rotation ? 1 : 0]));
  put('bytes', bytes);
  put('at', at);
  put('slots', L.models.slots());
  put('state', stateTable(r));
  put('lo', L.alpha.lo);
  put('size', L.alpha.size);
  put('codes', codes);
  put('anchors', file.anchors);
  put('assign', Uint32Array.from(file.assignments));
  put('steps', Float32Array.from(L.dims, (k) => L.steps[k]));
  put('offsets', Float32Array.from(L.dims, (k) => L.offsets[k]));
  const colOf = new Int32Array(d).fill(-1);
  L.dims.forEach((k, c) => (colOf[k] = c));
  put('map', L.rotation ? L.dims : colOf);
  put('P', L.rotation ? L.rotation.values : new Float32Array(1));
  put('rows', reconstructRange(file, r0, r1, new Float32Array((r1 - r0) * d)));
}

function run(span: number): { status: number | null; out: string } {
  const p = spawnSync(binary, [dir, String(span)], { encoding: 'utf8' });
  return { status: p.status, out: `${p.stdout}${p.stderr}` };
}

const CASES: Array<[EcLayoutKind, number, number, { blockRows?: number; scaleBits?: number }, number]> = [
  ['axis', 1237, 37, { blockRows: 200 }, 3],
  ['axis', 901, 7, { blockRows: 64, scaleBits: 9 }, 5],
  ['axis', 333, 45, { scaleBits: 16 }, 1],
  ['axis', 50, 1, { blockRows: 7, scaleBits: 8 }, 2],
  ['axis', 120, 33, { blockRows: 1 }, 7],
  ['rotated', 1111, 29, { blockRows: 150 }, 4],
  ['rotated', 517, 40, { blockRows: 97, scaleBits: 14 }, 2],
];

describe.skipIf(!hasGxx)('ec_decode (cuda/ec.cu) on the CPU, lanes in lock step = the host decoder', () => {
  beforeAll(() => {
    // Tiles of 7 coordinates: ec_rotated stages a row's values over several tiles, as it does on the GPU past 512.
    execFileSync('g++', ['-std=c++20', '-O1', '-pthread', '-w', '-DEC_TILE=7', join(__dirname, 'ec-simt.cpp'), '-o', binary]);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [layout, n, d, o, span] of CASES) {
    it(`${layout}: n ${n}, d ${d}, ${JSON.stringify(o)}, ${span} blocks a launch`, async () => {
      const file = await ecProblem(layout, n, d, 5, n * d, o);
      if (d > 1) expect(escapedCodes(file)).toBeGreaterThan(0);
      dump(file, dir, [Math.floor(n / 3), n]);
      const { status, out } = run(span);
      expect(out).toMatch(/^err 0, 0 of \d+ codes differ\n0 of \d+ row values differ/);
      expect(status).toBe(0);
    }, 60_000);
  }

  it('a block whose lane state was damaged sets the error word to 1 + its index', async () => {
    const file = await ecProblem('axis', 600, 11, 5, 9, { blockRows: 200 });
    dump(file, dir, [0, 600], (bytes, at) => (bytes[Number(at[1]) + 2] ^= 0xff));
    const { status, out } = run(3);
    expect(out).toMatch(/^err 2,/);
    expect(status).toBe(1);
  }, 60_000);
});
