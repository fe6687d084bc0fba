// --drop-invalid keeps the dropped rows' input ids: the file lists them, search answers with input
// row numbers (not positions among the kept rows), and info, --json, --stats and decompress say
// which rows are missing.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateManifest } from '../../dist/io/vlc/manifest.js';
import { composeDropped, inputRowId } from '../../dist/vectors/row-ids.js';
import { clustered, tempDir, vlc, writeNpy } from './helpers.js';

const dir = tempDir('dropped');
const n = 300;
const d = 8;
const x = clustered(n, d, 5, 7);
const bad = [17, 40, 41];
const withNaN = x.slice();
withNaN[17 * d + 3] = NaN;
withNaN[40 * d] = Infinity;
withNaN[41 * d + 7] = -Infinity;
const input = writeNpy(path.join(dir, 'x.npy'), withNaN, n, d);
const out = path.join(dir, 'x.vlc');
const queryRows = [0, 16, 18, 39, 42, 299];
const queries = writeNpy(path.join(dir, 'q.npy'), Float32Array.from(queryRows.flatMap((i) => Array.from(x.subarray(i * d, (i + 1) * d)))), queryRows.length, d);

describe('rows dropped by --drop-invalid keep their ids', () => {
  it('maps kept positions to input ids and merges two rounds of drops', () => {
    expect([0, 16, 17, 38, 39, 296].map((k) => inputRowId(k, bad))).toEqual([0, 16, 18, 39, 42, 299]);
    expect(inputRowId(5, [])).toBe(5);
    // A reader dropped input rows 2 and 5 (null); then kept rows 2 and 4 (input rows 3 and 6) were invalid.
    expect(composeDropped([2, 5], [2, 4])).toEqual([2, 3, 5, 6]);
  });

  it('compress names them, and the file, --stats and info list them', () => {
    const stats = path.join(dir, 'stats.json');
    const r = vlc(['compress', input, '-o', out, '--drop-invalid', '--residual', 'int8', '--anchors', '8', '--device', 'cpu', '--stats', stats]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('skipped 3 vectors containing NaN or Inf (--drop-invalid): input rows 17, 40, 41');
    const s = JSON.parse(fs.readFileSync(stats, 'utf8'));
    expect([s.n, s.dropped, s.dropped_rows]).toEqual([n - 3, 3, bad]);
    const info = JSON.parse(vlc(['info', out, '--json']).stdout);
    expect([info.dropped, info.dropped_rows]).toEqual([3, bad]);
    expect(vlc(['info', out]).stdout).toContain('3 invalid rows dropped: input rows 17, 40, 41');
  });

  it('search answers with input row ids, on both sides of the dropped rows', () => {
    for (const args of [['--nprobe', '8'], ['--nprobe', '1']]) {
      const r = vlc(['search', out, '--queries', queries, '-k', '3', '--device', 'cpu', '--json', ...args]);
      expect(r.code, r.stderr).toBe(0);
      const results = JSON.parse(r.stdout).results as { ids: number[] }[];
      expect(results.map((q) => q.ids[0])).toEqual(queryRows); // each query's nearest is itself (int8 residuals)
      for (const q of results) for (const id of q.ids) expect(bad).not.toContain(id);
    }
  });

  it('decompress says which input rows are not in its output', () => {
    const r = vlc(['decompress', out, '-o', path.join(dir, 'back.npy')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('wrote 297 x 8 f32 vectors');
    expect(r.stderr).toContain('3 input rows were dropped by --drop-invalid at compress and are not in the output: 17, 40, 41');
  });

  it('a file without dropped rows has no id list; a damaged list is refused with the field named', () => {
    const clean = path.join(dir, 'clean.vlc');
    expect(vlc(['compress', writeNpy(path.join(dir, 'clean.npy'), x, n, d), '-o', clean, '--residual', 'none', '--anchors', '8', '--device', 'cpu']).code).toBe(0);
    expect(fs.readFileSync(clean).toString('latin1')).not.toContain('droppedRows');
    const manifest = JSON.parse(vlc(['info', out, '--json']).stdout);
    expect(manifest.input_dtype).toBe('f32');
    const base = { n: 10, d: 2, m: 2, metric: 'l2', anchorDtype: 'f16', assignmentWidth: 'u8', residual: 'none', sections: [], training: { energy: 1, iterations: 1 }, config: {}, seed: 1, tool: { version: 'x' }, device: 'cpu' };
    expect(validateManifest({ ...base, input: { dtype: 'u8', dropped: 2, droppedRows: [3, 11] } }, 'x.vlc').input).toEqual({ dtype: 'u8', dropped: 2, droppedRows: [3, 11] });
    expect(() => validateManifest({ ...base, input: { dtype: 'f32', dropped: 2, droppedRows: [3, 3] } }, 'x.vlc')).toThrow(/input\.droppedRows/);
    expect(() => validateManifest({ ...base, input: { dtype: 'f32', dropped: 2, droppedRows: [3] } }, 'x.vlc')).toThrow(/input\.droppedRows/);
    expect(() => validateManifest({ ...base, input: { dtype: 'f32', dropped: 1, droppedRows: [12] } }, 'x.vlc')).toThrow(/below 11/);
    // Older files: no ids, and a dtype this vlc does not know reads as f32.
    expect(validateManifest({ ...base, input: { dtype: 'q4', dropped: 1 } }, 'x.vlc').input).toEqual({ dtype: 'f32', dropped: 1 });
  });
});
