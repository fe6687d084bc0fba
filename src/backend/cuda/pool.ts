// Device memory, allocated once per engine and reused by every iteration (no allocation inside
// the loop). The pool knows every live allocation, so dispose() frees exactly what was taken and
// tests can check that nothing leaks, even when a later allocation fails.
import type { CudaDriver, Handle } from './driver.js';
import { CudaError, check, describeStatus } from './check.js';
import { CU } from './status.js';

export interface DeviceBuffer {
  readonly name: string;
  readonly ptr: Handle;
  readonly bytes: number;
}

export class DevicePool {
  private live = new Map<Handle, DeviceBuffer>();
  private out = new BigUint64Array(1);

  /** `makeCurrent` binds the pool's context before each driver call (several GPUs take turns). */
  constructor(private readonly drv: CudaDriver, private readonly where: string, private readonly makeCurrent: () => void = () => {}) {}

  /** Bytes currently allocated through this pool. */
  get bytesInUse(): number {
    let s = 0;
    for (const b of this.live.values()) s += b.bytes;
    return s;
  }

  get count(): number {
    return this.live.size;
  }

  alloc(name: string, bytes: number): DeviceBuffer {
    const size = Math.max(bytes, 8); // zero-sized requests still get a valid, distinct pointer
    this.makeCurrent();
    const st = this.drv.cuMemAlloc_v2(this.out, size);
    if (st === CU.OUT_OF_MEMORY) {
      const [free, total] = memInfo(this.drv);
      throw new CudaError(
        `out of GPU memory on ${this.where}: allocating ${name} needs ${fmtBytes(size)}, ` +
          `${fmtBytes(free)} free of ${fmtBytes(total)} (${fmtBytes(this.bytesInUse)} already held by vlc); ` +
          `use fewer vectors or anchors, another GPU (--gpu), or --device cpu`,
        st,
      );
    }
    check(this.drv, st, `cuMemAlloc(${name}, ${size} bytes)`);
    const buf: DeviceBuffer = { name, ptr: this.out[0], bytes: size };
    this.live.set(buf.ptr, buf);
    return buf;
  }

  free(buf: DeviceBuffer | undefined): void {
    if (!buf || !this.live.has(buf.ptr)) return;
    this.live.delete(buf.ptr);
    this.makeCurrent();
    check(this.drv, this.drv.cuMemFree_v2(buf.ptr), `cuMemFree(${buf.name})`);
  }

  /** Free everything; keeps going past failures (the context may be broken) and reports the first. */
  freeAll(): void {
    let first: unknown;
    if (this.live.size) this.makeCurrent();
    for (const buf of [...this.live.values()]) {
      this.live.delete(buf.ptr);
      const st = this.drv.cuMemFree_v2(buf.ptr);
      if (st !== CU.SUCCESS && first === undefined) first = new CudaError(`cuMemFree(${buf.name}): ${describeStatus(this.drv, st)}`, st);
    }
    if (first) throw first;
  }
}

/** [free, total] bytes of the current context's device, [0, 0] if the driver cannot say. */
/**
 * Buffers taken from a pool for one job (a residual encode, a decode, a k-NN) and given back
 * together, on every path: `alloc` is a plain function, to be handed to helpers.
 */
export class HeldBuffers {
  private bufs: DeviceBuffer[] = [];
  constructor(private readonly pool: DevicePool) {}
  readonly alloc = (name: string, bytes: number): DeviceBuffer => {
    const b = this.pool.alloc(name, bytes);
    this.bufs.push(b);
    return b;
  };
  /** Gives back every buffer taken so far (again later: only those taken since). */
  free(): void {
    for (const b of this.bufs.splice(0)) this.pool.free(b);
  }
}

export function memInfo(drv: CudaDriver): [number, number] {
  const free = new BigUint64Array(1);
  const total = new BigUint64Array(1);
  if (drv.cuMemGetInfo_v2(free, total) !== CU.SUCCESS) return [0, 0];
  return [Number(free[0]), Number(total[0])];
}

export function fmtBytes(b: number): string {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(2)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(1)} MiB`;
  if (b >= 2 ** 10) return `${(b / 2 ** 10).toFixed(1)} KiB`;
  return `${b} B`;
}
