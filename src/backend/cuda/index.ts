// The CUDA backend: prebuilt PTX kernels driven through the CUDA driver API (koffi → libcuda.so.1).
// Layers, bottom up: driver.ts (bound functions, injectable) → check.ts (errors) → probe.ts
// (what GPUs exist) → context.ts (one GPU ready: context, stream, modules, pool) → engine.ts (the
// Engine of ../engine.ts, with its parts). options.ts holds every switch. docs/cuda.md explains the
// kernels, the module layout and the measurements.
import { UsageError } from '../../errors.js';
import type { Backend } from '../types.js';
import type { Engine } from '../engine.js';
import type { ExactKnn } from '../device.js';
import { hostDevice } from '../host.js';
import { asRows, type Dataset } from '../../vectors/dataset.js';
import { driver } from './driver.js';
import { probeCuda, type CudaProbe, type CudaDeviceInfo } from './probe.js';
import { CudaContext } from './context.js';
import { CudaEngine } from './engine.js';
import { HostRows } from './host-rows.js';
import { releaseAfterUpload, unlockOffThread, unlocksSettled } from './pin.js';
import { CudaError } from './check.js';
import { cudaOptions, cudaOptionsFromEnv, type CudaOptions } from './options.js';
import { bitsRowsOnGpu, encodeBitsOnGpu, encodeScalarOnGpu, scalarRowsOnGpu } from './residual.js';
import { BlockAnchors, scalarCodesOnGpu, scalarRangesOnGpu } from './residual-blocks.js';
import { blocksOf } from '../../codecs/scalar-rows.js';
import { CudaKnn, gpuOrHostKnn } from './knn.js';
import { decodableOnDevice, decodeRowsOnGpu } from './decode.js';
import { ecDeviceBytes } from './ec.js';
import { EcResiduals } from '../../codecs/ec/residuals.js';
import type { Decodable } from '../../io/vlc/reconstruct.js';
import { memInfo } from './pool.js';
import type { EncodedResiduals, ResidualInput } from '../../codecs/types.js';
import type { BitsPlan } from '../../codecs/bits-rows.js';
import type { ScalesFrom } from '../../codecs/split.js';
import type { Codes } from '../../vectors/codes.js';
import { log } from '../../log.js';

export { probeCuda, CudaEngine, CudaContext, CudaError, cudaOptionsFromEnv };
export type { CudaProbe, CudaDeviceInfo, CudaOptions };

/** Share of the free GPU memory the residual encoder may take (the driver keeps some for itself). */
const RESIDUAL_SHARE = 0.9;

export class CudaBackend implements Backend {
  readonly kind = 'cuda' as const;
  /** pq's subspaces train this many at a time (engine.ts TrainEngine). */
  readonly smallEnginesAtOnce = 8;
  readonly label: string;
  private engines = new Set<Engine>();
  /** This GPU's own k-NN kernels (knn.ts), up to their k limit and room. */
  readonly gpuKnn: CudaKnn;
  /** Exact k-NN on this GPU, the host's beyond its k limit or room (knn.ts gpuOrHostKnn): compress's quality figures, eval's ground truth. */
  readonly exactKnn: ExactKnn;

  /** A streamed encoder's stored anchors, on this GPU once (residual-blocks.ts). */
  private blockAnchors: BlockAnchors;

  constructor(readonly ctx: CudaContext, readonly options: CudaOptions) {
    this.blockAnchors = new BlockAnchors(ctx);
    this.label = `${ctx.info.name} (${ctx.where})`;
    this.gpuKnn = new CudaKnn(ctx, options.maxDeviceBytes);
    this.exactKnn = gpuOrHostKnn(this.gpuKnn);
  }

  rowsUploadedOnce(data: Dataset): void {
    releaseAfterUpload(data.buffer);
  }

  /** The host's page locks go on a libuv thread while the host measures and writes (pin.ts unlockOffThread), once the stream is drained. */
  uploadsOver(): void {
    this.ctx.drainBlocking();
    unlockOffThread(this.ctx);
  }

  /** An engine over `data`; `o` overrides the backend's options for this engine (tests, bench). */
  open(data: Dataset, m: number, o: Partial<CudaOptions> = {}): Promise<CudaEngine> {
    return this.opened(new HostRows(data), m, o);
  }

  /**
   * An engine over the listed rows of `data`, read in place: no host copy of them while they stay
   * resident on the GPU (host-rows.ts). The same engine as open(selectRows(data, rows), m).
   */
  openRows(data: Dataset, rows: Int32Array, m: number, o: Partial<CudaOptions> = {}): Promise<CudaEngine> {
    return this.opened(new HostRows(data, rows), m, o);
  }

  private async opened(rows: HostRows, m: number, o: Partial<CudaOptions>): Promise<CudaEngine> {
    const e = await CudaEngine.create(this.ctx, rows, m, cudaOptions({ ...this.options, ...o }));
    this.engines.add(e);
    const dispose = e.dispose.bind(e);
    e.dispose = async () => {
      this.engines.delete(e);
      await dispose();
    };
    return e;
  }

  /**
   * The scalar residuals on this GPU (residual.ts), when the vectors, codes and row errors fit in
   * its free memory (and under VLC_CUDA_MAX_BYTES); else on the host, which needs no tiles.
   */
  async encodeScalar(mode: 'int8' | 'int4', input: ResidualInput): Promise<EncodedResiduals> {
    const { n, d } = input;
    const measured = input.measureRows === undefined ? 0 : input.measureRows === null ? n : input.measureRows.length;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 3 : 5) + n * 12 + measured * 36 + input.anchors.length * 4;
    return this.residualsFit(need, 'residuals') ? encodeScalarOnGpu(this.ctx, mode, input) : hostDevice.encodeScalar(mode, input);
  }

  /** A streamed block's scalar ranges on this GPU (residual-blocks.ts) when its rows fit; else on the host's threads. */
  async scalarRanges(input: ResidualInput): Promise<{ maxAbs: Float64Array; sumSq: Float64Array }> {
    const { n, d } = input;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 2 : 4) + n * 4 + input.anchors.length * 4 + blocksOf(n) * d * 16;
    if (!this.residualsFit(need, 'residual ranges')) return hostDevice.scalarRanges(input);
    return this.blockAnchors.with(input.anchors, (C) => scalarRangesOnGpu(this.ctx, input, C));
  }

  /** A streamed block's int8 codes on this GPU (residual-blocks.ts) when its rows, codes and row errors fit; else on the host's threads. */
  async scalarCodes(input: ResidualInput, scales: Float32Array, L: number): Promise<{ codes: Codes<Int8Array>; blockErrs: Float64Array; crc: number }> {
    const { n, d } = input;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 3 : 5) + n * 12 + input.anchors.length * 4;
    if (!this.residualsFit(need, 'residuals')) return hostDevice.scalarCodes(input, scales, L);
    return this.blockAnchors.with(input.anchors, (C) => scalarCodesOnGpu(this.ctx, input, scales, L, C));
  }

  /** The bits codec's rows on this GPU (residual.ts) when the vectors, codes and row errors fit; else on the host's threads. */
  async encodeBits(input: ResidualInput, R: number): Promise<EncodedResiduals> {
    const { n, d } = input;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 2 : 4) + n * (R + 12) + input.anchors.length * 4;
    return this.residualsFit(need, 'bits residuals') ? encodeBitsOnGpu(this.ctx, input, R) : hostDevice.encodeBits(input, R);
  }

  /** int8 / int4 rows whose scales are made elsewhere (codecs/split.ts) on this GPU (residual.ts) when they fit, as encodeScalar; else on the host's threads. */
  async encodeScalarRows(mode: 'int8' | 'int4', input: ResidualInput, scalesFrom: ScalesFrom, codes: Codes<Int8Array>): Promise<Float64Array> {
    const { n, d } = input;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 3 : 5) + n * 12 + input.anchors.length * 4;
    if (!this.residualsFit(need, 'residuals')) return hostDevice.encodeScalarRows(mode, input, scalesFrom, codes);
    return scalarRowsOnGpu(this.ctx, mode, input, scalesFrom, codes);
  }

  /** The bits codec's rows under a given plan on this GPU (residual.ts) when they fit, as encodeBits; else on the host's threads. */
  async encodeBitsRows(input: ResidualInput, plan: BitsPlan, codes: Codes<Uint8Array>): Promise<Float64Array> {
    const { n, d } = input;
    const need = n * d * (asRows(input.x, n, d).dtype === 'f16' ? 2 : 4) + n * (plan.R + 12) + input.anchors.length * 4;
    if (!this.residualsFit(need, 'bits residuals')) return hostDevice.encodeBitsRows(input, plan, codes);
    return bitsRowsOnGpu(this.ctx, input, plan, codes);
  }

  /**
   * A file's rows decoded on this GPU (decode.ts, ec.ts) when it has a decoder for the residuals and
   * the residuals' device form (ec: its blocks and tables; else at most the rows' f32, the widest
   * codes), the anchors, assignments and the rows fit its free memory (its share) and
   * VLC_CUDA_MAX_BYTES; else the host's.
   */
  async decodeRows(file: Decodable, r0: number, r1: number, out: Float32Array): Promise<Float32Array> {
    if (!decodableOnDevice(file)) return hostDevice.decodeRows(file, r0, r1, out);
    const { d } = file.manifest;
    const held = file.residuals instanceof EcResiduals ? ecDeviceBytes(file.residuals) : file.residuals ? r1 * d * 4 : 0;
    const need = held + file.anchors.length * 4 + r1 * 4 + (r1 - r0) * d * 4;
    return this.residualsFit(need, 'decode') ? decodeRowsOnGpu(this.ctx, file, r0, r1, out) : hostDevice.decodeRows(file, r0, r1, out);
  }

  /** Whether a residual encoder's `need` bytes fit this GPU's free memory (its share) and VLC_CUDA_MAX_BYTES; -v says when not. */
  private residualsFit(need: number, what: string): boolean {
    this.ctx.makeCurrent();
    const [free] = memInfo(this.ctx.drv);
    const room = Math.min(free * RESIDUAL_SHARE, this.options.maxDeviceBytes ?? Infinity);
    if (need <= room) return true;
    log().debug(`${what} on the host: they need ${need} bytes of GPU memory, ${Math.floor(room)} available`);
    return false;
  }

  async close(): Promise<void> {
    for (const e of [...this.engines]) await e.dispose().catch(() => undefined);
    await unlocksSettled(); // the unlocks uploadsOver handed to a thread, over before the context goes
    this.ctx.close();
  }
}

/** "0 (NVIDIA H100 80GB HBM3), 1 (...)" for error messages. */
function listDevices(devices: CudaDeviceInfo[]): string {
  return devices.map((d) => `${d.index} (${d.name})`).join(', ');
}

/** The probe (made here unless given), after checking that GPU `gpu` exists: UsageError (exit 2) naming the GPUs there are where not. */
export function checkGpuIndex(gpu: number, probe: CudaProbe = probeCuda()): CudaProbe & { ok: true } {
  if (!probe.ok) throw new CudaError(probe.reason, -1);
  if (!Number.isInteger(gpu) || gpu < 0 || gpu >= probe.devices.length) {
    throw new UsageError(
      `--gpu ${gpu}: no such GPU; this machine has ${probe.devices.length === 1 ? 'GPU' : 'GPUs'} ${listDevices(probe.devices)} (see \`vlc devices\`)`,
    );
  }
  return probe;
}

/**
 * Open GPU `gpu` with `options` (default: read from the VLC_CUDA_* variables, once, here).
 * DeviceError (exit 3) when CUDA is unusable; UsageError (exit 2) for a bad --gpu or variable.
 */
export async function createCudaBackend(gpu: number, options?: Partial<CudaOptions>): Promise<CudaBackend> {
  const o = options ? cudaOptions(options) : cudaOptionsFromEnv();
  const probe = checkGpuIndex(gpu);
  const t = performance.now();
  const ctx = CudaContext.open(driver(), probe.devices[gpu], probe.driverVersion, o.machineCode);
  ctx.pinCopies = o.pinCopies;
  log().debug(`${ctx.where}: context and modules ready in ${(performance.now() - t).toFixed(0)} ms`);
  return new CudaBackend(ctx, o);
}
