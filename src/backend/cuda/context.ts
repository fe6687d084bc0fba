// One GPU made ready for work: its primary context, a stream, the PTX modules and their kernels,
// and the helpers every engine call uses — launch (checked), copies, and an asynchronous wait
// that polls an event between turns of the event loop, so Ctrl-C is honoured within a second
// even while the GPU is busy (no long blocking synchronisation on the main thread).
import { setImmediate as yieldImmediate, setTimeout as sleep } from 'node:timers/promises';
import { InterruptedError } from '../../errors.js';
import { interruptSignal } from '../../interrupt.js';
import { log } from '../../log.js';
import type { CudaDriver, Handle } from './driver.js';
import { CudaError, check, describeStatus } from './check.js';
import { CU } from './status.js';
import { MODULES, moduleRunsOn, readCubin, readPtx, ptxIsaOf, ptxTooNewMessage, type ModuleName } from './ptx.js';
import { DevicePool, type DeviceBuffer } from './pool.js';
import { PinnedHost } from './host-memory.js';
import { piecesUnlockedInWaits, unlockAll, unlockedOnThread, unlockWhileWaiting } from './pin.js';
import type { CudaDeviceInfo } from './probe.js';

/** Dynamic shared memory a kernel may take without raising its limit, and the attribute that raises it. */
const DEFAULT_SHARED = 48 * 1024;
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

/** Longest synchronous spin on an event before yielding to the event loop. */
const SPIN_MS = 0.5;

const PTX_REJECTED = new Set<number>([CU.UNSUPPORTED_PTX_VERSION, CU.INVALID_PTX, CU.NO_BINARY_FOR_GPU, CU.JIT_COMPILER_NOT_FOUND]);

/**
 * The context current on this (the only JS) thread, so that switching costs a driver call only
 * when several GPUs' engines take turns. Every cuCtxSetCurrent goes through setCurrentContext.
 */
let current: { drv: CudaDriver; ctx: Handle } | undefined;

export function setCurrentContext(drv: CudaDriver, ctx: Handle): void {
  if (current?.drv === drv && current.ctx === ctx) return;
  check(drv, drv.cuCtxSetCurrent(ctx), 'cuCtxSetCurrent');
  current = { drv, ctx };
}

/** A context was released: the next setCurrentContext must ask the driver again. */
export function forgetContext(ctx: Handle): void {
  if (current?.ctx === ctx) current = undefined;
}

export class CudaContext {
  readonly pool: DevicePool;
  readonly where: string;
  private ctx: Handle = 0n;
  private retained = false;
  stream: Handle = 0n;
  /** The second stream, for uploads that overlap the kernels (spans.ts); created on first use. */
  private copyStreamHandle: Handle = 0n;
  /** This context's page-locked host buffers (host-memory.ts), freed at close. */
  readonly pinned: PinnedHost;
  private modules = new Map<ModuleName, Handle>();
  private functions = new Map<string, Handle>();
  /** Dynamic shared memory limits raised so far, per function. */
  private sharedLimit = new Map<Handle, number>();
  private events: Handle[] = [];
  /** Kernels launched since the last completed wait: an asynchronous failure is one of them. */
  private inFlight: string[] = [];
  private out = new BigUint64Array(1);
  private closed = false;
  /** Large copies page-lock the host's buffer and run asynchronously (pin.ts; CudaOptions.pinCopies). */
  pinCopies = true;

  private constructor(
    readonly drv: CudaDriver,
    readonly info: CudaDeviceInfo,
    readonly driverVersion: number,
  ) {
    this.where = `cuda:${info.index}`;
    this.pool = new DevicePool(drv, this.where, () => this.makeCurrent());
    this.pinned = new PinnedHost(drv, () => this.makeCurrent());
  }

  /**
   * Retain the device's primary context, create a stream and load every module: its machine code
   * where `machineCode` allows and build/ has some for this GPU (ptx.ts readCubin), else its PTX.
   */
  static open(drv: CudaDriver, info: CudaDeviceInfo, driverVersion: number, machineCode = true): CudaContext {
    const c = new CudaContext(drv, info, driverVersion);
    try {
      c.init(machineCode);
      return c;
    } catch (e) {
      c.close();
      throw e;
    }
  }

  private init(machineCode: boolean): void {
    const { drv } = this;
    const i32 = new Int32Array(1);
    check(drv, drv.cuDeviceGet(i32, this.info.index), `cuDeviceGet(${this.info.index})`);
    check(drv, drv.cuDevicePrimaryCtxRetain(this.out, i32[0]), 'cuDevicePrimaryCtxRetain');
    this.ctx = this.out[0];
    this.retained = true;
    this.makeCurrent();
    // Flags 0: a blocking stream, ordered with the synchronous copies of the legacy stream.
    check(drv, drv.cuStreamCreate(this.out, 0), 'cuStreamCreate');
    this.stream = this.out[0];
    for (const name of MODULES) if (moduleRunsOn(name, this.info.computeCapability)) this.loadModule(name, machineCode);
  }

  private loadModule(name: ModuleName, machineCode: boolean): void {
    const cubin = machineCode ? readCubin(name, this.info.computeCapability) : undefined;
    if (cubin) {
      const st = this.drv.cuModuleLoadData(this.out, cubin);
      if (st === 0) {
        this.modules.set(name, this.out[0]);
        return;
      }
      // A driver that cannot take this machine code may still JIT the PTX; its error, if any, says why.
      log().debug(`build/sm_90/${name}.cubin not loaded on ${this.where} (${describeStatus(this.drv, st)}); loading its PTX`);
    }
    const image = readPtx(name);
    const st = this.drv.cuModuleLoadData(this.out, image);
    if (PTX_REJECTED.has(st)) {
      throw new CudaError(`${ptxTooNewMessage(name, ptxIsaOf(image), this.driverVersion)} (${describeStatus(this.drv, st)})`, st);
    }
    check(this.drv, st, `loading build/${name}.ptx (cuModuleLoadData)`);
    this.modules.set(name, this.out[0]);
  }

  /** Whether module `name` was loaded (modules for one compute capability only load there). */
  hasModule(name: ModuleName): boolean {
    return this.modules.has(name);
  }

  /** Make this context current for the driver calls that follow (a no-op when it already is). */
  makeCurrent(): void {
    setCurrentContext(this.drv, this.ctx);
  }

  /** The kernel `fn` of module `mod`, looked up once. */
  kernel(mod: ModuleName, fn: string): Handle {
    let f = this.functions.get(fn); // function names are unique across the modules (kernels.test.ts)
    if (f === undefined) {
      const m = this.modules.get(mod);
      if (m === undefined) throw new Error(`module ${mod} not loaded`);
      check(this.drv, this.drv.cuModuleGetFunction(this.out, m, fn), `cuModuleGetFunction(${fn})`);
      f = this.out[0];
      this.functions.set(fn, f);
    }
    return f;
  }

  /**
   * Launch a grid of grid × gridY blocks on the stream; arguments as typed arrays of one element
   * each. Dynamic shared memory past the 48 KB every kernel may take needs the function's limit
   * raised first (cuFuncSetAttribute), once per function.
   */
  launch(mod: ModuleName, fn: string, grid: number, block: number, args: ArrayBufferView[], sharedBytes = 0, gridY = 1): void {
    if (grid <= 0 || gridY <= 0) return;
    this.makeCurrent();
    const f = this.kernel(mod, fn);
    if (sharedBytes > DEFAULT_SHARED && (this.sharedLimit.get(f) ?? DEFAULT_SHARED) < sharedBytes) {
      check(this.drv, this.drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes), `cuFuncSetAttribute(${fn}, ${sharedBytes} bytes of shared memory)`);
      this.sharedLimit.set(f, sharedBytes);
    }
    if (this.inFlight.length < 64) this.inFlight.push(fn);
    const st = this.drv.cuLaunchKernel(f, grid, gridY, 1, block, 1, 1, sharedBytes, this.stream, args, null);
    if (st !== CU.SUCCESS) check(this.drv, st, this.inFlightText()); // the message only when it is needed: launches are the hot path
  }


  event(): Handle {
    this.makeCurrent();
    check(this.drv, this.drv.cuEventCreate(this.out, 0), 'cuEventCreate');
    this.events.push(this.out[0]);
    return this.out[0];
  }

  destroyEvent(ev: Handle): void {
    const k = this.events.indexOf(ev);
    if (k < 0) return;
    this.events.splice(k, 1);
    this.makeCurrent();
    this.drv.cuEventDestroy_v2(ev);
  }

  /** Record `ev` on the kernels' stream, or on `stream`. */
  record(ev: Handle, stream = this.stream): void {
    this.makeCurrent();
    check(this.drv, this.drv.cuEventRecord(ev, stream), 'cuEventRecord');
  }

  /** The stream for uploads beside the kernels' stream (blocking, like it: ordered with the synchronous copies). */
  get copyStream(): Handle {
    if (!this.copyStreamHandle) {
      this.makeCurrent();
      check(this.drv, this.drv.cuStreamCreate(this.out, 0), 'cuStreamCreate (uploads)');
      this.copyStreamHandle = this.out[0];
    }
    return this.copyStreamHandle;
  }

  /**
   * Queue on this context's stream a copy of `bytes` from `src` (a buffer of context `from`, another
   * GPU) into `dst` (this one's). Peer access is asked for once per pair, which lets the copy take
   * the direct link (NVLink, PCIe P2P); refused, the driver stages the copy through the host.
   */
  copyFromPeer(dst: DeviceBuffer, from: CudaContext, src: DeviceBuffer, bytes: number): void {
    if (bytes > dst.bytes || bytes > src.bytes) throw new Error(`peer copy past the end of ${dst.name} or ${src.name}`);
    if (bytes === 0) return;
    this.makeCurrent();
    if (!this.peers.has(from)) {
      this.peers.add(from);
      const st = this.drv.cuCtxEnablePeerAccess(from.ctx, 0);
      log().debug(`${this.where} -> ${from.where}: peer access ${st === CU.SUCCESS || st === CU.PEER_ACCESS_ALREADY_ENABLED ? 'on' : `not available (${describeStatus(this.drv, st)}): copies go through the host`}`);
    }
    check(this.drv, this.drv.cuMemcpyPeerAsync(dst.ptr, this.ctx, src.ptr, from.ctx, bytes, this.stream), `copy from ${from.where} (${src.name})`);
  }

  /** Contexts this one has asked for peer access to (copyFromPeer). */
  private peers = new Set<CudaContext>();

  /** Work queued on `stream` from now on waits for `ev` (on the device: the host does not wait). */
  streamWait(stream: Handle, ev: Handle): void {
    this.makeCurrent();
    check(this.drv, this.drv.cuStreamWaitEvent(stream, ev, 0), 'cuStreamWaitEvent');
  }

  /**
   * Queue a copy of `src` to `buf` at offsetBytes on `stream`: from page-locked memory it runs
   * while the host goes on, so `src` must stay unchanged until an event recorded after it has
   * completed; from pageable memory the driver stages it before returning.
   */
  uploadAsync(buf: DeviceBuffer, src: Uint8Array, offsetBytes: number, stream: Handle): void {
    if (offsetBytes + src.byteLength > buf.bytes) throw new Error(`upload past the end of ${buf.name}`);
    if (src.byteLength === 0) return;
    this.makeCurrent();
    check(this.drv, this.drv.cuMemcpyHtoDAsync_v2(buf.ptr + BigInt(offsetBytes), src, src.byteLength, stream), `copy to GPU (${buf.name})`);
  }

  elapsedMs(start: Handle, end: Handle): number {
    const ms = new Float32Array(1);
    this.makeCurrent();
    check(this.drv, this.drv.cuEventElapsedTime(ms, start, end), 'cuEventElapsedTime');
    return ms[0];
  }

  /**
   * Wait until `ev` (recorded on the stream) has completed without blocking the event loop for
   * long: when the work is expected to take a while, sleep through most of it first; then spin
   * on cuEventQuery synchronously for at most SPIN_MS (short kernels answer in microseconds), then
   * poll between turns of the event loop (setImmediate), then every millisecond. Ctrl-C is thus
   * seen within a few milliseconds. Throws InterruptedError after Ctrl-C, a CudaError naming the
   * last kernel if one failed. endsKernels false: `ev` is not after every kernel queued so far.
   */
  async wait(ev: Handle, expectMs = 0, endsKernels = true): Promise<void> {
    const t0 = performance.now();
    if (expectMs > 3) {
      const nap = Math.min(expectMs * 0.8 - 1, 500);
      await sleep(Math.max(0, nap - unlockWhileWaiting(nap))); // released page locks go in the time the host has to wait anyway
    }
    for (;;) {
      this.makeCurrent(); // another GPU's engine may have run while this one slept
      const st = this.drv.cuEventQuery(ev);
      if (st === CU.SUCCESS) break;
      if (st !== CU.NOT_READY) check(this.drv, st, this.inFlightText());
      if (interruptSignal.aborted) throw new InterruptedError();
      const waited = performance.now() - t0;
      if (waited < SPIN_MS) continue;
      if (waited < 5 + expectMs) await yieldImmediate();
      else if (unlockWhileWaiting(1) === 0) await sleep(1); // a released page lock (one piece, once passes run: pin.ts) instead of a nap
    }
    this.waitMs += performance.now() - t0;
    if (endsKernels) this.inFlight = []; // an event of the copy stream, or of one tile, says nothing of later kernels
  }

  /** Block (no polling) until everything queued on the stream (or `stream`) is done: for cleanup on a failure path only. */
  drainBlocking(stream = this.stream): void {
    const ev = this.event();
    try {
      this.record(ev, stream);
      this.drv.cuEventSynchronize(ev);
    } finally {
      this.destroyEvent(ev);
    }
  }

  /** Wait (polling: Ctrl-C is heard) until every kernel and copy queued on the stream so far is done. */
  async finish(expectMs = 0): Promise<void> {
    const ev = this.event();
    try {
      this.record(ev);
      await this.wait(ev, expectMs);
    } finally {
      this.destroyEvent(ev);
    }
  }

  private inFlightText(): string {
    const k = [...new Set(this.inFlight)];
    return k.length === 1 ? `kernel ${k[0]}` : k.length ? `one of the kernels ${k.join(', ')}` : 'GPU work';
  }

  /** Host milliseconds spent in wait() (profile for bench/test-cuda). */
  waitMs = 0;

  /** Synchronous copies (the caller has waited for the stream, so they do not block for long). */
  upload(buf: DeviceBuffer, src: ArrayBufferView, offsetBytes = 0): void {
    if (offsetBytes + src.byteLength > buf.bytes) throw new Error(`upload past the end of ${buf.name}`);
    if (src.byteLength === 0) return;
    this.makeCurrent();
    check(this.drv, this.drv.cuMemcpyHtoD_v2(buf.ptr + BigInt(offsetBytes), src, src.byteLength), `copy to GPU (${buf.name})`);
  }

  /** Every byte of `buf` set to `byte`, on the device (no host buffer of its size). */
  fill(buf: DeviceBuffer, byte: number): void {
    if (buf.bytes === 0) return;
    this.makeCurrent();
    check(this.drv, this.drv.cuMemsetD8_v2(buf.ptr, byte, buf.bytes), `fill on GPU (${buf.name})`);
  }

  download(dst: ArrayBufferView, buf: DeviceBuffer, offsetBytes = 0): void {
    if (offsetBytes + dst.byteLength > buf.bytes) throw new Error(`download past the end of ${buf.name}`);
    if (dst.byteLength === 0) return;
    this.makeCurrent();
    check(this.drv, this.drv.cuMemcpyDtoH_v2(dst, buf.ptr + BigInt(offsetBytes), dst.byteLength), `copy from GPU (${buf.name})`);
  }

  /** Release everything this context created, in reverse order. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const { drv } = this;
    const firstError: unknown[] = [];
    const attempt = (f: () => void) => {
      try {
        f();
      } catch (e) {
        firstError.push(e);
      }
    };
    // -v: where closing goes (a 100M run's teardown took 0.4-0.5 s: bench/results/2026-11-28-h200-r12-r13.json).
    const t0 = performance.now();
    let drained = t0, pieces = 0;
    if (this.retained) attempt(() => this.makeCurrent()); // what follows belongs to this context
    if (this.retained) attempt(() => {
      this.drainBlocking(); // no copy may still read the pages it unlocks
      drained = performance.now();
      pieces = unlockAll(this);
    });
    const t1 = performance.now();
    attempt(() => this.pool.freeAll());
    const t2 = performance.now();
    for (const ev of this.events) drv.cuEventDestroy_v2(ev);
    this.events = [];
    for (const m of this.modules.values()) drv.cuModuleUnload(m);
    this.modules.clear();
    this.functions.clear();
    this.pinned.freeAll();
    if (this.copyStreamHandle) drv.cuStreamDestroy_v2(this.copyStreamHandle);
    this.copyStreamHandle = 0n;
    if (this.stream) drv.cuStreamDestroy_v2(this.stream);
    this.stream = 0n;
    const t3 = performance.now();
    if (this.retained) {
      const i32 = new Int32Array(1);
      if (drv.cuDeviceGet(i32, this.info.index) === CU.SUCCESS) drv.cuDevicePrimaryCtxRelease_v2(i32[0]);
      this.retained = false;
      forgetContext(this.ctx);
    }
    const ms = (a: number, b: number) => (b - a).toFixed(0);
    log().debug(`${this.where}: closed in ${ms(t0, performance.now())} ms: the stream drained ${ms(t0, drained)}, ${pieces} locked pieces unlocked ${ms(drained, t1)} (${piecesUnlockedInWaits()} unlocked in waits before${unlockedOnThread()}), device memory ${ms(t1, t2)}, modules and host buffers ${ms(t2, t3)}, context ${ms(t3, performance.now())}`);
    if (firstError.length) throw firstError[0];
  }
}
