// The distance kernel of the CPU backend, in two interchangeable forms:
//  - WasmKernel: build/kernel.wasm (wasm/kernel.c, WebAssembly SIMD, register-blocked) — the default;
//  - JsKernel: the same blocking in plain Float32Array loops — the baseline bench/cpu_speed.mjs
//    compares against, and a fallback should WebAssembly SIMD be missing.
// Both take points and anchors as Float32Arrays and write into caller-provided outputs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export type KernelKind = 'wasm' | 'js';

export interface Kernel {
  /** Nearest (j1, d1) and runner-up (j2, d2; -1/+inf when m = 1) of each of np points. */
  top2(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Top2Out, version?: number): void;
  /**
   * top2 among the anchors j0 .. j1−1 of c only (c holds all m, so a cached copy serves every
   * range); indices are c's. Each distance is the value top2 over all of c would compute.
   */
  top2Range(x: Float32Array, np: number, c: Float32Array, m: number, d: number, j0: number, j1: number, out: Top2Out, version?: number): void;
  /** All np×m distances, row-major. */
  dists(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Float32Array, version?: number): void;
  /** out[p] = dist(x_p, c_idx[p]): the same value top2 would give for that pair. */
  distIdx(x: Float32Array, np: number, c: Float32Array, m: number, d: number, idx: Int32Array, out: Float32Array, version?: number): void;
  // `version`: when given and equal to the previous call's with the same anchors array, the
  // anchors are known unchanged and not copied again (one copy per iteration, not per tile).
}

export interface Top2Out {
  j1: Int32Array;
  d1: Float32Array;
  j2: Int32Array;
  d2: Float32Array;
  /** The third smallest distance (+inf when m < 3): the CPU engine's bounds use it. */
  d3: Float32Array;
}

/** build/kernel.wasm, found relative to the package root (dist/backend/cpu/ -> ../../../build). */
function wasmPath(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, '..', '..', '..', 'build', 'kernel.wasm');
}

let compiled: WebAssembly.Module | undefined;
/** The compiled module, once per thread (compiling takes a few ms); src/search/pq-tables.ts instantiates it too. */
export function wasmModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(wasmPath()));
  return compiled;
}

interface WasmExports {
  memory: WebAssembly.Memory;
  __heap_base: WebAssembly.Global;
  top2(x: number, np: number, c: number, m: number, d: number, j1: number, d1: number, j2: number, d2: number, d3: number): void;
  dists(x: number, np: number, c: number, m: number, d: number, out: number): void;
  dist_idx(x: number, np: number, c: number, d: number, idx: number, out: number): void;
}

/**
 * One instance with its own linear memory, laid out for at most `maxPoints` points and `maxAnchors`
 * anchors per call. Inputs are copied in (a memcpy; the distance work is ~m times larger).
 */
export class WasmKernel implements Kernel {
  private ex: WasmExports;
  private cOff = 0;
  private xOff = 0;
  private oOff = 0; // top2 outputs, or the dists matrix
  private cap = { points: 0, anchors: 0, d: 0, out: 0 };
  private loadedAnchors: Float32Array | undefined;
  private loadedVersion = -1;

  constructor(mod: WebAssembly.Module = wasmModule()) {
    this.ex = new WebAssembly.Instance(mod, {}).exports as unknown as WasmExports;
  }

  /** Room for `points` rows, `anchors` anchors and `outFloats` output values per point. */
  private reserve(points: number, anchors: number, d: number, outFloats: number): void {
    const c = this.cap;
    if (points <= c.points && anchors <= c.anchors && outFloats <= c.out && d === c.d) return;
    const same = c.d === d;
    points = Math.max(points, same ? c.points : 0);
    anchors = Math.max(anchors, same ? c.anchors : 0);
    outFloats = Math.max(outFloats, same ? c.out : 0);
    const align = (v: number) => (v + 15) & ~15;
    let off = align(this.ex.__heap_base.value as number);
    // Regions are skewed by a few cache lines so that their starts are not 4 KiB apart: stores
    // to the outputs 4K-aliasing loads of the anchors cost up to 3× (seen with m = 8).
    this.cOff = off;
    off = align(off + anchors * d * 4) + 320;
    this.xOff = off;
    off = align(off + points * d * 4) + 704;
    this.oOff = off;
    off += points * outFloats * 4;
    const mem = this.ex.memory;
    if (off > mem.buffer.byteLength) mem.grow(Math.ceil((off - mem.buffer.byteLength) / 65536));
    this.cap = { points, anchors, d, out: outFloats };
    this.loadedAnchors = undefined;
  }

  private f32(): Float32Array {
    return new Float32Array(this.ex.memory.buffer);
  }

  /** Copy anchors in; skipped when the same array at the same version is already loaded. */
  private loadAnchors(c: Float32Array, m: number, d: number, version?: number): void {
    if (version !== undefined && this.loadedAnchors === c && this.loadedVersion === version) return;
    this.f32().set(c.subarray(0, m * d), this.cOff >> 2);
    this.loadedAnchors = c;
    this.loadedVersion = version ?? -1;
  }

  top2(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Top2Out, version?: number): void {
    this.reserve(np, m, d, 5);
    this.loadAnchors(c, m, d, version);
    const mem = this.f32();
    mem.set(x.subarray(0, np * d), this.xOff >> 2);
    const o = this.oOff;
    this.ex.top2(this.xOff, np, this.cOff, m, d, o, o + np * 4, o + np * 8, o + np * 12, o + np * 16);
    const buf = this.ex.memory.buffer;
    out.j1.set(new Int32Array(buf, o, np));
    out.d1.set(new Float32Array(buf, o + np * 4, np));
    out.j2.set(new Int32Array(buf, o + np * 8, np));
    out.d2.set(new Float32Array(buf, o + np * 12, np));
    out.d3.set(new Float32Array(buf, o + np * 16, np));
  }

  top2Range(x: Float32Array, np: number, c: Float32Array, m: number, d: number, j0: number, j1: number, out: Top2Out, version?: number): void {
    this.reserve(np, m, d, 5);
    this.loadAnchors(c, m, d, version);
    this.f32().set(x.subarray(0, np * d), this.xOff >> 2);
    const o = this.oOff;
    this.ex.top2(this.xOff, np, this.cOff + j0 * d * 4, j1 - j0, d, o, o + np * 4, o + np * 8, o + np * 12, o + np * 16);
    const buf = this.ex.memory.buffer;
    const J1 = new Int32Array(buf, o, np), J2 = new Int32Array(buf, o + np * 8, np);
    for (let p = 0; p < np; p++) {
      out.j1[p] = J1[p] + j0;
      out.j2[p] = J2[p] < 0 ? -1 : J2[p] + j0;
    }
    out.d1.set(new Float32Array(buf, o + np * 4, np));
    out.d2.set(new Float32Array(buf, o + np * 12, np));
    out.d3.set(new Float32Array(buf, o + np * 16, np));
  }

  dists(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Float32Array, version?: number): void {
    this.reserve(np, m, d, m);
    this.loadAnchors(c, m, d, version);
    this.f32().set(x.subarray(0, np * d), this.xOff >> 2);
    this.ex.dists(this.xOff, np, this.cOff, m, d, this.oOff);
    out.set(new Float32Array(this.ex.memory.buffer, this.oOff, np * m));
  }

  distIdx(x: Float32Array, np: number, c: Float32Array, m: number, d: number, idx: Int32Array, out: Float32Array, version?: number): void {
    this.reserve(np, m, d, 2);
    this.loadAnchors(c, m, d, version);
    this.f32().set(x.subarray(0, np * d), this.xOff >> 2);
    const o = this.oOff;
    new Int32Array(this.ex.memory.buffer, o, np).set(idx.subarray(0, np));
    this.ex.dist_idx(this.xOff, np, this.cOff, d, o, o + np * 4);
    out.set(new Float32Array(this.ex.memory.buffer, o + np * 4, np));
  }
}

/**
 * The same computation in plain JS, 4 points × 2 anchors per inner loop. Distances are summed in
 * f32 (Math.fround) in the kernel's lane order, so both kernels give identical results.
 */
class JsKernel implements Kernel {
  private o = new Float32Array(8);

  private pair(x: Float32Array, xo: number, c: Float32Array, co: number, d: number): number {
    const f = Math.fround;
    const d4 = d & ~3;
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let k = 0; k < d4; k += 4) {
      const e0 = f(x[xo + k] - c[co + k]);
      const e1 = f(x[xo + k + 1] - c[co + k + 1]);
      const e2 = f(x[xo + k + 2] - c[co + k + 2]);
      const e3 = f(x[xo + k + 3] - c[co + k + 3]);
      a0 = f(a0 + f(e0 * e0));
      a1 = f(a1 + f(e1 * e1));
      a2 = f(a2 + f(e2 * e2));
      a3 = f(a3 + f(e3 * e3));
    }
    let t = 0;
    for (let k = d4; k < d; k++) {
      const e = f(x[xo + k] - c[co + k]);
      t = f(t + f(e * e));
    }
    return f(f(f(a0 + a1) + f(a2 + a3)) + t);
  }

  /** 4 points × 2 anchors, sharing each loaded value across the block (the register blocking). */
  private block4x2(x: Float32Array, xo: number, c: Float32Array, c0: number, d: number): void {
    const f = Math.fround;
    const d4 = d & ~3;
    const c1 = c0 + d;
    const o = this.o;
    for (let q = 0; q < 4; q++) {
      const xq = xo + q * d;
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
      for (let k = 0; k < d4; k += 4) {
        const x0 = x[xq + k], x1 = x[xq + k + 1], x2 = x[xq + k + 2], x3 = x[xq + k + 3];
        let e = f(x0 - c[c0 + k]); a0 = f(a0 + f(e * e));
        e = f(x1 - c[c0 + k + 1]); a1 = f(a1 + f(e * e));
        e = f(x2 - c[c0 + k + 2]); a2 = f(a2 + f(e * e));
        e = f(x3 - c[c0 + k + 3]); a3 = f(a3 + f(e * e));
        e = f(x0 - c[c1 + k]); b0 = f(b0 + f(e * e));
        e = f(x1 - c[c1 + k + 1]); b1 = f(b1 + f(e * e));
        e = f(x2 - c[c1 + k + 2]); b2 = f(b2 + f(e * e));
        e = f(x3 - c[c1 + k + 3]); b3 = f(b3 + f(e * e));
      }
      let ta = 0, tb = 0;
      for (let k = d4; k < d; k++) {
        let e = f(x[xq + k] - c[c0 + k]); ta = f(ta + f(e * e));
        e = f(x[xq + k] - c[c1 + k]); tb = f(tb + f(e * e));
      }
      o[2 * q] = f(f(f(a0 + a1) + f(a2 + a3)) + ta);
      o[2 * q + 1] = f(f(f(b0 + b1) + f(b2 + b3)) + tb);
    }
  }

  top2(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Top2Out): void {
    const { j1, d1, j2, d2, d3 } = out;
    j1.fill(-1, 0, np); j2.fill(-1, 0, np);
    d1.fill(Infinity, 0, np); d2.fill(Infinity, 0, np); d3.fill(Infinity, 0, np);
    const push = (p: number, j: number, v: number) => {
      if (v < d1[p]) { d3[p] = d2[p]; j2[p] = j1[p]; d2[p] = d1[p]; j1[p] = j; d1[p] = v; }
      else if (v < d2[p]) { d3[p] = d2[p]; j2[p] = j; d2[p] = v; }
      else if (v < d3[p]) d3[p] = v;
    };
    const o = this.o;
    let p = 0;
    for (; p + 4 <= np; p += 4) {
      let j = 0;
      for (; j + 2 <= m; j += 2) {
        this.block4x2(x, p * d, c, j * d, d);
        for (let q = 0; q < 4; q++) { push(p + q, j, o[2 * q]); push(p + q, j + 1, o[2 * q + 1]); }
      }
      if (j < m) for (let q = 0; q < 4; q++) push(p + q, j, this.pair(x, (p + q) * d, c, j * d, d));
    }
    for (; p < np; p++) for (let j = 0; j < m; j++) push(p, j, this.pair(x, p * d, c, j * d, d));
  }

  top2Range(x: Float32Array, np: number, c: Float32Array, _m: number, d: number, j0: number, j1: number, out: Top2Out): void {
    this.top2(x, np, c.subarray(j0 * d, j1 * d), j1 - j0, d, out);
    for (let p = 0; p < np; p++) {
      out.j1[p] += j0;
      if (out.j2[p] >= 0) out.j2[p] += j0;
    }
  }

  dists(x: Float32Array, np: number, c: Float32Array, m: number, d: number, out: Float32Array): void {
    for (let p = 0; p < np; p++) for (let j = 0; j < m; j++) out[p * m + j] = this.pair(x, p * d, c, j * d, d);
  }

  distIdx(x: Float32Array, np: number, c: Float32Array, _m: number, d: number, idx: Int32Array, out: Float32Array): void {
    for (let p = 0; p < np; p++) out[p] = this.pair(x, p * d, c, idx[p] * d, d);
  }
}

export function makeKernel(kind: KernelKind): Kernel {
  return kind === 'wasm' ? new WasmKernel() : new JsKernel();
}
