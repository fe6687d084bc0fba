// The fake driver's emulation of cuda/ec.cu: the same steps as the kernels, lane by lane — per
// block a warp's 32 lanes step through the symbols, a lane that needs a word takes the one after
// those of the lanes before it that also need one (the kernel's ballot and prefix count), escapes
// parsed in lane order; then the rows from anchors and codes in f64 as the kernels round them.

const HEAD = 136, L = 65536, MAX_CODE = 2 ** 24;

/** ec_decode over blocks b0 .. b0 + blocks − 1 (one warp each); sets err[0] to 1 + a damaged block's index. */
export function ecDecode(
  bytes: Uint8Array, blockAt: BigUint64Array, b0: number, blocks: number, blockRows: number, n: number, D: number, scaleBits: number,
  slots: Uint16Array, state: Uint32Array, lo: Int32Array, size: Uint32Array, codes: Int32Array, err: Int32Array,
): void {
  const mask = 2 ** scaleBits - 1;
  for (let w = 0; w < blocks; w++) {
    const b = b0 + w;
    const rows = Math.min(blockRows, n - b * blockRows), count = rows * D;
    const at = Number(blockAt[b]), bytesIn = Number(blockAt[b + 1]) - at;
    const fail = () => {
      if (err[0] === 0) err[0] = b + 1;
    };
    if (bytesIn < HEAD) {
      fail();
      continue;
    }
    const v = new DataView(bytes.buffer, bytes.byteOffset + at, bytesIn);
    const x = Array.from({ length: 32 }, (_, l) => v.getUint32(4 * l, true));
    const W = v.getUint32(128, true), E = v.getUint32(132, true);
    if (((HEAD + 2 * W + E + 3) & ~3) !== bytesIn || x.some((s) => s < L)) {
      fail();
      continue;
    }
    let esc = HEAD + 2 * W;
    const escEnd = esc + E;
    let p = 0, bad = false;
    const q = codes.subarray(w * blockRows * D);
    for (let t0 = 0; t0 < count; t0 += 32) {
      const s = new Array<number>(32).fill(0);
      let reads = 0;
      for (let l = 0; l < 32 && t0 + l < count; l++) {
        const at = ((t0 + l) % D) * (mask + 1) + (x[l] & mask);
        s[l] = slots[at];
        const e = state[at];
        x[l] = ((e & 0xffff) + 1) * Math.floor(x[l] / 2 ** scaleBits) + (e >>> 16);
        if (x[l] < L) {
          const k = p + reads++;
          if (k < W) x[l] = x[l] * 65536 + v.getUint16(HEAD + 2 * k, true);
          else bad = true;
        }
      }
      p += reads;
      for (let l = 0; l < 32 && t0 + l < count; l++) {
        const j = (t0 + l) % D;
        let val = s[l] + lo[j];
        if (s[l] === size[j]) {
          let z = 0, ended = false;
          for (let i = 0; i < 5 && !ended && esc < escEnd; i++) {
            const c = v.getUint8(esc++);
            z += (c & 0x7f) * 2 ** (7 * i);
            ended = c < 0x80;
          }
          const e = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
          if (!ended || (e >= lo[j] && e < lo[j] + size[j]) || Math.abs(e) > MAX_CODE) bad = true;
          else val = e;
        }
        q[t0 + l] = val;
      }
    }
    if (bad || p !== W || x.some((s) => s !== L) || esc !== escEnd) fail();
  }
}

/** step · v ∓ offset toward 0 in f64 (0 for v = 0). */
function value(v: number, step: number, off: number): number {
  return v > 0 ? step * v - off : v < 0 ? step * v + off : 0;
}

/** ec_axis: rows r0 .. r0 + rows − 1 into out, the coded dimensions from codes (rows from c0), the others their anchors. */
export function ecAxis(
  anchors: Float32Array, assign: Uint32Array, codes: Int32Array | undefined, colOf: Int32Array, steps: Float32Array, offsets: Float32Array,
  D: number, c0: number, r0: number, rows: number, d: number, out: Float32Array,
): void {
  for (let i = r0; i < r0 + rows; i++)
    for (let k = 0; k < d; k++) {
      const a = anchors[assign[i] * d + k], c = colOf[k];
      out[(i - r0) * d + k] = c < 0 ? a : a + value(codes![(i - c0) * D + c], steps[c], offsets[c]);
    }
}

/** ec_rotated: the same along the directions P (rows dims[c]), Σ_c in f64 in order. */
export function ecRotated(
  anchors: Float32Array, assign: Uint32Array, codes: Int32Array | undefined, dims: Int32Array, P: Float32Array, steps: Float32Array,
  offsets: Float32Array, D: number, c0: number, r0: number, rows: number, d: number, out: Float32Array,
): void {
  for (let i = r0; i < r0 + rows; i++)
    for (let k = 0; k < d; k++) {
      let acc = 0;
      for (let c = 0; c < D; c++) {
        const v = codes![(i - c0) * D + c];
        if (v !== 0) acc += value(v, steps[c], offsets[c]) * P[dims[c] * d + k];
      }
      out[(i - r0) * d + k] = anchors[assign[i] * d + k] + acc;
    }
}
