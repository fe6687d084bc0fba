// ec: the entropy-coded residual section (src/codecs/ec/, 'RSDE') decoded on the device, bit for
// bit as the host (codecs/ec/blocks.ts decodeBlock, residuals.ts addTo); src/backend/cuda/ec.ts
// launches it; test/cuda-host/ec-simt.test.ts compiles this file with g++ and runs it on the CPU.
// Two steps per span of blocks:
//   ec_decode  one warp per block of rows: the block's 32 rANS lanes are the warp's 32 threads
//              (symbol t of a block belongs to lane t mod 32, as rans.ts lays the stream out), the
//              escapes applied, the integer codes q written (rows × D, int32);
//   ec_axis / ec_rotated  the rows rebuilt from their anchors and codes (one thread per element; a
//              thread block per row along principal directions).
//
// rANS step of lane l at symbol t = t0 + l (model j = t mod D): slot = x mod 2^S, s = slots[j][slot],
// x ← f_s · ⌊x / 2^S⌋ + slot − c_s (f_s and slot − c_s from one table entry per slot); a lane whose
// x fell below 2^16 reads the next word of the one shared stream. The host reads them in lane
// order, so lane l's word is the one after those of the lanes before it that also read: a ballot
// and a prefix count. Escapes (symbol = the model's
// alphabet size) take their values from the escape bytes in symbol order: the warp parses them
// together, lane order, each value going to its lane (rare: a loop over the ballot's bits).
//
// The reader on the host has decoded and checked every block already; the kernel still checks the
// stream (a lane not back at 2^16, words or escape bytes left or missing, an escape inside its
// alphabet or beyond ±2^24) and writes 1 + the block's index to *err when one is damaged, never
// reading outside a block's bytes.
//
// Arithmetic (residuals.ts): on the axes x̂_k = f32(anchor_k + (step_c · q − sgn(q) · off_c)) for
// coded coordinate c of dimension k, in f64 (step · q is exact: |q| ≤ 2^24), the anchor alone where
// k is not coded; note q = 0 still adds +0.0 (which turns an anchor of −0 into +0, as the host's
// `out[k] += 0` does). Along principal directions x̂_j = f32(anchor_j + Σ_c y_c · P[dims[c]][j]),
// the sum in f64 over c in order, y_c as above. __dmul_rn / __dadd_rn keep nvcc from contracting
// into fma, which would round differently from the host's separate operations.
#include "rows.cuh"

#define EC_WARPS 4
#define EC_THREADS 128  // one warp per block of rows
static_assert(EC_THREADS == EC_WARPS * 32, "a warp per block of rows");
#define EC_DEQ_THREADS 256
#define EC_ROT_THREADS 128  // ec_rotated: a row's dimensions over the threads of a block
#ifndef EC_TILE  // (the CPU check of test/cuda-host/ec-simt.test.ts builds it with small tiles)
#define EC_TILE 64  // coordinates staged at a time (EC_ROWS × 512 B of shared memory for their values: the rest of L1 caches P)
#endif
#ifndef EC_ROWS  // (.dev/r11.sh timed other values: bench/results/2026-11-28-h200-r11.json)
#define EC_ROWS 16  // ec_rotated: rows a thread block rebuilds at once (each P value loaded serves them all)
#endif
#define EC_HEAD 136          // 32 lane states, word count, escape bytes (blocks.ts BLOCK_HEAD)
#define EC_L 65536u          // rANS lower bound (rans.ts RANS_L)
#define EC_MAX_CODE 16777216 // |q| ≤ 2^24 (model.ts MAX_CODE)
#define FULL_MASK 0xffffffffu

// Blocks b0 .. b0 + blocks − 1 (blockAt: byte offsets of every block in `bytes`, one more than the
// blocks) of blockRows rows each (the last may be short: n rows in all), D coded coordinates; codes
// of block b0 + w at codes + w · blockRows · D. Models, per coordinate j and slot (index
// j · 2^S + slot): slots[] = its symbol s, state[] = (f_s − 1) | (slot − c_s) << 16 (both < 2^16),
// so the next state is one load away: x ← (f_s − 1 + 1) · ⌊x / 2^S⌋ + (slot − c_s). lo[j] / size[j]
// the coordinate's first code and alphabet size (the escape symbol is size[j]).
extern "C" __global__ void __launch_bounds__(EC_THREADS) ec_decode(const unsigned char *bytes, const unsigned long long *blockAt, int b0,
                                                                   int blocks, int blockRows, int n, int D, int scaleBits,
                                                                   const unsigned short *slots, const unsigned *state, const int *lo,
                                                                   const unsigned *size, int *codes, int *err) {
  const int lane = threadIdx.x & 31;
  const int w = blockIdx.x * EC_WARPS + (threadIdx.x >> 5);
  if (w >= blocks) return;  // the whole warp leaves together
  const int b = b0 + w;
  const long long rowStart = (long long)b * blockRows;
  const long long rows = min((long long)blockRows, (long long)n - rowStart);
  const long long count = rows * D;
  const unsigned long long at = blockAt[b], bytesIn = blockAt[b + 1] - at;
  const unsigned char *blk = bytes + at;
  int *q = codes + (long long)w * blockRows * D;
  bool bad = bytesIn < EC_HEAD;
  unsigned x = EC_L, W = 0;
  const unsigned char *esc = blk, *escEnd = blk;
  if (!bad) {
    x = ((const unsigned *)blk)[lane];
    W = ((const unsigned *)blk)[32];
    const unsigned E = ((const unsigned *)blk)[33];
    bad = ((EC_HEAD + 2ull * W + E + 3ull) & ~3ull) != bytesIn || x < EC_L;
    esc = blk + EC_HEAD + 2ull * W;
    escEnd = esc + E;
  }
  if (__any_sync(FULL_MASK, bad)) {
    if (lane == 0) atomicCAS(err, 0, b + 1);
    return;
  }
  const unsigned short *words = (const unsigned short *)(blk + EC_HEAD);
  const unsigned mask = (1u << scaleBits) - 1u;
  const int stride = 32 % D;
  int j = lane % D;  // the model of this lane's symbol
  unsigned p = 0;    // words read by the warp so far
  for (long long t0 = 0; t0 < count; t0 += 32) {
    const bool active = t0 + lane < count;
    unsigned s = 0;
    if (active) {
      const long long at = (long long)j * (mask + 1u) + (x & mask);
      const unsigned e = state[at];
      s = slots[at];  // not on the states' chain: only the output and the escapes wait for it
      x = ((e & 0xffffu) + 1u) * (x >> scaleBits) + (e >> 16);
    }
    const bool need = active && x < EC_L;
    const unsigned reads = __ballot_sync(FULL_MASK, need);
    if (need) {
      const unsigned k = p + __popc(reads & ((1u << lane) - 1u));
      if (k < W) x = (x << 16) | words[k];
      else bad = true;
    }
    p += __popc(reads);
    // The words are read in order: ask for the line after next into L1 before the lanes need it.
#ifdef __CUDA_ARCH__  // (a host build of this file, for a check on the CPU, has no prefetch)
    if (lane == 0 && p + 128u < W) asm volatile("prefetch.global.L1 [%0];" ::"l"(words + p + 128u));
#endif
    int v = (int)s + (active ? lo[j] : 0);
    const bool escaped = active && s == size[j];
    unsigned pending = __ballot_sync(FULL_MASK, escaped);
    while (pending) {
      // Every lane parses the same zigzag LEB128 number (the same bytes); its lane keeps it.
      const int owner = __ffs(pending) - 1;
      pending &= pending - 1u;
      unsigned long long z = 0;
      bool ended = false;
      for (int i = 0; i < 5 && !ended; i++) {
        if (esc >= escEnd) break;
        const unsigned c = *esc++;
        z |= (unsigned long long)(c & 0x7fu) << (7 * i);
        ended = c < 0x80u;
      }
      const long long val = (z & 1ull) ? -(long long)((z + 1ull) >> 1) : (long long)(z >> 1);
      if (lane == owner) {
        if (!ended || (val >= lo[j] && val < (long long)lo[j] + size[j]) || val > EC_MAX_CODE || val < -EC_MAX_CODE) bad = true;
        else v = (int)val;
      }
    }
    if (active) q[t0 + lane] = v;
    j += stride;
    if (j >= D) j -= D;
  }
  bad = bad || p != W || x != EC_L || esc != escEnd;
  if (__any_sync(FULL_MASK, bad) && lane == 0) atomicCAS(err, 0, b + 1);
}

// The residual's value along coordinate c for code v: step · v ∓ offset toward 0 (0 for v = 0).
__device__ __forceinline__ double ec_value(int v, float step, float off) {
  const double sv = __dmul_rn((double)step, (double)v);
  return v > 0 ? __dsub_rn(sv, (double)off) : v < 0 ? __dadd_rn(sv, (double)off) : 0.0;
}

// Rows r0 .. r0 + rows − 1 to out (rows × d), coded on the axes: colOf[k] = the coordinate of
// dimension k, −1 where it is not coded; codes (D per row) start at row c0.
extern "C" __global__ void __launch_bounds__(EC_DEQ_THREADS) ec_axis(const float *anchors, const unsigned *assign, const int *codes,
                                                                     const int *colOf, const float *steps, const float *offsets, int D,
                                                                     int c0, int r0, int rows, int d, float *out) {
  for_each_row_element(r0, rows, d, [&](long long e, long long i, int k) {
    const float a = anchors[(long long)assign[i] * d + k];
    const int c = colOf[k];
    out[e] = c < 0 ? a : __double2float_rn(__dadd_rn((double)a, ec_value(codes[(i - c0) * D + c], steps[c], offsets[c])));
  });
}

// The same along principal directions: P holds the section's directions (k × d, f32 values of its
// f16), coordinate c along direction dims[c]. A thread block takes EC_ROWS rows at a time: their
// coordinate values y_c (EC_TILE coordinates at a time, in shared memory: each computed once, not
// once per dimension), then each thread sums Σ_c y_c · P[dims[c]][j] for its dimensions j and every
// row of the group, so that each P value it loads serves EC_ROWS rows (one load per row made the
// kernel wait on loads rather than on its f64 arithmetic). Each (row, j) is still one sum over c in
// order, whatever the group: the host's. Codes of 0 are not skipped as the host skips them: their
// y_c · P is ±0, and adding ±0 to a sum that starts at +0 changes no bit, so the sums are the host's.
extern "C" __global__ void __launch_bounds__(EC_ROT_THREADS) ec_rotated(const float *anchors, const unsigned *assign, const int *codes,
                                                                        const int *dims, const float *P, const float *steps,
                                                                        const float *offsets, int D, int c0, int r0, int rows, int d,
                                                                        float *out) {
  __shared__ double y[EC_TILE][EC_ROWS];  // y[c][g]: coordinate c of the group's row g (0 past the last row)
  __shared__ int dimOf[EC_TILE];
  for (int g0 = blockIdx.x * EC_ROWS; g0 < rows; g0 += gridDim.x * EC_ROWS) {
    const int count = min(EC_ROWS, rows - g0);
    for (int j0 = 0; j0 < d; j0 += blockDim.x) {
      const int j = j0 + threadIdx.x;
      double acc[EC_ROWS];
#pragma unroll
      for (int g = 0; g < EC_ROWS; g++) acc[g] = 0.0;
      for (int t0 = 0; t0 < D; t0 += EC_TILE) {
        const int tile = min(EC_TILE, D - t0);
        __syncthreads();  // the last tile's readers are done
        for (int e = threadIdx.x; e < tile * EC_ROWS; e += blockDim.x) {
          const int c = e / EC_ROWS, g = e % EC_ROWS;
          y[c][g] = g < count ? ec_value(codes[((long long)r0 + g0 + g - c0) * D + t0 + c], steps[t0 + c], offsets[t0 + c]) : 0.0;
          if (g == 0) dimOf[c] = dims[t0 + c];
        }
        __syncthreads();
        if (j < d)
          for (int c = 0; c < tile; c++) {
            const double p = (double)P[(long long)dimOf[c] * d + j];
#pragma unroll
            for (int g = 0; g < EC_ROWS; g++) acc[g] = __dadd_rn(acc[g], __dmul_rn(y[c][g], p));
          }
      }
      if (j < d)
        for (int g = 0; g < count; g++) {
          const long long i = (long long)r0 + g0 + g;
          out[(long long)(g0 + g) * d + j] = __double2float_rn(__dadd_rn((double)anchors[(long long)assign[i] * d + j], acc[g]));
        }
    }
  }
}
