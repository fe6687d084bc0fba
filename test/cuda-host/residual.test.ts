// The scalar residual codec on the GPU (src/backend/cuda/residual.ts, cuda/residual.cu through the
// fake driver's emulation) gives the host encoder's residuals bit for bit: scales, codes, error,
// payload and checksum — f32 and f16 vectors, odd sizes, data far from the origin, a dimension
// with no spread (scale 0), ties of the rounding; and nothing stays allocated.
import { afterEach, describe, expect, it } from 'vitest';
import { setDriverForTests } from '../../dist/backend/cuda/driver.js';
import { createCudaBackend } from '../../dist/backend/cuda/index.js';
import { encodeScalar } from '../../dist/codecs/scalar.js';
import { hostScalarBlocks } from '../../dist/codecs/scalar-blocks.js';
import { sliceRows } from '../../dist/vectors/dataset.js';
import { bitsPlanOf, bitsRows, encodeBits } from '../../dist/codecs/bits-train.js';
import { rowsInput } from '../../dist/codecs/scalar.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { allocCodes } from '../../dist/vectors/codes.js';
import { FakeCuda } from './fake-driver.js';
import { bytes, hostFigures, problem } from './residual-problem.js';
import { sampleIndices } from '../../dist/quality/sample.js';
import { figuresFromRowSums } from '../../dist/quality/reconstruction.js';

afterEach(() => setDriverForTests(undefined));


describe('scalar residuals on the GPU (fake driver) = on the host', () => {
  for (const [n, d, m, dtype, offset] of [
    [1001, 13, 5, 'f32', 0],
    [2999, 7, 11, 'f16', 0],
    [40_003, 5, 3, 'f32', 3000], // far from the origin; three blocks of rows
  ] as const) {
    for (const mode of ['int8', 'int4'] as const) {
      it(`${n} × ${d} ${dtype}, offset ${offset}, ${mode}`, async () => {
        const input = problem(n, d, m, dtype, offset, n + d);
        const fake = new FakeCuda();
        setDriverForTests(fake.api);
        const backend = await createCudaBackend(0, {});
        // The quality figures' rows: every row, or a sample in its own (unsorted) order.
        const measureRows = n < 2000 ? null : sampleIndices(n, 997, 5);
        const gpu = await backend.encodeScalar(mode, { ...input, measureRows });
        await backend.close();
        const cpu = await encodeScalar(mode, input, 1);
        expect(fake.launches.some((k) => k.startsWith('residual_rows'))).toBe(true);
        expect(Array.from(gpu.residuals.scales)).toEqual(Array.from(cpu.residuals.scales));
        expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
        expect(bytes(gpu.residuals.payload()).equals(bytes(cpu.residuals.payload()))).toBe(true);
        // int8: the device's checksum (pieces joined on the host) is the payload's; int4's is the writer's.
        expect(gpu.residuals.payloadCrc).toBe(mode === 'int8' ? crc32c(bytes(gpu.residuals.payload())) : undefined);
        expect(fake.launches.some((k) => k.startsWith('residual_row_sums'))).toBe(true);
        const figures = figuresFromRowSums(gpu.rowSums!);
        expect(figures).toEqual(hostFigures(input, cpu.residuals, measureRows));
        expect(figures.measured).toBe(measureRows === null ? n : 997);
        expect(fake.live).toBe(0);
      });
    }
  }

  it("int8 in many 64 KB pieces: the device's checksum joined on the host = the encoder threads' = the payload's", async () => {
    const input = problem(32_771, 129, 9, 'f32', 0, 5); // 4.2M values: 65 pieces, and above the threads' threshold
    setDriverForTests(new FakeCuda().api);
    const backend = await createCudaBackend(0, {});
    const gpu = await backend.encodeScalar('int8', input);
    await backend.close();
    expect(gpu.rowSums).toBeUndefined(); // no measureRows: no row sums
    expect(gpu.residuals.payloadCrc).toBe(crc32c(bytes(gpu.residuals.payload())));
    const cpu = await encodeScalar('int8', input, 2);
    expect(gpu.residuals.payloadCrc).toBe(cpu.residuals.payloadCrc);
    expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
  }, 120_000);
});

describe('bits residuals on the GPU (fake driver) = on the host', () => {
  /** `run` on a CUDA backend over a fresh fake driver (poisoned allocations), the backend closed after. */
  async function onFakeGpu<T>(run: (backend: Awaited<ReturnType<typeof createCudaBackend>>) => Promise<T>): Promise<{ got: T; fake: FakeCuda }> {
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0, {});
    const got = await run(backend);
    await backend.close();
    expect(fake.launches.some((k) => k.startsWith('residual_bits_rows'))).toBe(true);
    return { got, fake };
  }

  for (const [n, d, m, dtype, offset, R] of [
    [1001, 13, 5, 'f32', 0, 5],
    [2999, 7, 11, 'f16', 0, 2],
    [40_003, 5, 3, 'f32', 3000, 4], // far from the origin; three blocks of rows
  ] as const) {
    it(`${n} × ${d} ${dtype}, offset ${offset}, ${R} code bytes`, async () => {
      const input = problem(n, d, m, dtype, offset, n + d + R);
      const { got: gpu, fake } = await onFakeGpu((backend) => backend.encodeBits(input, R));
      const cpu = await encodeBits(input, R, 1);
      expect(gpu.residualEnergy).toBe(cpu.residualEnergy);
      expect(bytes(gpu.residuals.payload()).equals(bytes(cpu.residuals.payload()))).toBe(true);
      // The payload's checksum from the device's pieces (crc_slices, joined on the host): the writer's one pass.
      expect(fake.launches.some((k) => k.startsWith('crc_slices'))).toBe(true);
      expect(gpu.residuals.payloadCrc).toBe(crc32c(bytes(gpu.residuals.payload())));
      expect(fake.live).toBe(0);
    });

    // An MPI rank's rows under a plan made elsewhere (CodecDevice.encodeBitsRows: api/rank-encode.ts).
    it(`${n} × ${d} ${dtype}, offset ${offset}, ${R} code bytes, a plan given: the host's codes and block errors`, async () => {
      const input = problem(n, d, m, dtype, offset, n + d + R);
      const plan = bitsPlanOf(rowsInput(input, false), n, d, R);
      const gpuCodes = allocCodes<Uint8Array>('u8', n, R), cpuCodes = allocCodes<Uint8Array>('u8', n, R);
      const { got: gpu, fake } = await onFakeGpu((backend) => backend.encodeBitsRows(input, plan, gpuCodes));
      const cpu = await bitsRows(input, plan, cpuCodes, 1);
      expect(Array.from(gpu)).toEqual(Array.from(cpu));
      expect(gpu.length).toBe(Math.ceil(n / 16384));
      expect(Buffer.concat(gpuCodes.bytePieces()).equals(Buffer.concat(cpuCodes.bytePieces()))).toBe(true);
      expect(fake.live).toBe(0);
    });
  }
});

describe("a streamed encoder's blocks on the GPU (fake driver)", () => {
  it('the anchors go up once for every block of an encoder, the codes come down through one staging buffer; the host\'s figures and codes', async () => {
    const n = 3001, d = 13, m = 7;
    const input = problem(n, d, m, 'f16', 0, 77);
    const fake = new FakeCuda({ poison: true });
    setDriverForTests(fake.api);
    const backend = await createCudaBackend(0, {});
    const anchorBytes = m * d * 4;
    const anchorUploads = () => fake.syncUploads.filter((b) => b === anchorBytes).length;
    const blocks = [[0, 1700], [1700, n]].map(([r0, r1]) => ({ ...input, x: sliceRows(input.x, r0, r1), n: r1 - r0, assign: input.assign.subarray(r0, r1) }));
    const scales = Float32Array.from({ length: d }, (_, k) => 0.01 + k * 0.002);
    const allocsBefore = fake.hostAllocs;
    for (const b of blocks) {
      expect(await backend.scalarRanges(b)).toEqual(await hostScalarBlocks.scalarRanges(b));
      const gpu = await backend.scalarCodes(b, scales, 127);
      const cpu = await hostScalarBlocks.scalarCodes(b, scales, 127);
      expect([gpu.crc, Array.from(gpu.blockErrs)]).toEqual([cpu.crc, Array.from(cpu.blockErrs)]);
      expect(bytes(gpu.codes.bytePieces()).equals(bytes(cpu.codes.bytePieces()))).toBe(true);
    }
    expect(anchorUploads()).toBe(1);
    expect(fake.hostAllocs - allocsBefore).toBe(1);
    // Another encoder's anchors (another array) go up in their turn.
    const other = { ...blocks[0], anchors: input.anchors.slice() };
    expect(await backend.scalarRanges(other)).toEqual(await hostScalarBlocks.scalarRanges(other));
    expect(anchorUploads()).toBe(2);
    await backend.close();
    expect(fake.live).toBe(0);
  });
});
