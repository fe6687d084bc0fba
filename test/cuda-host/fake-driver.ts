// A fake CUDA driver: the same bound functions as src/backend/cuda/driver.ts, backed by host
// memory, with the kernels of cuda/*.cu emulated in JS (same semantics; the arguments decoded by
// name through the engine's own table, src/backend/cuda/kernels.ts, checked against the .cu). It lets
// the CPU suite run the whole CUDA host path — probe, context, pool, engine, commands — and inject
// the failures a real machine produces: no device, PTX too new, OOM at the k-th allocation, a
// failing kernel. It tracks every allocation so tests can check that all were freed, and which
// device's context owns each allocation, module, stream and event: a copy, launch or free under
// another device's context fails as CUDA_ERROR_INVALID_CONTEXT (engines on several GPUs take turns).
//
// Streams are asynchronous here as on a GPU: a launch, an asynchronous copy, an event record or a
// stream's wait on an event is queued on its stream and runs later, at the next synchronising call
// (an event query or synchronize, a synchronous copy, a free), in stream order and after the
// events a stream waits on — by default the most recently created stream first, so the upload
// stream of a streamed engine runs as far ahead of the kernels as its events allow, or (order
// 'kernels-first') the kernels' stream first, so uploads run as late as possible. An asynchronous
// copy from page-locked memory reads its source when it runs (as DMA does); from pageable memory,
// when it is queued (as the driver stages it). So an engine that refills a buffer or a staging
// chunk before the work reading it has run computes with the wrong data, and a test sees it.
import type { CudaDriver } from '../../dist/backend/cuda/driver.js';
import { specOf, unpackArgs } from '../../dist/backend/cuda/kernels.js';
import { knnMerge, knnScan } from './fake-knn.js';
import { ecAxis, ecDecode, ecRotated } from './fake-ec.js';
import { crc32c } from '../../dist/io/vlc/crc32c.js';
import { libc } from '../../dist/vectors/libc.js';

export interface FakeOptions {
  devices?: Array<{ name: string; cc: [number, number]; sms: number; memBytes: number }>;
  driverVersion?: number;
  /** cuInit returns this status. */
  initStatus?: number;
  /** cuModuleLoadData returns this status (222 = PTX too new). */
  moduleStatus?: number;
  /** The k-th cuMemAlloc (1-based) returns CUDA_ERROR_OUT_OF_MEMORY. */
  oomAtAlloc?: number;
  /** Free bytes reported by cuMemGetInfo. */
  freeBytes?: number;
  /** cuMemGetInfo's free bytes shrink by what is allocated (on any device), and an allocation past them fails as OUT_OF_MEMORY. */
  trackFree?: boolean;
  /**
   * Which stream's work runs first when the host waits: 'copies-first' (default: the latest
   * stream, an upload stream, runs as far ahead as its waits allow — a buffer refilled before its
   * kernels ran shows) or 'kernels-first' (the oldest stream first, uploads only when the kernels
   * wait for them — a staging chunk refilled before its copy ran shows).
   */
  order?: 'copies-first' | 'kernels-first';
  /** cuMemAllocHost returns this status (2 = out of memory: page-locked memory refused). */
  hostAllocStatus?: number;
  /** Kernels whose completion reports this status (as an asynchronous launch failure would). */
  failKernel?: { name: string; status: number };
  /**
   * Offer hostUnregisterAsync (the real driver's unlock on a libuv thread, by address): it unlocks
   * at a later turn of the event loop, reporting `threadUnlockStatus` instead where that is set.
   */
  threadUnlocks?: boolean;
  threadUnlockStatus?: number;
  /** hostUnregisterAsync throws where it is called (as koffi would for a call it cannot make). */
  threadUnlockThrows?: boolean;
  /** Fill every allocation with 0xa5 bytes (as real device memory holds leftovers, not zeros): an output a kernel fails to write shows. */
  poison?: boolean;
}

const NAMES: Record<number, [string, string]> = {
  0: ['CUDA_SUCCESS', 'no error'],
  1: ['CUDA_ERROR_INVALID_VALUE', 'invalid argument'],
  2: ['CUDA_ERROR_OUT_OF_MEMORY', 'out of memory'],
  100: ['CUDA_ERROR_NO_DEVICE', 'no CUDA-capable device is detected'],
  222: ['CUDA_ERROR_UNSUPPORTED_PTX_VERSION', 'the provided PTX was compiled with an unsupported toolchain.'],
  600: ['CUDA_ERROR_NOT_READY', 'device not ready'],
  201: ['CUDA_ERROR_INVALID_CONTEXT', 'invalid device context'],
  700: ['CUDA_ERROR_ILLEGAL_ADDRESS', 'an illegal memory access was encountered'],
  719: ['CUDA_ERROR_LAUNCH_FAILED', 'unspecified launch failure'],
};

interface Alloc {
  base: bigint;
  buf: ArrayBuffer;
  /** The context current when it was allocated. */
  ctx: bigint;
}

const INVALID_CONTEXT = 201;

export class FakeCuda {
  readonly api: CudaDriver;
  allocs = 0;
  frees = 0;
  launches: string[] = [];
  private mem = new Map<bigint, Alloc>();
  private next = 0x7000_0000_0000n;
  private handles = 1000n;
  private functions = new Map<bigint, string>();
  private pendingFailure = 0;
  /** Queued work per stream, in creation order of the streams. */
  private queues = new Map<bigint, Array<{ what: string; ready?: () => boolean; run: () => void }>>();
  /** Per event: how many records were queued, and how many have run. */
  private recorded = new Map<bigint, { queued: number; done: number }>();
  /** Page-locked host allocations live, by their ArrayBuffer. */
  private pinned = new Set<ArrayBuffer>();
  /** Host ranges locked by cuMemHostRegister: their buffer and pages [p0, p1] (4 KiB pages of the buffer). */
  private registered: Array<{ buf: ArrayBuffer; byteOffset: number; p0: number; p1: number; address?: bigint }> = [];
  /** Unlocks made through hostUnregisterAsync, and the copies queued while one was still on its way. */
  threadUnlocks = 0;
  /** cuMemHostRegister returns this status (e.g. 2: the driver refuses to lock). */
  registerStatus = 0;
  registrations = 0;
  hostAllocs = 0;
  /** The size of every synchronous host → device copy, in order. */
  syncUploads: number[] = [];
  /** Copies between devices (cuda/peer.ts), and the context pairs with peer access on. */
  peerCopies = 0;
  private peerAccess = new Set<string>();
  /** Asynchronous copies queued while kernels were queued and not yet run on another stream (overlap). */
  overlappedCopies = 0;
  asyncCopies = 0;
  /** Asynchronous copies whose source was page-locked (cuMemAllocHost, or registered). */
  pinnedCopies = 0;
  /** Page-locked buffers (cuMemAllocHost) not yet freed. */
  get pinnedLive(): number {
    return this.pinned.size;
  }
  retained = 0;
  /** What each cuModuleLoadData was given, in order: Hopper machine code (an ELF cubin) or PTX. */
  images: Array<'cubin' | 'ptx'> = [];
  /** Each device's primary context (one handle per device, as the real driver), the current one, and what each handle belongs to. */
  private primary = new Map<number, bigint>();
  private current = 0n;
  private owner = new Map<bigint, bigint>();

  constructor(readonly o: FakeOptions = {}) {
    const devices = o.devices ?? [{ name: 'Fake GPU 80GB', cc: [9, 0] as [number, number], sms: 4, memBytes: 80 * 2 ** 30 }];
    const self = this;
    const api: CudaDriver = {
      cuInit: () => o.initStatus ?? 0,
      cuDriverGetVersion: (out) => ((out[0] = o.driverVersion ?? 13000), 0),
      cuDeviceGetCount: (out) => ((out[0] = devices.length), 0),
      cuDeviceGet: (out, i) => (i < devices.length ? ((out[0] = i), 0) : 101),
      cuDeviceGetName: (buf, len, dev) => {
        const b = Buffer.from(devices[dev].name + '\0');
        buf.set(b.subarray(0, len));
        return 0;
      },
      cuDeviceGetAttribute: (out, attr, dev) => {
        const dv = devices[dev];
        out[0] = attr === 16 ? dv.sms : attr === 75 ? dv.cc[0] : attr === 76 ? dv.cc[1] : 0;
        return 0;
      },
      cuDeviceTotalMem_v2: (out, dev) => ((out[0] = BigInt(devices[dev].memBytes)), 0),
      cuDevicePrimaryCtxRetain: (out, dev) => {
        if (!self.primary.has(dev)) self.primary.set(dev, self.handle());
        out[0] = self.primary.get(dev)!;
        self.retained++;
        return 0;
      },
      cuDevicePrimaryCtxRelease_v2: () => (self.retained--, 0),
      cuCtxSetCurrent: (ctx) => ((self.current = ctx), 0),
      cuMemGetInfo_v2: (free, total) => {
        free[0] = BigInt((o.freeBytes ?? devices[0].memBytes) - (o.trackFree ? self.allocatedBytes() : 0));
        total[0] = BigInt(devices[0].memBytes);
        return 0;
      },
      cuModuleLoadData: (out, image) => {
        if (o.moduleStatus) return o.moduleStatus;
        self.images.push(image[0] === 0x7f && image[1] === 0x45 ? 'cubin' : 'ptx'); // ELF machine code, or PTX text
        if (self.images[self.images.length - 1] === 'ptx' && image[image.length - 1] !== 0) return 218; // the real driver wants NUL-terminated PTX
        out[0] = self.owned(self.handle());
        return 0;
      },
      cuModuleUnload: () => 0,
      cuFuncSetAttribute: (f) => (self.mine(f) ? 0 : INVALID_CONTEXT),
      cuModuleGetFunction: (out, mod, name) => {
        out[0] = self.handle();
        self.owner.set(out[0], self.owner.get(mod)!);
        self.functions.set(out[0], name);
        return 0;
      },
      cuMemAlloc_v2: (out, bytes) => {
        self.allocs++;
        if (o.oomAtAlloc === self.allocs) return 2;
        if (!self.current) return INVALID_CONTEXT;
        if (o.trackFree && self.allocatedBytes() + bytes > (o.freeBytes ?? devices[0].memBytes)) return 2;
        const base = self.next;
        self.next += BigInt(Math.ceil(bytes / 256) * 256 + 256);
        const buf = new ArrayBuffer(bytes);
        if (o.poison) new Uint8Array(buf).fill(0xa5);
        self.mem.set(base, { base, buf, ctx: self.current });
        out[0] = base;
        return 0;
      },
      cuMemFree_v2: (p) => {
        self.flush();
        const a = self.mem.get(p);
        if (!a) return 1;
        if (a.ctx !== self.current) return INVALID_CONTEXT;
        self.mem.delete(p);
        self.frees++;
        return 0;
      },
      cuMemcpyHtoD_v2: (dst, src, bytes) => {
        self.flush();
        self.syncUploads.push(bytes);
        if (self.find(dst).a.ctx !== self.current) return INVALID_CONTEXT;
        self.bytes(dst, bytes).set(new Uint8Array(src.buffer, src.byteOffset, bytes));
        return 0;
      },
      cuMemcpyDtoH_v2: (dst, src, bytes) => {
        self.flush();
        if (self.find(src).a.ctx !== self.current) return INVALID_CONTEXT;
        new Uint8Array(dst.buffer, dst.byteOffset, bytes).set(self.bytes(src, bytes));
        return 0;
      },
      cuMemsetD8_v2: (dst, byte, bytes) => {
        self.flush();
        if (self.find(dst).a.ctx !== self.current) return INVALID_CONTEXT;
        self.bytes(dst, bytes).fill(byte);
        return 0;
      },
      cuMemcpyHtoDAsync_v2: (dst, src, bytes, st) => {
        if (!self.mine(st) || self.find(dst).a.ctx !== self.current) return INVALID_CONTEXT;
        self.asyncCopies++;
        if ([...self.queues].some(([q, ops]) => q !== st && ops.some((op) => op.what === 'launch'))) self.overlappedCopies++;
        const pinnedSource = self.pinned.has(src.buffer as ArrayBuffer) || self.isRegistered(src);
        if (pinnedSource) self.pinnedCopies++;
        const staged = pinnedSource ? undefined : new Uint8Array(src.buffer, src.byteOffset, bytes).slice();
        self.enqueue(st, 'copy', () => {
          if (pinnedSource && !self.pinned.has(src.buffer as ArrayBuffer) && !self.isRegistered(src)) throw new Error('fake driver: a copy from page-locked memory freed (or unlocked) before it ran');
          self.bytes(dst, bytes).set(staged ?? new Uint8Array(src.buffer, src.byteOffset, bytes));
        });
        return 0;
      },
      cuMemcpyPeerAsync: (dst, dstCtx, src, srcCtx, bytes, st) => {
        if (!self.mine(st) || self.find(dst).a.ctx !== dstCtx || self.find(src).a.ctx !== srcCtx) return INVALID_CONTEXT;
        self.peerCopies++;
        self.enqueue(st, 'copy', () => self.bytes(dst, bytes).set(self.bytes(src, bytes)));
        return 0;
      },
      cuCtxEnablePeerAccess: (peer) => {
        if (peer === self.current) return 1;
        const key = `${self.current}>${peer}`;
        if (self.peerAccess.has(key)) return 704; // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        self.peerAccess.add(key);
        return 0;
      },
      cuMemAllocHost_v2: (out, bytes) => {
        if (o.hostAllocStatus) return o.hostAllocStatus;
        const buf = new ArrayBuffer(bytes);
        self.pinned.add(buf);
        self.hostAllocs++;
        out[0] = buf;
        return 0;
      },
      cuMemHostRegister_v2: (p, bytes) => {
        if (self.registerStatus) return self.registerStatus;
        const buf = p.buffer as ArrayBuffer;
        const p0 = Math.floor(p.byteOffset / 4096), p1 = Math.floor((p.byteOffset + bytes - 1) / 4096);
        // The driver refuses a range that shares a page with a locked one (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED).
        if (self.registered.some((r) => r.buf === buf && r.p0 <= p1 && p0 <= r.p1)) return 712;
        self.registered.push({ buf, byteOffset: p.byteOffset, p0, p1, address: o.threadUnlocks ? libc()!.addressOf(new Uint8Array(buf, p.byteOffset, 1)) : undefined });
        self.registrations++;
        return 0;
      },
      cuMemHostUnregister: (p) => {
        const k = self.registered.findIndex((r) => r.buf === p.buffer && r.byteOffset === p.byteOffset);
        if (k < 0) return 713; // CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
        self.registered.splice(k, 1);
        return 0;
      },
      cuMemFreeHost: (p) => {
        self.flush();
        return self.pinned.delete(p as ArrayBuffer) ? 0 : 1;
      },
      hostView: (p) => p as ArrayBuffer,
      ...(o.threadUnlocks && {
        hostUnregisterAsync: (address: bigint, done: (status: number) => void) => {
          if (o.threadUnlockThrows) throw new Error('no thread for the call');
          setImmediate(() => {
            if (o.threadUnlockStatus) return done(o.threadUnlockStatus);
            const k = self.registered.findIndex((r) => r.address === address);
            if (k < 0) return done(713);
            self.registered.splice(k, 1);
            self.threadUnlocks++;
            done(0);
          });
        },
      }),
      cuStreamCreate: (out) => {
        out[0] = self.owned(self.handle());
        self.queues.set(out[0], []);
        return 0;
      },
      cuStreamDestroy_v2: (st) => {
        self.flush();
        self.queues.delete(st);
        return self.mine(st) ? 0 : INVALID_CONTEXT;
      },
      cuStreamWaitEvent: (st, ev) => {
        // The event may belong to another device's context (CUDA allows it: cuda/peer.ts).
        if (!self.mine(st) || !self.owner.has(ev)) return INVALID_CONTEXT;
        const r = self.recordOf(ev);
        const want = r.queued; // the latest record at the time of the call, as CUDA does
        self.enqueue(st, 'wait', () => undefined, () => r.done >= want);
        return 0;
      },
      cuEventCreate: (out) => ((out[0] = self.owned(self.handle())), 0),
      cuEventDestroy_v2: (ev) => (self.mine(ev) ? 0 : INVALID_CONTEXT),
      cuEventRecord: (ev, st) => {
        if (!(self.mine(ev) && self.mine(st))) return INVALID_CONTEXT;
        const r = self.recordOf(ev);
        const k = ++r.queued;
        self.enqueue(st, 'record', () => void (r.done = Math.max(r.done, k)));
        return 0;
      },
      cuEventQuery: (ev) => {
        const r = self.recordOf(ev);
        self.flush(() => r.done >= r.queued); // only what this event follows: other streams' work may stay queued
        const f = self.pendingFailure;
        return f || 0;
      },
      cuEventSynchronize: () => (self.flush(), self.pendingFailure || 0),
      cuEventElapsedTime: (out) => (self.flush(), (out[0] = 0.5), 0),
      cuLaunchKernel: (f, gx, gy, _gz, bx, _by, _bz, _sh, stream, params) => {
        const name = self.functions.get(f) ?? '?';
        self.launches.push(name);
        if (self.pendingFailure) return self.pendingFailure;
        if (!self.mine(f) || !self.mine(stream) || !self.pointersMine(name, params)) return INVALID_CONTEXT;
        if (o.failKernel && name.startsWith(o.failKernel.name)) {
          self.pendingFailure = o.failKernel.status; // reported at the next query, like the real thing
          return 0;
        }
        const spec = specOf(name);
        if (!spec) throw new Error(`fake driver: no kernel ${name} in src/backend/cuda/kernels.ts`);
        if (bx !== spec.spec.threads) throw new Error(`fake driver: ${name} launched with ${bx} threads, its table says ${spec.spec.threads}`);
        const args = params.map((p) => (p as unknown as { slice(): ArrayBufferView }).slice()); // the engine may reuse its arrays
        self.enqueue(stream, 'launch', () => self.run(name, gx, bx, args, gy));
        return 0;
      },
      cuGetErrorName: (st, out) => ((out[0] = (NAMES[st] ?? [`CUDA_ERROR_${st}`])[0]), NAMES[st] ? 0 : 1),
      cuGetErrorString: (st, out) => ((out[0] = (NAMES[st] ?? ['', 'unknown'])[1]), NAMES[st] ? 0 : 1),
    };
    this.api = api;
  }

  private recordOf(ev: bigint): { queued: number; done: number } {
    let r = this.recorded.get(ev);
    if (!r) this.recorded.set(ev, (r = { queued: 0, done: 0 }));
    return r;
  }

  private enqueue(stream: bigint, what: string, run: () => void, ready?: () => boolean): void {
    const q = this.queues.get(stream);
    if (!q) throw new Error(`fake driver: stream ${stream} was not created`);
    q.push({ what, run, ready });
  }

  /**
   * Run queued work one operation at a time, from the first stream in `order` whose next operation may run
   * (its waits satisfied), until `done` holds (default: every queue is empty). A wait that nothing
   * can satisfy is a deadlock the engine made: an error.
   */
  private flush(done: () => boolean = () => [...this.queues.values()].every((q) => q.length === 0)): void {
    const streams = [...this.queues.values()];
    if (this.o.order !== 'kernels-first') streams.reverse();
    while (!done()) {
      const q = streams.find((x) => x.length > 0 && (x[0].ready?.() ?? true));
      if (!q) {
        if (streams.every((x) => x.length === 0)) return; // an event never recorded counts as done
        throw new Error('fake driver: deadlock — a stream waits for an event no queued work records');
      }
      q.shift()!.run();
    }
  }

  /** Device bytes allocated and not freed. */
  allocatedBytes(): number {
    let s = 0;
    for (const a of this.mem.values()) s += a.buf.byteLength;
    return s;
  }

  /** Whether `v` lies inside a range locked by cuMemHostRegister. */
  isRegistered(v: ArrayBufferView): boolean {
    return this.registered.some((r) => r.buf === v.buffer && r.p0 <= Math.floor(v.byteOffset / 4096) && Math.floor((v.byteOffset + v.byteLength - 1) / 4096) <= r.p1);
  }

  /** Ranges still locked (a test checks that every upload unlocked its pages). */
  get lockedRanges(): number {
    return this.registered.length;
  }

  /** Page-locked host allocations not yet freed. */
  get livePinned(): number {
    return this.pinned.size;
  }

  /** Allocations not yet freed. */
  get live(): number {
    return this.mem.size;
  }

  private handle(): bigint {
    return this.handles++;
  }

  /** A new handle owned by the current context. */
  private owned(h: bigint): bigint {
    this.owner.set(h, this.current);
    return h;
  }

  /** Whether handle h belongs to the current context. */
  private mine(h: bigint): boolean {
    return this.current !== 0n && this.owner.get(h) === this.current;
  }

  /** Whether every device pointer a launch passes lies in memory of the current context. */
  private pointersMine(name: string, params: ArrayBufferView[]): boolean {
    const found = specOf(name);
    if (!found) return true; // reported by run()
    const a = unpackArgs(found.spec, params);
    return found.spec.args.every(([arg, kind]) => kind !== 'ptr' || a[arg] === 0n || this.find(a[arg] as bigint).a.ctx === this.current);
  }

  private find(p: bigint): { a: Alloc; off: number } {
    for (const a of this.mem.values()) {
      const off = Number(p - a.base);
      if (off >= 0 && off <= a.buf.byteLength) return { a, off };
    }
    throw new Error(`fake driver: address 0x${p.toString(16)} is not allocated`);
  }

  private bytes(p: bigint, n: number): Uint8Array {
    const { a, off } = this.find(p);
    if (off + n > a.buf.byteLength) throw new Error('fake driver: copy past the end of an allocation');
    return new Uint8Array(a.buf, off, n);
  }

  /** The allocation at device address p, from p on, as a typed array. */
  private view<T>(p: bigint, ctor: new (b: ArrayBuffer, off: number) => T): T {
    const { a, off } = this.find(p);
    return new ctor(a.buf, off);
  }

  /** Launches of each kernel, by name. */
  readonly runs = new Map<string, number>();

  // --- the kernels of cuda/*.cu in JS: arguments decoded by the engine's own table (kernels.ts) ---
  private run(name: string, grid: number, block: number, P: ArrayBufferView[], gridY = 1): void {
    this.runs.set(name, (this.runs.get(name) ?? 0) + 1);
    const found = specOf(name);
    if (!found) throw new Error(`fake driver: no kernel ${name} in src/backend/cuda/kernels.ts`);
    const { kernel, spec } = found;
    if (block !== spec.threads) throw new Error(`fake driver: ${name} launched with ${block} threads, its table says ${spec.threads}`);
    const a = unpackArgs(spec, P);
    const ptr = (k: string) => a[k] as bigint;
    const num = (k: string) => a[k] as number;
    const f32 = (k: string) => this.view(ptr(k), Float32Array);
    const f64 = (k: string) => this.view(ptr(k), Float64Array);
    const u32 = (k: string) => this.view(ptr(k), Uint32Array);
    const i64 = (k: string) => this.view(ptr(k), BigInt64Array);
    const u64 = (k: string) => this.view(ptr(k), BigUint64Array);
    const half = name.endsWith('_f16');
    // The vectors as f32 (an f16 buffer decoded exactly, as the kernels widen each element).
    const X = (count: number): Float32Array => {
      if (!half) return f32('X');
      const h = this.view(ptr('X'), Uint16Array);
      const out = new Float32Array(count);
      for (let e = 0; e < count; e++) out[e] = halfToFloat(h[e]);
      return out;
    };
    // Sequential f32 accumulation of direct differences, like one thread of the kernels.
    const dist = (x: Float32Array, i: number, d: number, c: Float32Array, co: number) => {
      let s = 0;
      const xo = i * d;
      for (let k = 0; k < d; k++) {
        const t = Math.fround(x[xo + k] - c[co + k]);
        s = Math.fround(s + Math.fround(t * t));
      }
      return s;
    };
    // Nearest and runner-up of point i over all m anchors (ties: lowest j), as assign.cu writes them.
    const top2 = (x: Float32Array, i: number, d: number, C: Float32Array, m: number,
      J1: Uint32Array, D1: Float32Array, J2: Uint32Array, D2: Float32Array) => {
      let b1 = Infinity, b2 = Infinity, j1 = 0xffffffff, j2 = 0xffffffff;
      for (let j = 0; j < m; j++) {
        const v = dist(x, i, d, C, j * d);
        if (v < b1) [b2, j2, b1, j1] = [b1, j1, v, j];
        else if (v < b2) [b2, j2] = [v, j];
      }
      J1[i] = j1; D1[i] = b1; J2[i] = j2; D2[i] = b2;
    };
    // Integer sums as the device makes them (each term rounded once to an integer, __double2ll_rn
    // or __double2ll_rd), gathered in doubles while that is exact (below 2^53) so the emulation
    // stays quick, and moved into the int64 buffers before it would not be: the sums are then
    // exact whatever the grouping (one launch, or one per tile), like the device's integer atomics.
    const intSums = (target: BigInt64Array) => {
      const acc = new Map<number, number>();
      return {
        add(k: number, v: number) {
          const old = acc.get(k) ?? 0;
          if (Math.abs(old + v) < 2 ** 53) acc.set(k, old + v);
          else {
            target[k] += BigInt(old) + BigInt(v);
            acc.set(k, 0);
          }
        },
        flush() {
          for (const [k, v] of acc) target[k] += BigInt(v);
        },
      };
    };
    // reduce.cu's far_key: the distance's bits over the inverted data row (largest distance, then lowest row).
    const farKey = (dist: number, row: number) =>
      (BigInt(new Uint32Array(new Float32Array([dist]).buffer)[0]) << 32n) | BigInt(0xffffffff - row);
    // reduce.cu's Contribution list, 24 bytes an entry.
    const contributions = (p: bigint) => {
      const u = this.view(p, Uint32Array), f = this.view(p, Float32Array), g = this.view(p, Float64Array);
      return {
        put(q: number, c: { i: number; a: number; w: number; dist: number; near: number }) {
          u[6 * q] = c.i;
          u[6 * q + 1] = c.a;
          g[3 * q + 1] = c.w;
          f[6 * q + 4] = c.dist;
          u[6 * q + 5] = c.near;
        },
        get: (q: number) => ({ i: u[6 * q], a: u[6 * q + 1], w: g[3 * q + 1], dist: f[6 * q + 4], near: u[6 * q + 5] }),
      };
    };
    // reduce.cu's shares_of: a point's weights for its nearest anchor a and its runner-up b.
    const sharesOf = (a: number, b: number, da: number, db: number, H: Float64Array, T: number) => {
      const robust = (v: number, h: number) => (v <= h ? 1 : Math.sqrt(h / v));
      let w2 = T > 0 && b !== 0xffffffff ? 1 / (1 + Math.exp((db - da) / T)) : 0;
      if (w2 < 2 ** -20) w2 = 0; // MIN_SHARE of reduce.cu
      return { wa: (1 - w2) * robust(da, H[a]), wb: w2 > 0 ? w2 * robust(db, H[b]) : 0 };
    };
    switch (kernel) {
      case 'max_abs': {
        const count = num('count'), x = X(count), out = u32('out');
        const fb = new Float32Array(1), ub = new Uint32Array(fb.buffer);
        for (let e = 0; e < count; e++) {
          fb[0] = Math.abs(x[e]);
          if (ub[0] > out[0]) out[0] = ub[0];
        }
        return;
      }
      case 'seed_dist': {
        const n = num('n'), d = num('d'), x = X(n * d), c = f32('c'), D = f32('D'), mode = num('mode'), scale = num('seedScale'), part = f64('partial');
        for (let b = 0; b < grid; b++) {
          let s = 0;
          for (let i = b * 256; i < Math.min(n, (b + 1) * 256); i++) {
            let v = dist(x, i, d, c, 0);
            if (mode === 1) v = Math.min(v, D[i]);
            D[i] = v;
            s += Math.floor(v * scale);
          }
          part[b] = s;
        }
        return;
      }
      case 'gather_rows': { // raw rows: 2 or 4 bytes an element
        const count = num('count'), d = num('d'), list = this.view(ptr('list'), Int32Array), eb = half ? 2 : 4;
        for (let r = 0; r < count; r++) {
          const row = this.bytes(ptr('src') + BigInt(list[r] * d * eb), d * eb);
          this.bytes(ptr('dst') + BigInt(r * d * eb), d * eb).set(row);
        }
        return;
      }
      case 'seed_many': { // blocks of 64 points: D = min(D, nearest of the L candidates)
        const n = num('n'), d = num('d'), x = X(n * d), C = f32('C'), L = num('L'), D = f32('D'), scale = num('seedScale'), part = f64('partial');
        for (let b = 0; b < grid; b++) {
          let s = 0;
          for (let i = b * 64; i < Math.min(n, (b + 1) * 64); i++) {
            let v = D[i];
            for (let l = 0; l < L; l++) v = Math.min(v, dist(x, i, d, C, l * d));
            D[i] = v;
            s += Math.floor(v * scale);
          }
          part[b] = s;
        }
        return;
      }
      case 'seed_min': { // blocks of 256 points: D = min(D, D1), the block's sum as seed_dist's
        const n = num('n'), D = f32('D'), D1 = f32('D1'), scale = num('seedScale'), part = f64('partial');
        for (let b = 0; b < grid; b++) {
          let s = 0;
          for (let i = b * 256; i < Math.min(n, (b + 1) * 256); i++) {
            D[i] = Math.min(D[i], D1[i]);
            s += Math.floor(D[i] * scale);
          }
          part[b] = s;
        }
        return;
      }
      case 'seed_try': {
        const n = num('n'), d = num('d'), x = X(n * d), C = f32('C'), L = num('L'), D = f32('D'), scale = num('seedScale'), part = f64('partial');
        for (let b = 0; b < grid; b++)
          for (let l = 0; l < L; l++) {
            let s = 0;
            for (let i = b * 256; i < Math.min(n, (b + 1) * 256); i++) s += Math.floor(Math.min(D[i], dist(x, i, d, C, l * d)) * scale);
            part[b * L + l] = s;
          }
        return;
      }
      case 'pass_begin': {
        const m = num('m'), d = num('d'), huber = num('huber'), hasPrev = num('hasPrev'), eScale = num('eScale');
        const count = u32('count'), sse = i64('sse'), far = u64('far'), W = i64('W'), S = i64('S'), H = f64('H');
        for (let j = 0; j < m; j++) {
          H[j] = huber > 0 && hasPrev && count[j] > 0 ? (huber * huber * (Number(sse[j]) / eScale)) / count[j] : Infinity;
          count[j] = 0;
          sse[j] = 0n;
          far[j] = 0n;
          W[j] = 0n;
        }
        S.fill(0n, 0, m * d);
        return;
      }
      case 'assign_top2': {
        const C = f32('C'), n = num('n'), d = num('d'), m = num('m'), x = X(n * d);
        const J1 = u32('j1'), D1 = f32('d1'), J2 = u32('j2'), D2 = f32('d2');
        for (let i = 0; i < n; i++) top2(x, i, d, C, m, J1, D1, J2, D2);
        return;
      }
      case 'reduce_points':
      case 'reduce_tally': { // reduce.cu: the per-point statistics; reduce_points adds S too, reduce_tally ranks the contributions
        const n = num('n'), sorted = kernel === 'reduce_tally';
        const J1 = u32('J1'), D1 = f32('D1'), J2 = u32('J2'), D2 = f32('D2'), assign = u32('assign'), H = f64('H');
        const T = num('temperature'), acc = num('accumulate'), eScale = num('eScale'), sse = intSums(i64('sse'));
        const count = u32('count'), far = u64('far'), part = i64('partial');
        const first = num('first'); // data row of X's row 0 (a tile, a shard): the farthest point's index is global
        const d = sorted ? 0 : num('d'), x = sorted ? undefined : X(n * d), sScale = sorted ? 0 : num('sScale');
        const S = sorted ? undefined : intSums(i64('S')), W = sorted ? undefined : intSums(i64('W'));
        const wScale = sorted ? 0 : num('wScale');
        const fill = sorted ? u32('fill') : undefined, rank = sorted ? u32('rank') : undefined;
        let energy = 0n, changed = 0;
        for (let i = 0; i < n; i++) {
          const a = J1[i], b = J2[i], da = D1[i];
          const e = roundEven(da * eScale);
          energy += BigInt(e);
          if (assign[i] !== a) changed++;
          assign[i] = a;
          // With the list, reduce_sums adds the nearest anchor's statistics; without, they are added here.
          if (!(sorted && acc)) {
            count[a]++;
            sse.add(a, e);
            const k = farKey(da, first + i);
            if (k > far[a]) far[a] = k;
          }
          if (!acc) continue;
          const { wa, wb } = sharesOf(a, b, da, D2[i], H, T);
          if (sorted) {
            rank![2 * i] = fill![a]++;
            rank![2 * i + 1] = wb > 0 ? fill![b]++ : 0xffffffff;
            continue;
          }
          W!.add(a, roundEven(wa * wScale));
          if (wb > 0) W!.add(b, roundEven(wb * wScale));
          for (let k = 0; k < d; k++) {
            const v = x![i * d + k] * sScale;
            S!.add(a * d + k, roundEven(wa * v));
            if (wb > 0) S!.add(b * d + k, roundEven(wb * v));
          }
        }
        S?.flush();
        W?.flush();
        sse.flush();
        part.fill(0n, 0, 2 * grid);
        part[0] = energy;
        part[1] = BigInt(changed);
        return;
      }
      case 'reduce_offsets': {
        const fill = u32('fill'), m = num('m'), off = u32('off');
        let at = 0;
        for (let j = 0; j < m; j++) {
          off[j] = at;
          at += fill[j];
          fill[j] = 0;
        }
        off[m] = at;
        return;
      }
      case 'reduce_scatter': { // contributions of 24 bytes: u32 i, u32 a, f64 w, f32 dist, u32 near
        const n = num('n'), J1 = u32('J1'), D1 = f32('D1'), J2 = u32('J2'), D2 = f32('D2'), H = f64('H'), T = num('temperature');
        const rank = u32('rank'), off = u32('off'), list = contributions(ptr('list'));
        for (let i = 0; i < n; i++) {
          const a = J1[i], b = J2[i];
          const { wa, wb } = sharesOf(a, b, D1[i], D2[i], H, T);
          list.put(off[a] + rank[2 * i], { i, a, w: wa, dist: D1[i], near: 1 });
          if (rank[2 * i + 1] !== 0xffffffff) list.put(off[b] + rank[2 * i + 1], { i, a: b, w: wb, dist: 0, near: 0 });
        }
        return;
      }
      case 'reduce_sums': {
        const d = num('d'), m = num('m'), off = u32('off'), total = off[m], list = contributions(ptr('list'));
        const sScale = num('sScale'), wScale = num('wScale'), eScale = num('eScale'), first = num('first');
        const S = intSums(i64('S')), W = intSums(i64('W')), sse = intSums(i64('sse')), count = u32('count'), far = u64('far');
        let rows = 0;
        for (let q = 0; q < total; q++) rows = Math.max(rows, list.get(q).i + 1);
        const x = X(rows * d);
        for (let q = 0; q < total; q++) {
          const { i, a, w, dist, near } = list.get(q);
          for (let k = 0; k < d; k++) S.add(a * d + k, roundEven(w * (x[i * d + k] * sScale)));
          W.add(a, roundEven(w * wScale));
          if (!near) continue;
          count[a]++;
          sse.add(a, roundEven(dist * eScale));
          const key = farKey(dist, first + i);
          if (key > far[a]) far[a] = key;
        }
        S.flush();
        W.flush();
        sse.flush();
        return;
      }
      case 'screen_reset': {
        const sc = u32('scalars');
        for (let q = num('first'); q < 8; q++) sc[q] = 0;
        return;
      }
      case 'prep_points':
      case 'prep_anchors': { // fp16 copies around μ, scaled by s; padding rows of zeros
        const anchors = kernel === 'prep_anchors';
        const rows = num(anchors ? 'm' : 'n'), d = num('d'), dp = num('dp'), outRows = num(anchors ? 'mpad' : 'npad'), sc = num('s');
        const V = anchors ? f32('C') : X(rows * d), mu = f32('mu');
        const out = this.view(ptr(anchors ? 'Ch' : 'Xh'), Uint16Array), norm = f32(anchors ? 'cn' : 'xn');
        const scalars = anchors ? u32('scalars') : undefined;
        for (let r = 0; r < outRows; r++) {
          let acc = 0, big = false;
          for (let k = 0; k < dp; k++) {
            const v = r < rows && k < d ? Math.fround(sc * Math.fround(V[r * d + k] - mu[k])) : 0;
            if (!(Math.abs(v) <= 65504)) big = true;
            out[r * dp + k] = floatToHalf(v);
            acc = Math.fround(acc + Math.fround(v * v));
          }
          if (r >= rows) norm[r] = anchors ? Infinity : 0;
          else {
            norm[r] = acc;
            if (scalars) {
              scalars[0] = Math.max(scalars[0], floatBits(acc));
              if (big) scalars[1] = 1;
            }
          }
        }
        return;
      }
      case 'tile_anchors': { // each step's [128 anchors][64 dims] block, 16-byte chunk c of row r at c ^ (r & 7)
        const dp = num('dp'), mpad = num('mpad'), Ch = this.view(ptr('Ch'), Uint16Array), Ct = this.view(ptr('Ct'), Uint16Array);
        Ct.set(tileAnchors(Ch.subarray(0, mpad * dp), dp, mpad));
        return;
      }
      case 'screen_h':
      case 'screen_h90':
      case 'screen_h90m':
      case 'screen_h90mo':
      case 'screen_h90mo_k3':
      case 'screen_h90mo_k2': { // the row's 8 smallest keys and the 9th: dot products of the fp16 copies in f64
        const n = num('n'), dp = num('dp'), mpad = num('mpad'), hmask = num('hmask') >>> 0;
        const Xh = this.view(ptr('Xh'), Uint16Array), Ch = this.view(ptr('Ch'), Uint16Array), xn = f32('xn'), cn = f32('cn'), keys = u32('keys');
        // screen_h90m* reads the tiled copy and every screen_h90* keys |dist| (screen_h90.cu), screen_h
        // max(dist, 0); screen_h90 and screen_h90m write 16 keys a row (SH_ROW_WIDE), the others 8.
        const tiled = kernel.startsWith('screen_h90m');
        const rowKeys = kernel === 'screen_h90' || kernel === 'screen_h90m' ? 16 : 8;
        const ch = Float64Array.from(tiled ? untileAnchors(Ch.subarray(0, mpad * dp), dp, mpad) : Ch.subarray(0, mpad * dp), halfToFloat);
        const row = new Uint32Array(mpad);
        for (let i = 0; i < n; i++) {
          const x = Float64Array.from(Xh.subarray(i * dp, (i + 1) * dp), halfToFloat);
          for (let j = 0; j < mpad; j++) {
            let dot = 0;
            for (let k = 0; k < dp; k++) dot += x[k] * ch[j * dp + k];
            const a = Math.fround(Math.fround(xn[i] + cn[j]) - 2 * Math.fround(dot));
            row[j] = ((floatBits(kernel === 'screen_h' ? Math.max(a, 0) : Math.abs(a)) & hmask) | j) >>> 0;
          }
          row.sort();
          for (let e = 0; e <= rowKeys; e++) keys[e * n + i] = e < mpad ? row[e] : 0xffffffff;
        }
        return;
      }
      case 'exact_h':
      case 'exact_h16': { // the candidates that can matter, measured directly; the certificate, or the list
        const rowKeys = kernel === 'exact_h16' ? 16 : 8;
        const C = f32('C'), xn = f32('xn'), keys = u32('keys'), sc = u32('scalars'), n = num('n'), d = num('d'), m = num('m'), x = X(n * d);
        const J1 = u32('J1'), D1 = f32('D1'), J2 = u32('J2'), D2 = f32('D2'), list = u32('list');
        const thr = f32('thr'), ccount = u32('ccount'), cap = num('cap');
        const imask = num('imask') >>> 0, [c1, c2, c3, c4, s2] = ['c1', 'c2', 'c3', 'c4', 's2'].map(num);
        const val = (key: number) => bitsFloat((key & ~imask) >>> 0);
        const top = (key: number) => (key >= 0x7f800000 ? Infinity : bitsFloat(((key & ~imask) >>> 0) + imask + 1));
        const fits = sc[1] === 0, R = Math.sqrt(bitsFloat(sc[0]));
        for (let i = 0; i < n; i++) {
          const r = Math.sqrt(xn[i]), rR = r + R;
          const B = Math.fround(c1 * r * R + c2 * rR * rR + c3 * rR + c4);
          const U = Math.fround((top(keys[n + i]) + 2 * B) * (1 + 2 ** -20));
          const cands: Array<[number, number]> = [];
          for (let q = 0; q < rowKeys; q++) {
            const key = keys[q * n + i], j = (key & imask) >>> 0;
            if (key !== 0xffffffff && j < m && (!fits || !(val(key) > U))) cands.push([dist(x, i, d, C, j * d), j]);
          }
          cands.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          const [e1, j1] = cands[0] ?? [Infinity, 0xffffffff], [e2, j2] = cands[1] ?? [Infinity, 0xffffffff];
          const last = keys[rowKeys * n + i];
          if (fits && (last >= 0x7f800000 || val(last) - B > e2 * s2)) {
            J1[i] = j1; D1[i] = e1; J2[i] = j2; D2[i] = e2;
          } else {
            const pos = sc[2]++;
            list[pos] = i;
            if (pos < cap) {
              thr[pos] = fits ? Math.fround(Math.fround(e2 * s2 + B) * (1 + 2 ** -20)) : -1;
              ccount[pos] = 0;
            }
          }
        }
        return;
      }
      case 'collect_h':
      case 'collect_h90': { // every anchor under the listed point's threshold (approximations as screen_h's)
        const dp = num('dp'), mpad = num('mpad'), cap = num('cap'), sc = u32('scalars'), list = u32('list'), thr = f32('thr');
        const Xh = this.view(ptr('Xh'), Uint16Array), Ch = this.view(ptr('Ch'), Uint16Array), xn = f32('xn'), cn = f32('cn');
        const cand = u32('cand'), ccount = u32('ccount'), ncand = num('ncand');
        const ch = Float64Array.from(Ch.subarray(0, mpad * dp), halfToFloat);
        for (let pos = 0; pos < Math.min(sc[2], cap); pos++) {
          const i = list[pos], T = thr[pos];
          const x = Float64Array.from(Xh.subarray(i * dp, (i + 1) * dp), halfToFloat);
          for (let j = 0; j < mpad; j++) {
            let dot = 0;
            for (let k = 0; k < dp; k++) dot += x[k] * ch[j * dp + k];
            const a = Math.fround(Math.fround(xn[i] + cn[j]) - 2 * Math.fround(dot));
            if (a <= T) {
              const slot = ccount[pos]++;
              if (slot < ncand) cand[pos * ncand + slot] = j;
            }
          }
        }
        return;
      }
      case 'exact_collect': {
        const C = f32('C'), d = num('d'), cap = num('cap'), sc = u32('scalars'), list = u32('list'), thr = f32('thr');
        const cand = u32('cand'), ccount = u32('ccount'), list2 = u32('list2'), ncand = num('ncand');
        const J1 = u32('J1'), D1 = f32('D1'), J2 = u32('J2'), D2 = f32('D2');
        const total = sc[2];
        const maxRow = total ? Math.max(...Array.from(list.subarray(0, total))) : 0;
        const x = X((maxRow + 1) * d);
        for (let pos = 0; pos < total; pos++) {
          const i = list[pos];
          if (!(pos < cap && thr[pos] >= 0 && ccount[pos] <= ncand)) {
            list2[sc[4]++] = i;
            continue;
          }
          const cands: Array<[number, number]> = [];
          for (let k = 0; k < ccount[pos]; k++) cands.push([dist(x, i, d, C, cand[pos * ncand + k] * d), cand[pos * ncand + k]]);
          cands.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          J1[i] = cands[0]?.[1] ?? 0xffffffff; D1[i] = cands[0]?.[0] ?? Infinity;
          J2[i] = cands[1]?.[1] ?? 0xffffffff; D2[i] = cands[1]?.[0] ?? Infinity;
        }
        return;
      }
      case 'fallback_split': { // every slice's top-2 of each listed point (up to cap)
        const C = f32('C'), d = num('d'), m = num('m'), slice = num('slice'), cap = num('cap'), list = u32('list'), count = u32('count');
        const part = u64('part'), total = Math.min(count[0], cap);
        const maxRow = total ? Math.max(...Array.from(list.subarray(0, total))) : 0;
        const x = X((maxRow + 1) * d);
        for (let y = 0; y * slice < m; y++) {
          const a0 = y * slice, ms = Math.min(slice, m - a0);
          for (let q = 0; q < total; q++) {
            let b1 = Infinity, b2 = Infinity, j1 = 0xffffffff, j2 = 0xffffffff;
            for (let j = a0; j < a0 + ms; j++) {
              const v = dist(x, list[q], d, C, j * d);
              if (v < b1) [b2, j2, b1, j1] = [b1, j1, v, j];
              else if (v < b2) [b2, j2] = [v, j];
            }
            part[2 * (y * cap + q)] = (BigInt(floatBits(b1)) << 32n) | BigInt(j1);
            part[2 * (y * cap + q) + 1] = (BigInt(floatBits(b2)) << 32n) | BigInt(j2);
          }
        }
        return;
      }
      case 'fallback_merge': {
        const part = u64('part'), slices = num('slices'), cap = num('cap'), list = u32('list'), count = u32('count'), rest = u32('rest');
        const J1 = u32('J1'), D1 = f32('D1'), J2 = u32('J2'), D2 = f32('D2');
        const total = Math.min(count[0], cap);
        rest[0] = count[0] > cap ? count[0] - cap : 0;
        for (let q = 0; q < total; q++) {
          const all: Array<[number, number]> = [];
          for (let y = 0; y < slices; y++) {
            for (let h = 0; h < 2; h++) {
              const v = part[2 * (y * cap + q) + h], j = Number(v & 0xffffffffn);
              if (j !== 0xffffffff) all.push([bitsFloat(Number(v >> 32n)), j]);
            }
          }
          all.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          const i = list[q];
          J1[i] = all[0]?.[1] ?? 0xffffffff; D1[i] = all[0]?.[0] ?? Infinity;
          J2[i] = all[1]?.[1] ?? 0xffffffff; D2[i] = all[1]?.[0] ?? Infinity;
        }
        return;
      }
      case 'assign_list': {
        const C = f32('C'), n = num('n'), d = num('d'), m = num('m'), x = X(n * d);
        const J1 = u32('j1'), D1 = f32('d1'), J2 = u32('j2'), D2 = f32('d2'), list = u32('list'), count = u32('count');
        for (let q = 0; q < count[0]; q++) top2(x, list[q], d, C, m, J1, D1, J2, D2);
        return;
      }
      case 'pass_end': {
        const part = i64('partial'), blocks = num('blocks'), out = i64('out');
        const fallback = ptr('fallback') === 0n ? undefined : u32('fallback');
        let e = 0n, c = 0n;
        for (let b = 0; b < blocks; b++) {
          e += part[2 * b];
          c += part[2 * b + 1];
        }
        out[0] = e;
        out[1] = c;
        out[2] = BigInt(fallback ? fallback[0] : -1);
        return;
      }
      case 'residual_ranges': { // per (block, dimension): max |x − c| and Σ (x − c)², f64, rows in order
        const n = num('n'), d = num('d'), B = num('blockRows'), x = X(n * d), C = f32('C'), A = u32('assign');
        const maxAbs = f64('maxAbs'), sumSq = f64('sumSq');
        for (let b = 0; b * B < n; b++)
          for (let k = 0; k < d; k++) {
            let mx = 0, sq = 0;
            for (let i = b * B; i < Math.min(n, (b + 1) * B); i++) {
              const r = x[i * d + k] - C[A[i] * d + k];
              if (Math.abs(r) > mx) mx = Math.abs(r);
              sq += r * r;
            }
            maxAbs[b * d + k] = mx;
            sumSq[b * d + k] = sq;
          }
        return;
      }
      case 'residual_block_errs': { // per block of rows: its rows' errors summed in row order
        const n = num('n'), B = num('blockRows'), rowErr = f64('rowErr'), out = f64('blockErr');
        for (let b = 0; b * B < n; b++) {
          let e = 0;
          for (let i = b * B; i < Math.min(n, (b + 1) * B); i++) e += rowErr[i];
          out[b] = e;
        }
        return;
      }
      case 'crc_slices': { // each piece's CRC32C, as the host computes it
        const total = num('total'), slice = num('slice'), out = u32('out');
        for (let p = 0, s = 0; p < total; p += slice, s++) out[s] = crc32c(this.bytes(ptr('bytes') + BigInt(p), Math.min(slice, total - p)));
        return;
      }
      case 'residual_bits_rows': { // per row: the bits codec's codes packed LSB first, Σ e² (uncoded dimensions, then coded), as bits-rows.ts
        const n = num('n'), d = num('d'), R = num('R'), x = X(n * d), C = f32('C'), A = u32('assign'), S = f32('steps');
        const bits = this.view(ptr('bits'), Uint8Array), codes = this.view(ptr('codes'), Uint8Array), rowErr = f64('rowErr');
        for (let i = 0; i < n; i++) {
          let err = 0;
          for (let k = 0; k < d; k++) {
            if (bits[k] !== 0) continue;
            const e = x[i * d + k] - C[A[i] * d + k];
            err += e * e;
          }
          codes.fill(0, i * R, (i + 1) * R);
          let at = 0;
          for (let k = 0; k < d; k++) {
            const b = bits[k];
            if (b === 0) continue;
            const s = S[k], xv = x[i * d + k], av = C[A[i] * d + k], off = 2 ** (b - 1) - 1, top = 2 ** b - 1;
            const v = (xv - av) / s, f = Math.floor(v);
            let q = (v - f >= 0.5 ? f + 1 : f) + off;
            q = q < 0 ? 0 : q > top ? top : q;
            const e = xv - Math.fround(av + s * (q - off));
            err += e * e;
            for (let j = 0; j < b; j++, at++) if ((q >> j) & 1) codes[i * R + (at >> 3)] |= 1 << (at & 7);
          }
          rowErr[i] = err;
        }
        return;
      }
      case 'residual_rows': { // per row: codes (round as the kernel: floor, then up when the rest is >= 0.5) and Σ_k e²
        const n = num('n'), d = num('d'), L = num('L'), x = X(n * d), C = f32('C'), A = u32('assign'), S = f32('scales');
        const codes = this.view(ptr('codes'), Int8Array), rowErr = f64('rowErr');
        for (let i = 0; i < n; i++) {
          let err = 0;
          for (let k = 0; k < d; k++) {
            const s = S[k], xv = x[i * d + k], av = C[A[i] * d + k];
            let q = 0;
            if (s !== 0) {
              const v = (xv - av) / s, f = Math.floor(v);
              q = v - f >= 0.5 ? f + 1 : f;
              q = q > L ? L : q < -L ? -L : q;
            }
            codes[i * d + k] = q;
            const e = xv - Math.fround(av + s * q);
            err += e * e;
          }
          rowErr[i] = err;
        }
        return;
      }
      case 'residual_row_sums': { // per listed row: Σ (x − x̂)², Σ x², Σ x̂², Σ x·x̂ with x̂ = fround(c + s · code), as the host's figures
        const d = num('d'), count = num('count'), C = f32('C'), A = u32('assign'), S = f32('scales');
        const codes = this.view(ptr('codes'), Int8Array), rows = u32('rows'), out = f64('sums');
        let rowsUsed = 0;
        for (let t = 0; t < count; t++) rowsUsed = Math.max(rowsUsed, rows[t] + 1);
        const x = X(rowsUsed * d);
        for (let t = 0; t < count; t++) {
          const i = rows[t];
          let e2 = 0, xx = 0, rr = 0, xr = 0;
          for (let k = 0; k < d; k++) {
            const xv = x[i * d + k], rv = Math.fround(C[A[i] * d + k] + S[k] * codes[i * d + k]);
            e2 += (xv - rv) * (xv - rv);
            xx += xv * xv;
            rr += rv * rv;
            xr += xv * rv;
          }
          out.set([e2, xx, rr, xr], 4 * t);
        }
        return;
      }
      case 'decode_scalar': // as io/vlc/reconstruct.ts: fround(anchor + scale · code), the product exact in a double
      case 'decode_pq': {
        const r0 = num('r0'), rows = num('rows'), d = num('d'), C = f32('anchors'), A = u32('assign'), out = f32('out');
        const S = ptr('scales') === 0n ? undefined : f32('scales');
        const pq = kernel === 'decode_pq';
        const codes = ptr('codes') === 0n ? undefined : pq ? this.view(ptr('codes'), Uint8Array) : this.view(ptr('codes'), Int8Array);
        const M = pq ? num('M') : 0, K = pq ? num('K') : 0;
        const bounds = pq ? this.view(ptr('bounds'), Int32Array) : undefined, books = pq ? f32('codebooks') : undefined;
        for (let i = r0; i < r0 + rows; i++) {
          for (let t = 0; t < (pq ? M : 1); t++) {
            const lo = bounds ? bounds[t] : 0, hi = bounds ? bounds[t + 1] : d;
            for (let k = lo; k < hi; k++) {
              const a = C[A[i] * d + k];
              const add = !codes || !S ? 0 : pq ? S[A[i]] * books![K * lo + codes[i * M + t] * (hi - lo) + k - lo] : S[k] * codes[i * d + k];
              out[(i - r0) * d + k] = codes ? a + add : a;
            }
          }
        }
        return;
      }
      case 'decode_pq_projected': { // as codecs/pq.ts addProjected: Σ_r ĉ_r P[r][k] in f64 in order, then fround(anchor + s · sum)
        const r0 = num('r0'), rows = num('rows'), d = num('d'), M = num('M'), K = num('K'), C = f32('anchors'), A = u32('assign'), out = f32('out');
        const codes = this.view(ptr('codes'), Uint8Array), bounds = this.view(ptr('bounds'), Int32Array);
        const books = f32('codebooks'), P = f32('projection'), S = f32('scales');
        for (let i = r0; i < r0 + rows; i++)
          for (let k = 0; k < d; k++) {
            let acc = 0;
            for (let t = 0; t < M; t++) {
              const lo = bounds[t], w = bounds[t + 1] - lo, e = K * lo + codes[i * M + t] * w;
              for (let r = 0; r < w; r++) acc += books[e + r] * P[(lo + r) * d + k];
            }
            out[(i - r0) * d + k] = C[A[i] * d + k] + S[A[i]] * acc;
          }
        return;
      }
      case 'decode_bits': { // as codecs/bits.ts addTo: fround(anchor + step · (code − o)), the product exact in a double
        const r0 = num('r0'), rows = num('rows'), d = num('d'), R = num('R'), C = f32('anchors'), A = u32('assign'), out = f32('out');
        const codes = this.view(ptr('codes'), Uint8Array), bits = this.view(ptr('bits'), Uint8Array), start = this.view(ptr('start'), Int32Array);
        const steps = f32('steps');
        for (let i = r0; i < r0 + rows; i++) {
          for (let k = 0; k < d; k++) {
            const a = C[A[i] * d + k], b = bits[k];
            let q = 0;
            for (let j = 0; j < b; j++) q |= ((codes[i * R + ((start[k] + j) >> 3)] >> ((start[k] + j) & 7)) & 1) << j;
            out[(i - r0) * d + k] = b === 0 ? a : a + steps[k] * (q - (2 ** (b - 1) - 1));
          }
        }
        return;
      }
      case 'ec_decode':
        return ecDecode(this.view(ptr('bytes'), Uint8Array), u64('blockAt'), num('b0'), Math.min(num('blocks'), grid * 4), num('blockRows'),
          num('n'), num('D'), num('scaleBits'), this.view(ptr('slots'), Uint16Array), u32('state'),
          this.view(ptr('lo'), Int32Array), u32('size'), this.view(ptr('codes'), Int32Array), this.view(ptr('err'), Int32Array));
      case 'ec_axis':
      case 'ec_rotated': {
        const codes = ptr('codes') === 0n ? undefined : this.view(ptr('codes'), Int32Array);
        const [A, C, S, O] = [u32('assign'), f32('anchors'), f32('steps'), f32('offsets')];
        const [D, c0, r0, rows, d, out] = [num('D'), num('c0'), num('r0'), num('rows'), num('d'), f32('out')];
        if (kernel === 'ec_axis') return ecAxis(C, A, codes, this.view(ptr('colOf'), Int32Array), S, O, D, c0, r0, rows, d, out);
        return ecRotated(C, A, codes, this.view(ptr('dims'), Int32Array), f32('P'), S, O, D, c0, r0, rows, d, out);
      }
      case 'knn_scan':
        return knnScan(num('nqPad'), Math.min(num('nq'), grid * 32), gridY, num('nb'), num('d'), num('k'), num('chunkRows'),
          f32('QT'), f32('X'), f32('partD'), this.view(ptr('partI'), Int32Array));
      case 'knn_merge':
        return knnMerge(Math.min(num('nq'), grid * 8), num('chunks'), num('k'), f32('partD'), this.view(ptr('partI'), Int32Array),
          f32('outD'), this.view(ptr('outI'), Int32Array));
      case 'add_partials': { // another GPU's sums into this one's (cuda/peer.ts): int64 wrapping adds, u32 adds, max
        const m = num('m'), d = num('d');
        const S = u64('S'), S2 = u64('S2');
        for (let e = 0; e < m * d; e++) S[e] = BigInt.asUintN(64, S[e] + S2[e]);
        const W = u64('W'), W2 = u64('W2'), sse = u64('sse'), sse2 = u64('sse2'), far = u64('far'), far2 = u64('far2');
        const count = u32('count'), count2 = u32('count2');
        for (let j = 0; j < m; j++) {
          W[j] = BigInt.asUintN(64, W[j] + W2[j]);
          sse[j] = BigInt.asUintN(64, sse[j] + sse2[j]);
          count[j] = (count[j] + count2[j]) >>> 0;
          if (far2[j] > far[j]) far[j] = far2[j];
        }
        return;
      }
      case 'update_anchors': {
        const C = f32('C'), S = i64('S'), W = i64('W'), m = num('m'), d = num('d'), step = num('step'), sScale = num('sScale'), wScale = num('wScale');
        for (let j = 0; j < m; j++) {
          if (W[j] <= 0n) continue;
          for (let k = 0; k < d; k++) {
            const mean = Number(S[j * d + k]) / sScale / (Number(W[j]) / wScale);
            C[j * d + k] += step * (mean - C[j * d + k]);
          }
        }
        return;
      }
      default:
        throw new Error(`fake driver: no emulation of kernel ${name} (block ${block})`);
    }
  }
}

/** Round half to even, as the device's __double2ll_rn. */
function roundEven(v: number): number {
  const r = Math.round(v);
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const f32box = new Float32Array(1);
const u32box = new Uint32Array(f32box.buffer);

/** The bits of an f32 value. */
function floatBits(v: number): number {
  f32box[0] = v;
  return u32box[0];
}

function bitsFloat(b: number): number {
  u32box[0] = b;
  return f32box[0];
}

/** An f32 value (exactly representable in double) to fp16 bits, rounding to nearest even (__float2half_rn). */
function floatToHalf(v: number): number {
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (Number.isNaN(v)) return 0x7e00;
  if (a >= 65520) return sign | 0x7c00; // beyond the largest half (65504) once rounded
  if (a < 2 ** -24 * 0.5) return sign;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  e = Math.max(-14, e);
  const ulp = 2 ** (e - 10);
  let q = a / ulp;
  const f = Math.floor(q);
  q = q - f > 0.5 || (q - f === 0.5 && f % 2 === 1) ? f + 1 : f;
  const r = q * ulp; // the rounded magnitude
  if (r < 2 ** -14) return sign | Math.round(r / 2 ** -24);
  let ee = Math.floor(Math.log2(r));
  if (2 ** ee > r) ee--;
  else if (2 ** (ee + 1) <= r) ee++;
  return sign | ((ee + 15) << 10) | Math.round((r / 2 ** ee - 1) * 1024);
}

/** Where tile_anchors (cuda/screen_h90.cu) puts half k of anchor row r: one index per source half. */
function tiledIndex(dp: number): (row: number, k: number) => number {
  const kSteps = dp / 64;
  return (row, k) => {
    const r = row & 127, col = k >> 3;
    const block = (row >> 7) * kSteps + (col >> 3);
    return block * 8192 + (r * 8 + ((col & 7) ^ (r & 7))) * 8 + (k & 7);
  };
}
function tileAnchors(Ch: Uint16Array, dp: number, mpad: number): Uint16Array {
  const at = tiledIndex(dp), out = new Uint16Array(mpad * dp);
  for (let row = 0; row < mpad; row++) for (let k = 0; k < dp; k++) out[at(row, k)] = Ch[row * dp + k];
  return out;
}
function untileAnchors(Ct: Uint16Array, dp: number, mpad: number): Uint16Array {
  const at = tiledIndex(dp), out = new Uint16Array(mpad * dp);
  for (let row = 0; row < mpad; row++) for (let k = 0; k < dp; k++) out[row * dp + k] = Ct[at(row, k)];
  return out;
}
