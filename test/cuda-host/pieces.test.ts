// The GPU's host code moves codes a piece at a time (vectors/codes.ts): the encoder downloads its
// codes into the host's pieces, the decoder uploads them from there. With the piece size shrunk
// to a few rows (setMaxViewBytesForTests), every piece boundary is crossed — and the codes, the
// payload and the decoded rows must be those of one piece (fake driver).
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { encodeBits } from '../../dist/codecs/bits-train.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { setMaxViewBytesForTests } from '../../dist/vectors/dataset.js';
import { decodeProblem, expectDeviceRowsEqualHost, type DecodeMode } from './decode-problem.js';
import { FakeCuda } from './fake-driver.js';
import { bytes, problem } from './residual-problem.js';

afterEach(() => {
  setDriverForTests(undefined);
  setMaxViewBytesForTests();
});

const pieceCount = (r: unknown) => (r as { codes: { pieces: unknown[] } }).codes.pieces.length;

describe('codes in pieces on the GPU host path (fake driver)', () => {
  it.each(['int8', 'int4', 'bits'] as const)('%s: the encoder downloads its codes into many pieces, the same bytes as the host in one', async (mode) => {
    const [n, d, m] = [1001, 13, 5];
    const input = problem(n, d, m, 'f32', 0, 17);
    const encodeHost = () => (mode === 'bits' ? encodeBits(input, 5, 1) : encodeScalar(mode, input, 1));
    const cpu = await encodeHost();
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0, {});
    setMaxViewBytesForTests(4 * d + 1); // one f32 row of the vectors: 4 rows of int8 codes a piece
    const gpu = mode === 'bits' ? await backend.encodeBits(input, 5) : await backend.encodeScalar(mode, input);
    await backend.close();
    expect(pieceCount(gpu.residuals)).toBeGreaterThan(50);
    expect(pieceCount(cpu.residuals)).toBe(1);
    expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
    expect(bytes(gpu.residuals.payload()).equals(bytes(cpu.residuals.payload()))).toBe(true);
    expect(fake.live).toBe(0);
  });

  it.each(['int8', 'int4', 'pq8', 'pq4', 'bits'] as DecodeMode[])('%s: the decoder uploads the codes from many pieces, rows as the host decodes them', async (mode) => {
    const [n, d, m] = [301, 37, 13];
    setMaxViewBytesForTests(4 * d + 1);
    const file = decodeProblem(mode, n, d, m, 23);
    expect(pieceCount(file.residuals)).toBeGreaterThan(5);
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0, {});
    try {
      for (const [r0, r1] of [[0, n], [3, 9], [117, 250], [n - 3, n]]) await expectDeviceRowsEqualHost(backend.ctx, file, n, r0, r1);
    } finally {
      await backend.close();
    }
    expect(fake.live).toBe(0);
  });
});
