// Files written by earlier versions of vlc still read, and decode to what they held. The fixtures in
// test/format/fixtures/ were written by vlc at format version 1 (commit 35e2263):
//   vlc compress demo200.npy --anchors 8 --iters 5 --device cpu --residual int4|none --seed 7
// where demo200.npy is the first 200 rows of fixtures/demo-2000x64.npy.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeVlc } from '../../dist/io/vlc/format.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

/** The first `rows` rows of the demo fixture (an f32 .npy with a 128-byte header). */
function demoRows(rows: number, d: number): Float32Array {
  const buf = fs.readFileSync(path.join(ROOT, 'fixtures/demo-2000x64.npy'));
  const headerLen = buf.readUInt16LE(8) + 10;
  return new Float32Array(buf.buffer.slice(buf.byteOffset + headerLen, buf.byteOffset + headerLen + rows * d * 4));
}

function mse(x: Float32Array, y: Float32Array, n: number): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (x[i] - y[i]) ** 2;
  return s / n;
}

describe('format version 1 files', () => {
  const x = demoRows(200, 64);

  it.each(['int4', 'none'] as const)('a version 1 file with residual %s decodes to the error it recorded', (mode) => {
    const bytes = fs.readFileSync(path.join(HERE, `fixtures/v1-demo200-${mode}.vlc`));
    expect(bytes.readUInt32LE(8)).toBe(1);
    const f = decodeVlc(bytes, 'v1.vlc');
    expect(f.version).toBe(1);
    expect(f.manifest).toMatchObject({ n: 200, d: 64, m: 8, residual: mode, seed: 7 });
    const recorded = mode === 'none' ? f.manifest.training.energy : f.manifest.residualEnergy!;
    // training.energy is measured against the f32 anchors; the file holds them in f16.
    const tolerance = mode === 'none' ? 1e-3 : 1e-12;
    expect(Math.abs(mse(x, reconstruct(f), 200) - recorded) / recorded).toBeLessThan(tolerance);
  });
});
