// On a real GPU: the scalar residual codec (src/backend/cuda/residual.ts) gives the host encoder's
// residuals bit for bit on odd sizes, f32 and f16, near and far from the origin, and the quality
// figures' row sums made on the device (the host's figures, to the bit); the rows encoders (rows
// split over GPUs or MPI ranks: CodecDevice.encodeScalarRows / encodeBitsRows) the host's too. Skipped without one.
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { describe, expect, it } from 'vitest';
import { createCudaBackend, probeCuda } from '../../dist/backend/cuda/index.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { bitsPlanOf, encodeBits } from '../../dist/codecs/bits-train.js';
import { rowsInput } from '../../dist/codecs/scalar.js';
import { BLOCK_ROWS } from '../../dist/codecs/scalar-rows.js';
import { hostDevice } from '../../dist/backend/host.js';
import { allocCodes } from '../../dist/vectors/codes.js';
import { bytes, hostFigures, problem } from '../cuda-host/residual-problem.js';
import { sampleIndices } from '../../dist/quality/sample.js';
import { figuresFromRowSums } from '../../dist/quality/reconstruction.js';

const hasGpu = probeCuda().ok;

describe.skipIf(!hasGpu)('scalar residuals on the GPU = on the host', () => {
  for (const [n, d, m, dtype, offset] of [
    [100_003, 131, 257, 'f32', 0],
    [70_001, 97, 61, 'f16', 0],
    [50_021, 67, 33, 'f32', 2500],
  ] as const) {
    for (const mode of ['int8', 'int4'] as const) {
      it(`${n} × ${d} ${dtype}, offset ${offset}, ${mode}`, async () => {
        const input = problem(n, d, m, dtype, offset, n + d);
        const backend = await createCudaBackend(0);
        try {
          const measureRows = sampleIndices(n, 20_011, 9); // the quality figures' rows, in sample order
          const gpu = await backend.encodeScalar(mode, { ...input, measureRows });
          const cpu = await encodeScalar(mode, input);
          // The figures from the device's row sums = the host's loop over the decoded rows, to the bit.
          expect(figuresFromRowSums(gpu.rowSums!)).toEqual(hostFigures(input, cpu.residuals, measureRows));
          expect(Array.from(gpu.residuals.scales)).toEqual(Array.from(cpu.residuals.scales));
          expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
          expect(bytes(gpu.residuals.payload()).equals(bytes(cpu.residuals.payload()))).toBe(true);
          // int8: the checksum the device computed (cuda/residual.cu crc_slices, joined on the host) is the payload's.
          if (mode === 'int8') expect(gpu.residuals.payloadCrc).toBe(crc32c(bytes(gpu.residuals.payload())));
          if (cpu.residuals.payloadCrc !== undefined) expect(gpu.residuals.payloadCrc).toBe(cpu.residuals.payloadCrc);
        } finally {
          await backend.close();
        }
      }, 120_000);
    }
  }
});

describe.skipIf(!hasGpu)('bits residuals on the GPU = on the host', () => {
  for (const [n, d, m, dtype, offset, R] of [
    [100_003, 131, 257, 'f32', 0, 70],
    [70_001, 97, 61, 'f16', 0, 37],
    [50_021, 67, 33, 'f32', 2500, 29],
  ] as const) {
    it(`${n} × ${d} ${dtype}, offset ${offset}, ${R} code bytes`, async () => {
      const input = problem(n, d, m, dtype, offset, n + d + R);
      const backend = await createCudaBackend(0);
      try {
        const gpu = await backend.encodeBits(input, R);
        const cpu = await encodeBits(input, R);
        expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
        expect(bytes(gpu.residuals.payload()).equals(bytes(cpu.residuals.payload()))).toBe(true);
        expect(gpu.residuals.payloadCrc).toBe(crc32c(bytes(gpu.residuals.payload()))); // the device's pieces' checksums, joined
      } finally {
        await backend.close();
      }
    }, 120_000);
  }
});

describe.skipIf(!hasGpu)("the rows encoders (a range of whole blocks under a plan made elsewhere) on the GPU = on the host", () => {
  const n = 3 * BLOCK_ROWS + 777, d = 67;
  const input = problem(n, d, 41, 'f16', 0, 4242);
  const blocks = Math.ceil(n / BLOCK_ROWS);
  for (const mode of ['int8', 'int4'] as const)
    it(`${mode}: the ranges handed over, the codes and each block's error`, async () => {
      const backend = await createCudaBackend(0);
      try {
        const seen: Array<[Float64Array, Float64Array]> = [];
        const scalesFrom = async (maxAbs: Float64Array, sumSq: Float64Array) => {
          seen.push([Float64Array.from(maxAbs), Float64Array.from(sumSq)]);
          return (await encodeScalar(mode, input, 1)).residuals.scales; // the whole data's scales
        };
        const gpuCodes = allocCodes<Int8Array>('i8', n, d), cpuCodes = allocCodes<Int8Array>('i8', n, d);
        const gpu = await backend.encodeScalarRows(mode, input, scalesFrom, gpuCodes);
        const cpu = await hostDevice.encodeScalarRows(mode, input, scalesFrom, cpuCodes);
        expect(Array.from(seen[0][0])).toEqual(Array.from(seen[1][0].subarray(0, blocks * d)));
        expect(Array.from(seen[0][1])).toEqual(Array.from(seen[1][1].subarray(0, blocks * d)));
        expect(Array.from(gpu)).toEqual(Array.from(cpu));
        expect(Buffer.concat(gpuCodes.bytePieces()).equals(Buffer.concat(cpuCodes.bytePieces()))).toBe(true);
      } finally {
        await backend.close();
      }
    }, 120_000);

  it('bits 33B: the codes and each block\'s error', async () => {
    const backend = await createCudaBackend(0);
    try {
      const plan = bitsPlanOf(rowsInput(input, false), n, d, 33);
      const gpuCodes = allocCodes<Uint8Array>('u8', n, 33), cpuCodes = allocCodes<Uint8Array>('u8', n, 33);
      const gpu = await backend.encodeBitsRows(input, plan, gpuCodes);
      const cpu = await hostDevice.encodeBitsRows(input, plan, cpuCodes);
      expect(Array.from(gpu)).toEqual(Array.from(cpu));
      expect(Buffer.concat(gpuCodes.bytePieces()).equals(Buffer.concat(cpuCodes.bytePieces()))).toBe(true);
    } finally {
      await backend.close();
    }
  }, 120_000);
});
