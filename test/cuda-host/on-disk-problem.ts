// What the fake-driver and GPU tests of a .vlc decoded on the device from a file read where it
// lies (backend/cuda/decode.ts over io/vlc/on-disk.ts) share: the k-NN from disk equals the k-NN
// of the file read whole bit for bit and the CPU's ranking of the host's reconstructions; every
// block of codes is read once, and an ec file's blocks are decoded on the device alone.
import { expect, vi } from 'vitest';
import type { CudaKnn } from '../../dist/backend/cuda/knn.js';
import { knn as cpuKnn } from '../../dist/backend/cpu/knn.js';
import { BlockDecoder } from '../../dist/codecs/ec/fast-decode.js';
import { readVlc } from '../../dist/io/vlc/file.js';
import { BlockedResiduals, openVlcOnDisk, setOnDiskRowsForTests } from '../../dist/io/vlc/on-disk.js';
import { reconstruct } from '../../dist/io/vlc/reconstruct.js';
import { expectSameNeighbours } from './knn-problem.js';

export async function expectOnDiskKnnEqualsWhole(
  gpuKnn: CudaKnn, file: string, coded: boolean, queries: Float32Array, nq: number, k: number, rows: number,
): Promise<void> {
  const whole = await readVlc(file);
  const { n, d } = whole.manifest;
  setOnDiskRowsForTests(rows);
  const opened = openVlcOnDisk(file)!;
  try {
    const decodes = vi.spyOn(BlockDecoder.prototype, 'decode');
    const fromDisk = await gpuKnn.knnDecoded(opened.file, n, queries, nq, k);
    const r = opened.file.residuals as InstanceType<typeof BlockedResiduals>;
    expect(r).toBeInstanceOf(BlockedResiduals);
    if (coded) {
      expect(decodes).not.toHaveBeenCalled();
      expect(r.reads).toBe(0);
      r.block(0); // the spy sees the host's decoding: a block asked for on the host decodes there
      expect(decodes).toHaveBeenCalled();
    } else expect(r.reads).toBe(Math.ceil(n / rows));
    decodes.mockRestore();
    const fromWhole = await gpuKnn.knnDecoded(whole, n, queries, nq, k);
    expect(fromDisk).toBeDefined();
    expect(Array.from(fromDisk!.ids)).toEqual(Array.from(fromWhole!.ids));
    expect(Array.from(fromDisk!.dists)).toEqual(Array.from(fromWhole!.dists));
    expectSameNeighbours(fromDisk!, await cpuKnn(reconstruct(whole), n, queries, nq, d, k + 1), nq, k, 1e-5, k + 1);
  } finally {
    opened.close();
    setOnDiskRowsForTests();
  }
}
