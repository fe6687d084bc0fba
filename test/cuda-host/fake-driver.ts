// A fake CUDA driver: the same bound functions as src/backend/cuda/driver.ts, backed by host
// memory, with the kernels of cuda/*.cu emulated in JS (same arguments, same semantics). It lets
// the CPU suite run the whole CUDA host path — probe, context, pool, engine, commands — and inject
// the failures a real machine produces: no device, PTX too new, OOM at the k-th allocation, a
// failing kernel. It tracks every allocation so tests can check that all were freed.
import type { CudaDriver } from '../../dist/backend/cuda/driver.js';

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
  /** Kernels whose completion reports this status (as an asynchronous launch failure would). */
  failKernel?: { name: string; status: number };
}

const NAMES: Record<number, [string, string]> = {
  0: ['CUDA_SUCCESS', 'no error'],
  1: ['CUDA_ERROR_INVALID_VALUE', 'invalid argument'],
  2: ['CUDA_ERROR_OUT_OF_MEMORY', 'out of memory'],
  100: ['CUDA_ERROR_NO_DEVICE', 'no CUDA-capable device is detected'],
  222: ['CUDA_ERROR_UNSUPPORTED_PTX_VERSION', 'the provided PTX was compiled with an unsupported toolchain.'],
  600: ['CUDA_ERROR_NOT_READY', 'device not ready'],
  700: ['CUDA_ERROR_ILLEGAL_ADDRESS', 'an illegal memory access was encountered'],
  719: ['CUDA_ERROR_LAUNCH_FAILED', 'unspecified launch failure'],
};

interface Alloc {
  base: bigint;
  buf: ArrayBuffer;
}

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
  retained = 0;

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
      cuDevicePrimaryCtxRetain: (out) => ((out[0] = self.handle()), self.retained++, 0),
      cuDevicePrimaryCtxRelease_v2: () => (self.retained--, 0),
      cuCtxSetCurrent: () => 0,
      cuMemGetInfo_v2: (free, total) => {
        free[0] = BigInt(o.freeBytes ?? devices[0].memBytes);
        total[0] = BigInt(devices[0].memBytes);
        return 0;
      },
      cuModuleLoadData: (out, image) => {
        if (o.moduleStatus) return o.moduleStatus;
        if (image[image.length - 1] !== 0) return 218; // the real driver wants a NUL-terminated image
        out[0] = self.handle();
        return 0;
      },
      cuModuleUnload: () => 0,
      cuModuleGetFunction: (out, _mod, name) => {
        out[0] = self.handle();
        self.functions.set(out[0], name);
        return 0;
      },
      cuMemAlloc_v2: (out, bytes) => {
        self.allocs++;
        if (o.oomAtAlloc === self.allocs) return 2;
        const base = self.next;
        self.next += BigInt(Math.ceil(bytes / 256) * 256 + 256);
        self.mem.set(base, { base, buf: new ArrayBuffer(bytes) });
        out[0] = base;
        return 0;
      },
      cuMemFree_v2: (p) => {
        if (!self.mem.delete(p)) return 1;
        self.frees++;
        return 0;
      },
      cuMemcpyHtoD_v2: (dst, src, bytes) => {
        self.bytes(dst, bytes).set(new Uint8Array(src.buffer, src.byteOffset, bytes));
        return 0;
      },
      cuMemcpyDtoH_v2: (dst, src, bytes) => {
        new Uint8Array(dst.buffer, dst.byteOffset, bytes).set(self.bytes(src, bytes));
        return 0;
      },
      cuStreamCreate: (out) => ((out[0] = self.handle()), 0),
      cuStreamDestroy_v2: () => 0,
      cuEventCreate: (out) => ((out[0] = self.handle()), 0),
      cuEventDestroy_v2: () => 0,
      cuEventRecord: () => 0,
      cuEventQuery: () => {
        const f = self.pendingFailure;
        return f || 0;
      },
      cuEventSynchronize: () => self.pendingFailure || 0,
      cuEventElapsedTime: (out) => ((out[0] = 0.5), 0),
      cuLaunchKernel: (f, gx, _gy, _gz, bx, _by, _bz, _sh, _stream, params) => {
        const name = self.functions.get(f) ?? '?';
        self.launches.push(name);
        if (self.pendingFailure) return self.pendingFailure;
        if (o.failKernel && name.startsWith(o.failKernel.name)) {
          self.pendingFailure = o.failKernel.status; // reported at the next query, like the real thing
          return 0;
        }
        self.run(name, gx, bx, params);
        return 0;
      },
      cuGetErrorName: (st, out) => ((out[0] = (NAMES[st] ?? [`CUDA_ERROR_${st}`])[0]), NAMES[st] ? 0 : 1),
      cuGetErrorString: (st, out) => ((out[0] = (NAMES[st] ?? ['', 'unknown'])[1]), NAMES[st] ? 0 : 1),
    };
    this.api = api;
  }

  /** Allocations not yet freed. */
  get live(): number {
    return this.mem.size;
  }

  private handle(): bigint {
    return this.handles++;
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

  private view<T>(p: ArrayBufferView, ctor: new (b: ArrayBuffer, off: number) => T): T {
    const { a, off } = this.find((p as BigUint64Array)[0]);
    return new ctor(a.buf, off);
  }

  // --- the kernels of cuda/*.cu in JS (argument lists as in the .cu files) ---
  private run(name: string, grid: number, block: number, P: ArrayBufferView[]): void {
    const f32 = (k: number) => this.view(P[k], Float32Array as never) as unknown as Float32Array;
    const f64 = (k: number) => this.view(P[k], Float64Array as never) as unknown as Float64Array;
    const u32 = (k: number) => this.view(P[k], Uint32Array as never) as unknown as Uint32Array;
    const i64 = (k: number) => this.view(P[k], BigInt64Array as never) as unknown as BigInt64Array;
    const u64 = (k: number) => this.view(P[k], BigUint64Array as never) as unknown as BigUint64Array;
    const int = (k: number) => (P[k] as Int32Array)[0];
    const dbl = (k: number) => (P[k] as Float64Array)[0];
    const half = /_f16(_occ2|_p4)?$/.test(name);
    // The vectors as f32 (an f16 buffer decoded exactly, as the kernels widen each element).
    const X = (k: number, count: number): Float32Array => {
      if (!half) return f32(k);
      const h = this.view(P[k], Uint16Array as never) as unknown as Uint16Array;
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
    const base = name.replace(/_(f32|f16)(_occ2|_p4)?$/, '');
    switch (base) {
      case 'max_abs': {
        const count = Number((P[1] as BigInt64Array)[0]), x = X(0, count), out = u32(2);
        const fb = new Float32Array(1), ub = new Uint32Array(fb.buffer);
        for (let e = 0; e < count; e++) {
          fb[0] = Math.abs(x[e]);
          if (ub[0] > out[0]) out[0] = ub[0];
        }
        return;
      }
      case 'seed_dist': {
        const n = int(1), d = int(2), x = X(0, n * d), c = f32(3), D = f32(4), mode = int(5), part = f64(6);
        for (let b = 0; b < grid; b++) {
          let s = 0;
          for (let i = b * 256; i < Math.min(n, (b + 1) * 256); i++) {
            let v = dist(x, i, d, c, 0);
            if (mode === 1) v = Math.min(v, D[i]);
            D[i] = v;
            s += v;
          }
          part[b] = s;
        }
        return;
      }
      case 'seed_try': {
        const n = int(1), d = int(2), x = X(0, n * d), C = f32(3), L = int(4), D = f32(5), part = f64(6);
        for (let b = 0; b < grid; b++)
          for (let l = 0; l < L; l++) {
            let s = 0;
            for (let i = b * 256; i < Math.min(n, (b + 1) * 256); i++) s += Math.min(D[i], dist(x, i, d, C, l * d));
            part[b * L + l] = s;
          }
        return;
      }
      case 'pass_begin': {
        const m = int(0), d = int(1), huber = dbl(2), hasPrev = int(3);
        const count = u32(4), sse = f64(5), far = u64(6), W = i64(7), S = i64(8), H = f64(9);
        for (let j = 0; j < m; j++) {
          H[j] = huber > 0 && hasPrev && count[j] > 0 ? (huber * huber * sse[j]) / count[j] : Infinity;
          count[j] = 0;
          sse[j] = 0;
          far[j] = 0n;
          W[j] = 0n;
        }
        S.fill(0n, 0, m * d);
        return;
      }
      case 'assign_top2': {
        const C = f32(1), n = int(2), d = int(3), m = int(4), x = X(0, n * d);
        const J1 = u32(5), D1 = f32(6), J2 = u32(7), D2 = f32(8);
        for (let i = 0; i < n; i++) top2(x, i, d, C, m, J1, D1, J2, D2);
        return;
      }
      case 'reduce_points': {
        const n = int(1), d = int(2), x = X(0, n * d);
        const J1 = u32(3), D1 = f32(4), J2 = u32(5), D2 = f32(6), assign = u32(7), H = f64(8);
        const T = dbl(9), acc = int(10), sScale = dbl(11), wScale = dbl(12);
        const S = i64(13), W = i64(14), count = u32(15), sse = f64(16), far = u64(17), part = f64(18);
        const first = int(19); // data row of X's row 0 (a tile): the farthest point's index is global
        const robust = (v: number, h: number) => (v <= h ? 1 : Math.sqrt(h / v));
        // Integer sums as the device makes them (one rounded integer per term), gathered in f64
        // while that is exact (below 2^53) so the emulation stays quick, and moved into the
        // int64 buffers before it would not be: the sums are then exact whatever the grouping
        // (one launch, or one per tile), like the device's integer atomics.
        const accS = new Map<number, number>();
        const accW = new Map<number, number>();
        const add = (mp: Map<number, number>, k: number, v: number) => {
          const t = Math.round(v), old = mp.get(k) ?? 0;
          if (Math.abs(old + t) < 2 ** 53) mp.set(k, old + t);
          else {
            (mp === accS ? S : W)[k] += BigInt(old) + BigInt(t);
            mp.set(k, 0);
          }
        };
        let energy = 0, changed = 0;
        for (let i = 0; i < n; i++) {
          const a = J1[i], b = J2[i], da = D1[i], db = D2[i];
          let w2 = T > 0 && b !== 0xffffffff ? 1 / (1 + Math.exp((db - da) / T)) : 0;
          if (w2 < 2 ** -20) w2 = 0; // MIN_SHARE of reduce.cu
          const w1 = 1 - w2;
          count[a]++;
          sse[a] += da;
          const fb = new Float32Array([da]);
          const packed = (BigInt(new Uint32Array(fb.buffer)[0]) << 32n) | BigInt(0xffffffff - (first + i));
          if (packed > far[a]) far[a] = packed;
          if (assign[i] !== a) changed++;
          assign[i] = a;
          energy += da;
          if (acc) {
            const wa = w1 * robust(da, H[a]);
            const wb = w2 > 0 ? w2 * robust(db, H[b]) : 0;
            add(accW, a, wa * wScale);
            if (wb > 0) add(accW, b, wb * wScale);
            for (let k = 0; k < d; k++) {
              const v = x[i * d + k] * sScale;
              add(accS, a * d + k, wa * v);
              if (wb > 0) add(accS, b * d + k, wb * v);
            }
          }
        }
        for (const [k, v] of accW) W[k] += BigInt(v);
        for (const [k, v] of accS) S[k] += BigInt(v);
        part.fill(0, 0, 2 * grid);
        part[0] = energy;
        part[1] = changed;
        return;
      }
      case 'point_norms': {
        const n = int(1), d = int(2), x = X(0, n * d), xx = f32(3);
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let k = 0; k < d; k++) s = Math.fround(s + Math.fround(x[i * d + k] * x[i * d + k]));
          xx[i] = s;
        }
        return;
      }
      case 'anchor_norms': {
        const C = f32(0), m = int(1), d = int(2), cc = f32(3), ccMax = f32(4), count = u32(5);
        let best = 0;
        for (let j = 0; j < m; j++) {
          let s = 0;
          for (let k = 0; k < d; k++) s = Math.fround(s + Math.fround(C[j * d + k] * C[j * d + k]));
          cc[j] = s;
          best = Math.max(best, s);
        }
        ccMax[0] = best;
        count[0] = 0;
        return;
      }
      case 'screen_top2':
      case 'screen_tc': { // same outputs; the emulation computes the dot products in f32
        const C = f32(1), xx = f32(2), cc = f32(3), n = int(4), d = int(5), m = int(6), x = X(0, n * d);
        const J1 = u32(7), J2 = u32(8), J3 = u32(9), A2 = f32(10), A4 = f32(11);
        for (let i = 0; i < n; i++) {
          const best: Array<[number, number]> = [];
          for (let j = 0; j < m; j++) {
            let dot = 0;
            for (let k = 0; k < d; k++) dot = Math.fround(dot + Math.fround(x[i * d + k] * C[j * d + k]));
            best.push([Math.fround(Math.fround(xx[i] + cc[j]) - 2 * dot), j]);
          }
          best.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          const at = (r: number) => best[r] ?? [Infinity, 0xffffffff];
          J1[i] = at(0)[1]; J2[i] = at(1)[1]; J3[i] = at(2)[1]; A2[i] = at(1)[0]; A4[i] = at(3)[0];
        }
        return;
      }
      case 'screen_exact': {
        const C = f32(1), xx = f32(2), ccMax = f32(3), bcoef = (P[4] as Float32Array)[0], n = int(5), d = int(6), x = X(0, n * d);
        const J1 = u32(7), D1 = f32(8), J2 = u32(9), D2 = f32(10), J3 = u32(11), list = u32(12), count = u32(13);
        const cmax = Math.sqrt(ccMax[0]);
        for (let i = 0; i < n; i++) {
          const r = Math.sqrt(xx[i]) + cmax;
          const B = bcoef * r * r;
          if (!(D2[i] - D1[i] > 2 * B)) {
            list[count[0]++] = i;
            continue;
          }
          const cands = [J1[i], J2[i], J3[i]].filter((j) => j !== 0xffffffff).map((j) => [dist(x, i, d, C, j * d), j]);
          cands.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
          J1[i] = cands[0][1]; D1[i] = cands[0][0];
          J2[i] = cands[1]?.[1] ?? 0xffffffff; D2[i] = cands[1]?.[0] ?? Infinity;
        }
        return;
      }
      case 'assign_list': {
        const C = f32(1), n = int(2), d = int(3), m = int(4), x = X(0, n * d);
        const J1 = u32(5), D1 = f32(6), J2 = u32(7), D2 = f32(8), list = u32(9), count = u32(10);
        for (let q = 0; q < count[0]; q++) top2(x, list[q], d, C, m, J1, D1, J2, D2);
        return;
      }
      case 'pass_end': {
        const part = f64(0), blocks = int(1), out = f64(3);
        const fallback = (P[2] as BigUint64Array)[0] === 0n ? undefined : u32(2);
        let e = 0, c = 0;
        for (let b = 0; b < blocks; b++) {
          e += part[2 * b];
          c += part[2 * b + 1];
        }
        out[0] = e;
        out[1] = c;
        out[2] = fallback ? fallback[0] : -1;
        return;
      }
      case 'update_anchors': {
        const C = f32(0), S = i64(1), W = i64(2), m = int(3), d = int(4), step = dbl(5), sScale = dbl(6), wScale = dbl(7);
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

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}
