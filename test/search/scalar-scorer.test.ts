// The int8/int4 candidate scorer of `vlc search` computes distances from the codes directly; it
// must give exactly the distance to the reconstruction every other command decodes.
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compress } from '../../dist/api/compress.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { reconstructInto } from '../../dist/io/vlc/reconstruct.js';
import { vlcSearchIndex } from '../../dist/search/index.js';
import { writeVectors } from '../../dist/io/write.js';
import { rowsOf } from '../../dist/io/rows.js';
import { clustered, tempDir } from '../cli/helpers.js';
import { rng } from '../rng.js';

describe('scalar residual scorer', () => {
  it.each(['int8', 'int4'] as const)('%s: the distance to the decoded vector, bit for bit', async (residual) => {
    const n = 733, d = 19;
    const dir = tempDir('scalar-scorer');
    const input = path.join(dir, 'x.npy');
    await writeVectors(input, rowsOf(clustered(n, d, 5, 6), n, d), { format: 'npy' });
    const out = path.join(dir, `x-${residual}.vlc`);
    await compress(input, { output: out, anchors: 13, device: 'cpu', iters: 5, residual });
    const file = await readVlc(out);
    const scorer = vlcSearchIndex(file).scorer!;
    const r = rng(9);
    const row = new Float32Array(d);
    for (let t = 0; t < 5; t++) {
      const q = Float32Array.from({ length: d }, () => (r() - 0.5) * 8);
      const dist = scorer.forQuery(q);
      for (let id = 0; id < n; id++) {
        reconstructInto(file, id, row);
        let want = 0;
        for (let k = 0; k < d; k++) want += (q[k] - row[k]) ** 2;
        expect(dist(id, 0)).toBe(want);
      }
    }
  });
});
