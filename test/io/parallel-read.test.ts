// Large f32/f16 .npy inputs are read by several threads (src/io/readers/parallel-read.ts): the same
// vectors in memory, and the same first bad row (NaN, Inf, too large) in the error, as the
// one-thread read. The thresholds are lowered so that small files take the parallel path.
import { afterEach, describe, expect, it } from 'vitest';
import { readDataset } from '../../dist/io/read.js';
import { setParallelReadForTests } from '../../dist/io/readers/parallel-read.js';
import { viewAll } from '../../dist/vectors/dataset.js';
import { maxAbsOf } from '../../dist/vectors/scale.js';
import { openBlockReader } from '../../dist/io/readers/blocks.js';
import { encodeValues, npyBytes, scratchDir, writeFile } from './helpers.js';

const dir = scratchDir('parallel');
afterEach(() => setParallelReadForTests());

async function both(file: string) {
  setParallelReadForTests(2 ** 50);
  const one = await readDataset(file).then((ds) => Array.from(viewAll(ds)), (e: Error) => e.message);
  setParallelReadForTests(0, 4096 + 12); // a thread per ~4 KB: ranges and chunks cut rows anywhere
  const many = await readDataset(file).then((ds) => Array.from(viewAll(ds)), (e: Error) => e.message);
  return { one, many };
}

describe('reading with several threads', () => {
  for (const descr of ['<f4', '<f2']) {
    it(`${descr}: the same values as one thread`, async () => {
      const { one, many } = await both(writeFile(dir, `ok${descr.slice(1)}.npy`, npyBytes({ descr, shape: [3001, 7] })));
      expect(typeof one).toBe('object');
      expect(many).toEqual(one);
    });

    it(`${descr}: the same first bad row, in a later thread's range`, async () => {
      const body = encodeValues(descr, [3001, 7]);
      const eb = descr === '<f4' ? 4 : 2;
      for (const row of [2500, 1777]) {
        const at = (row * 7 + 3) * eb;
        if (eb === 4) new DataView(body.buffer).setFloat32(at, NaN, true);
        else new DataView(body.buffer).setUint16(at, 0x7e00, true);
      }
      const { one, many } = await both(writeFile(dir, `bad${descr.slice(1)}.npy`, npyBytes({ descr, shape: [3001, 7], body })));
      expect(one).toMatch(/row 1777 has a non-finite value/);
      expect(many).toEqual(one);
    });
  }

  for (const descr of ['<f4', '<f2']) {
    it(`${descr}: a block read and checked on threads (a streamed compress) has one thread's values, largest |x| and problem`, async () => {
      const body = encodeValues(descr, [3001, 7]);
      const eb = descr === '<f4' ? 4 : 2;
      const file = writeFile(dir, `block${descr.slice(1)}.npy`, npyBytes({ descr, shape: [3001, 7], body }));
      const reader = openBlockReader(file)!;
      try {
        const cases: Array<[number, number]> = [[0, 3001], [123, 2999]];
        for (const [r0, r1] of cases) {
          setParallelReadForTests(2 ** 50);
          const one = await reader.readChecked(r0, r1);
          setParallelReadForTests(0, 4096 + 12);
          const many = await reader.readChecked(r0, r1);
          expect(Array.from(viewAll(many.ds))).toEqual(Array.from(viewAll(one.ds)));
          expect(one.maxAbs).toBe(maxAbsOf(one.ds));
          expect(one.maxAbs).toBeGreaterThan(0);
          expect([many.maxAbs, many.problem]).toEqual([one.maxAbs, undefined]);
        }
      } finally {
        reader.close();
      }
      // A NaN in row 2500: both name it, numbered in the file.
      if (eb === 4) new DataView(body.buffer).setFloat32((2500 * 7 + 3) * eb, NaN, true);
      else new DataView(body.buffer).setUint16((2500 * 7 + 3) * eb, 0x7e00, true);
      const bad = openBlockReader(writeFile(dir, `block-bad${descr.slice(1)}.npy`, npyBytes({ descr, shape: [3001, 7], body })))!;
      try {
        setParallelReadForTests(2 ** 50);
        const one = await bad.readChecked(2000, 3001);
        setParallelReadForTests(0, 4096 + 12);
        const many = await bad.readChecked(2000, 3001);
        expect(one.problem?.what).toMatch(/row 2500 has a non-finite value/);
        expect(many.problem).toEqual(one.problem);
      } finally {
        bad.close();
      }
    });
  }
});
