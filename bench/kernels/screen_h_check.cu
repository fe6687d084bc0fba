// Validate, then time, the fp16 tensor-core screen (cuda/screen_h.cu) against the direct assign
// (cuda/assign.cu), llm.c style: every case checks that the screened path gives the direct pass's
// J1, D1, J2, D2 bit for bit (outputs poisoned before each run), on random inputs of odd sizes,
// f32 and f16, near and far from the origin, with duplicate anchors (ties). Then the workloads of
// issue 17 are timed with CUDA events (median of repeats).
//
// On the GPU machine:  nvcc -O3 -arch=sm_90 -I cuda bench/kernels/screen_h_check.cu -o /tmp/shc
//                      /tmp/shc check && /tmp/shc bench
// (sm_90a: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -I cuda ..., for screen_h90.cu)
// The bound coefficients are computed here exactly as src/backend/cuda/numerics.ts does
// (screenHalfBound); keep the two in step.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>
#include "assign.cu"
#include "screen_h.cu"
#include "screen_h90.cu"

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));           \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define LAUNCHED() CK(cudaGetLastError())

static int up(int v, int a) { return (v + a - 1) / a * a; }

struct Bound { float c1, c2, c3, c4; };
// See numerics.ts screenHalfBound for the derivation (scaled units, u = 2^-24, uh = 2^-11).
static Bound screen_half_bound(int d, int dp) {
  const double u = std::ldexp(1.0, -24), uh = std::ldexp(1.0, -11);
  const double gd = d * u / (1 - d * u);
  const double gtc = std::ceil(dp / 16.0) * 18 * u;
  const double safety = 1 + std::ldexp(1.0, -8) + 4 * gd;
  const double c1 = 2 * (2 * uh + uh * uh + gtc * (1 + uh) * (1 + uh)) * safety;
  const double c2 = (2 * gd + 8 * u) * safety;
  const double eta = std::ldexp(1.0, -25);
  const double c3 = 2 * eta * std::sqrt((double)dp) * safety;
  const double c4 = 2 * dp * eta * eta * safety + 1e-30;
  auto upf = [](double v) { float f = (float)v; return (double)f >= v ? f : std::nextafter(f, INFINITY); };
  return {upf(c1), upf(c2), upf(c3), upf(c4)};
}

// Everything one problem needs on the device.
struct Problem {
  int n, d, m, dp, npad, mpad;
  bool f16;
  void *X = nullptr;  // n×d f32 or f16
  float *C = nullptr, *mu = nullptr;
  __half *Xh = nullptr, *Ch = nullptr, *Ct = nullptr;
  float *xn = nullptr, *cn = nullptr;
  unsigned *J1, *J2, *list, *list2, *scalars, *keys, *ccount, *cand;
  float *thr;
  int ccap, ncand;
  unsigned long long *part;
  int slices, slice, cap;
  float *D1, *D2;
  unsigned *rJ1, *rJ2;
  float *rD1, *rD2;
  float s = 1;
  Bound b;
  unsigned imask, hmask;
};

static void alloc(Problem &p) {
  p.dp = up(p.d, 64);
  p.npad = up(p.n, SH_P);
  p.mpad = up(p.m, SH_A);
  size_t es = p.f16 ? 2 : 4;
  CK(cudaMalloc(&p.X, (size_t)p.n * p.d * es));
  CK(cudaMalloc(&p.C, (size_t)p.m * p.d * 4));
  CK(cudaMalloc(&p.mu, (size_t)p.d * 4));
  CK(cudaMalloc(&p.Xh, (size_t)p.npad * p.dp * 2));
  CK(cudaMalloc(&p.Ch, (size_t)p.mpad * p.dp * 2));
  CK(cudaMalloc(&p.Ct, (size_t)p.mpad * p.dp * 2));
  CK(cudaMalloc(&p.xn, (size_t)p.npad * 4));
  CK(cudaMalloc(&p.cn, (size_t)p.mpad * 4));
  for (unsigned **q : {&p.J1, &p.J2, &p.list, &p.list2, &p.rJ1, &p.rJ2}) CK(cudaMalloc(q, (size_t)p.n * 4));
  // As screen.ts collectFor: rows ≥ 256 keep half the rows' lists of 256 candidates, short rows a quarter's of 64.
  p.ncand = p.d >= 256 ? 256 : 64;
  p.ccap = std::min(p.n, std::max(65536, p.n / (p.d >= 256 ? 2 : 4)));
  CK(cudaMalloc(&p.thr, (size_t)p.ccap * 4));
  CK(cudaMalloc(&p.ccount, (size_t)p.ccap * 4));
  CK(cudaMalloc(&p.cand, (size_t)(size_t)p.ccap * p.ncand * 4));
  CK(cudaMalloc(&p.keys, (size_t)p.n * 4 * (SH_ROW_WIDE + 1)));
  p.slices = std::max(1, std::min(16, p.m / 256));
  p.slice = up((p.m + p.slices - 1) / p.slices, 128);
  p.slices = (p.m + p.slice - 1) / p.slice;  // no empty slice (fallback_merge reads every one)
  p.cap = std::min(p.n, std::max(65536, p.n / 16));
  CK(cudaMalloc(&p.part, (size_t)p.slices * p.cap * 16));
  for (float **q : {&p.D1, &p.D2, &p.rD1, &p.rD2}) CK(cudaMalloc(q, (size_t)p.n * 4));
  CK(cudaMalloc(&p.scalars, SH_SCALARS * 4));
  int ib = 1;
  while ((1u << ib) < (unsigned)p.mpad) ib++;
  p.imask = (1u << ib) - 1;
  p.hmask = ~p.imask;
  p.b = screen_half_bound(p.d, p.dp);
}

static void release(Problem &p) {
  for (void *q : {(void *)p.X, (void *)p.C, (void *)p.mu, (void *)p.Xh, (void *)p.Ch, (void *)p.Ct, (void *)p.xn, (void *)p.cn,
                  (void *)p.J1, (void *)p.J2, (void *)p.keys, (void *)p.part, (void *)p.list, (void *)p.list2, (void *)p.thr,
                  (void *)p.ccount, (void *)p.cand, (void *)p.rJ1, (void *)p.rJ2,
                  (void *)p.D1, (void *)p.D2, (void *)p.rD1, (void *)p.rD2, (void *)p.scalars})
    CK(cudaFree(q));
}

// s: the power of two that maps max|x| to 2^13 (|x − μ| <= 2·max|x| then fits 2^14).
static float scale_for(float maxAbs) {
  int e = maxAbs > 0 ? (int)std::ceil(std::log2((double)maxAbs)) : 0;
  e = std::max(-40, std::min(40, e));
  return (float)std::ldexp(1.0, 13 - e);
}

static void prep_points_run(Problem &p) {
  int blocks = std::min(up(p.npad, 8) / 8, 132 * 16);
  if (p.f16) prep_points_f16<<<blocks, 256>>>((const __half *)p.X, p.mu, p.s, p.n, p.d, p.dp, p.npad, p.Xh, p.xn);
  else prep_points_f32<<<blocks, 256>>>((const float *)p.X, p.mu, p.s, p.n, p.d, p.dp, p.npad, p.Xh, p.xn);
  LAUNCHED();
}

// The screened pass: prep_anchors, the screen, exact_h, collect_h, the split fallback (+ assign_list past cap).
// variant: 4 = screen_h (mma.sync, 4 keys per thread), 90 = screen_h90 (wgmma, streamed points, 8 keys per lane),
// 60 = screen_h90m (points resident, anchors by bulk copy, no block barrier; 8 keys per lane), 65 / 66 /
// 67 = screen_h90mo / _k3 / _k2 (the same with the two halves of a tile overlapped, dp <= 192; 8 keys per
// lane with a branch per key, 3 or 2 without).
static int variant = 4;
static unsigned uncertain = 0;
static void screened(Problem &p, cudaEvent_t *ev = nullptr) {
  CK(cudaMemsetAsync(p.scalars, 0, SH_SCALARS * 4));
  if (ev) CK(cudaEventRecord(ev[0]));
  int ab = std::min(up(p.mpad, 8) / 8, 132 * 16);
  prep_anchors<<<ab, 256>>>(p.C, p.mu, p.s, p.m, p.d, p.dp, p.mpad, p.Ch, p.cn, p.scalars);
  LAUNCHED();
  if (ev) CK(cudaEventRecord(ev[1]));
  if (variant >= 65 && variant <= 67) {  // screen_h90mo / _k3 / _k2: screen_h90m with the halves' epilogue overlapped
    if (p.dp > WMO_MAX_DP) { fprintf(stderr, "variant %d needs dp <= %d\n", variant, WMO_MAX_DP); exit(2); }
    tile_anchors<<<std::min(p.mpad * p.dp / 8 / 256 + 1, 132 * 8), 256>>>(p.Ch, p.dp, p.mpad, p.Ct);
    LAUNCHED();
    auto k = variant == 65 ? screen_h90mo : variant == 66 ? screen_h90mo_k3 : screen_h90mo_k2;
    k<<<p.npad / W9_P, W9_THREADS, WM_SMEM(p.dp)>>>(p.Xh, p.Ct, p.xn, p.cn, p.scalars, p.n, p.dp, p.mpad, p.hmask, p.keys);
  } else if (variant == 60) {
    if (p.dp > WM_MAX_DP) { fprintf(stderr, "variant %d needs dp <= %d\n", variant, WM_MAX_DP); exit(2); }
    tile_anchors<<<std::min(p.mpad * p.dp / 8 / 256 + 1, 132 * 8), 256>>>(p.Ch, p.dp, p.mpad, p.Ct);
    LAUNCHED();
    screen_h90m<<<p.npad / W9_P, W9_THREADS, WM_SMEM(p.dp)>>>(p.Xh, p.Ct, p.xn, p.cn, p.scalars, p.n, p.dp, p.mpad, p.hmask, p.keys);
  } else if (variant == 90)
    screen_h90<<<p.npad / W9_P, W9_THREADS, W9_SMEM>>>(p.Xh, p.Ch, p.xn, p.cn, p.scalars, p.n, p.dp, p.mpad, p.hmask, p.keys);
  else
    screen_h<<<p.npad / SH_P, SH_THREADS>>>(p.Xh, p.Ch, p.xn, p.cn, p.scalars, p.n, p.dp, p.mpad, p.hmask, p.keys);
  LAUNCHED();
  if (ev) CK(cudaEventRecord(ev[2]));
  int eb = (p.n + EX_P - 1) / EX_P;
  float s2 = p.s * p.s;
  const bool wide = variant == 90 || variant == 60;  // screen_h90 and screen_h90m write 16 keys a row
  if (p.f16)
    (wide ? exact_h16_f16 : exact_h_f16)<<<eb, 256>>>((const __half *)p.X, p.C, p.xn, p.keys, p.scalars, p.b.c1, p.b.c2, p.b.c3, p.b.c4, s2, p.imask,
                             p.n, p.d, p.m, p.J1, p.D1, p.J2, p.D2, p.list, p.thr, p.ccount, p.ccap);
  else
    (wide ? exact_h16_f32 : exact_h_f32)<<<eb, 256>>>((const float *)p.X, p.C, p.xn, p.keys, p.scalars, p.b.c1, p.b.c2, p.b.c3, p.b.c4, s2, p.imask,
                             p.n, p.d, p.m, p.J1, p.D1, p.J2, p.D2, p.list, p.thr, p.ccount, p.ccap);
  LAUNCHED();
  if (ev) CK(cudaEventRecord(ev[3]));
  if (variant != 4 && !getenv("SHC_PORTABLE_COLLECT"))  // the Hopper variants collect on wgmma too
    collect_h90<<<(p.ccap + W9_P - 1) / W9_P, W9_THREADS, W9_SMEM>>>(p.Xh, p.Ch, p.xn, p.cn, p.list, p.scalars, p.thr, p.ccap, p.dp, p.mpad, p.cand, p.ccount, p.ncand);
  else
  collect_h<<<(p.ccap + SH_P - 1) / SH_P, SH_THREADS>>>(p.Xh, p.Ch, p.xn, p.cn, p.list, p.scalars, p.thr, p.ccap, p.dp, p.mpad, p.cand, p.ccount, p.ncand);
  LAUNCHED();
  if (p.f16)
    exact_collect_f16<<<eb, 256>>>((const __half *)p.X, p.C, p.list, p.scalars, p.thr, p.ccap, p.cand, p.ccount, p.ncand, p.d, p.J1, p.D1, p.J2, p.D2, p.list2);
  else
    exact_collect_f32<<<eb, 256>>>((const float *)p.X, p.C, p.list, p.scalars, p.thr, p.ccap, p.cand, p.ccount, p.ncand, p.d, p.J1, p.D1, p.J2, p.D2, p.list2);
  LAUNCHED();
  dim3 grid(std::min((p.cap + 63) / 64, 256), p.slices);
  if (p.f16)
    fallback_split_f16<<<grid, 256>>>((const __half *)p.X, p.C, p.d, p.m, p.slice, p.list2, p.scalars + 4, p.cap, p.part);
  else
    fallback_split_f32<<<grid, 256>>>((const float *)p.X, p.C, p.d, p.m, p.slice, p.list2, p.scalars + 4, p.cap, p.part);
  LAUNCHED();
  fallback_merge<<<64, 256>>>(p.part, p.slices, p.cap, p.list2, p.scalars + 4, p.scalars + 5, p.J1, p.D1, p.J2, p.D2);
  LAUNCHED();
  // Points of list2 past cap (rare): the whole direct pass over them.
  int lb = std::max(1, (p.n - p.cap + 63) / 64);
  if (p.f16)
    assign_list_f16<<<lb, 256>>>((const __half *)p.X, p.C, p.n, p.d, p.m, p.J1, p.D1, p.J2, p.D2, p.list2 + p.cap, p.scalars + 5);
  else
    assign_list_f32<<<lb, 256>>>((const float *)p.X, p.C, p.n, p.d, p.m, p.J1, p.D1, p.J2, p.D2, p.list2 + p.cap, p.scalars + 5);
  LAUNCHED();
  if (ev) CK(cudaEventRecord(ev[4]));
}

static void direct(Problem &p) {
  int blocks = (p.n + 63) / 64;
  if (p.f16) assign_top2_f16<<<blocks, 256>>>((const __half *)p.X, p.C, p.n, p.d, p.m, p.rJ1, p.rD1, p.rJ2, p.rD2);
  else assign_top2_f32<<<blocks, 256>>>((const float *)p.X, p.C, p.n, p.d, p.m, p.rJ1, p.rD1, p.rJ2, p.rD2);
  LAUNCHED();
}

// Points the direct pass decided (list2), and those exact_h could not certify (list).
static unsigned fallbacks(Problem &p) {
  unsigned c[SH_SCALARS];
  CK(cudaMemcpy(c, p.scalars, sizeof c, cudaMemcpyDeviceToHost));
  uncertain = c[2];
  return c[4];
}

// ---------------------------------------------------------------------------------------------
// check

static uint16_t to_half_bits(float v) {
  __half h = __float2half_rn(v);
  uint16_t b;
  memcpy(&b, &h, 2);
  return b;
}
static float from_half_bits(uint16_t b) {
  __half h;
  memcpy(&h, &b, 2);
  return __half2float(h);
}

enum Kind { CLUSTERS, FAR, SPHERE, GRID };

static int check_case(int n, int d, int m, bool f16, Kind kind, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> N(0.f, 1.f);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::vector<float> x((size_t)n * d);
  int clusters = std::max(1, m / 4 + 1);
  std::vector<float> cent((size_t)clusters * d);
  for (auto &v : cent) v = N(rng);
  for (int i = 0; i < n; i++) {
    int c = (int)(rng() % clusters);
    float norm = 0;
    for (int k = 0; k < d; k++) {
      float v = kind == GRID ? (float)(int)(rng() % 3) : cent[(size_t)c * d + k] + 0.35f * N(rng);
      if (kind == FAR) v += 50.f;
      x[(size_t)i * d + k] = v;
      norm += v * v;
    }
    if (kind == SPHERE)
      for (int k = 0; k < d; k++) x[(size_t)i * d + k] /= std::sqrt(norm);
  }
  if (f16)
    for (auto &v : x) v = from_half_bits(to_half_bits(v));
  // Anchors: data rows plus noise, a few exact copies of rows and of each other (ties).
  std::vector<float> c((size_t)m * d);
  for (int j = 0; j < m; j++) {
    int i = pick(rng);
    bool exact = j % 7 == 3;
    for (int k = 0; k < d; k++) c[(size_t)j * d + k] = x[(size_t)i * d + k] + (exact ? 0.f : 0.05f * N(rng));
    if (j % 11 == 5 && j > 0)
      for (int k = 0; k < d; k++) c[(size_t)j * d + k] = c[(size_t)(j - 1) * d + k];
  }
  Problem p{n, d, m, 0, 0, 0, f16};
  alloc(p);
  if (f16) {
    std::vector<uint16_t> h(x.size());
    for (size_t e = 0; e < x.size(); e++) h[e] = to_half_bits(x[e]);
    CK(cudaMemcpy(p.X, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  } else {
    CK(cudaMemcpy(p.X, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  }
  CK(cudaMemcpy(p.C, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  std::vector<double> mu(d, 0.0);
  float maxAbs = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < d; k++) {
      mu[k] += x[(size_t)i * d + k];
      maxAbs = std::max(maxAbs, std::fabs(x[(size_t)i * d + k]));
    }
  std::vector<float> muf(d);
  for (int k = 0; k < d; k++) muf[k] = (float)(mu[k] / n);
  CK(cudaMemcpy(p.mu, muf.data(), d * 4, cudaMemcpyHostToDevice));
  p.s = scale_for(maxAbs);
  // Poison every output.
  for (void *q : {(void *)p.J1, (void *)p.J2, (void *)p.D1, (void *)p.D2, (void *)p.rJ1, (void *)p.rJ2,
                  (void *)p.rD1, (void *)p.rD2, (void *)p.list})
    CK(cudaMemset(q, 0xff, (size_t)n * 4));
  CK(cudaMemset(p.keys, 0xff, (size_t)n * 4 * (SH_ROW_WIDE + 1)));
  CK(cudaMemset(p.part, 0xff, (size_t)p.slices * p.cap * 16));
  CK(cudaMemset(p.Xh, 0xff, (size_t)p.npad * p.dp * 2));
  CK(cudaMemset(p.Ch, 0xff, (size_t)p.mpad * p.dp * 2));
  direct(p);
  prep_points_run(p);
  screened(p);
  CK(cudaDeviceSynchronize());
  unsigned fb = fallbacks(p);
  std::vector<unsigned> a(n), b(n);
  int bad = 0;
  const char *names[4] = {"J1", "D1", "J2", "D2"};
  void *got[4] = {p.J1, p.D1, p.J2, p.D2}, *want[4] = {p.rJ1, p.rD1, p.rJ2, p.rD2};
  for (int q = 0; q < 4; q++) {
    CK(cudaMemcpy(a.data(), got[q], (size_t)n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), want[q], (size_t)n * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      if (a[i] != b[i]) {
        if (bad < 5) fprintf(stderr, "  %s[%d]: got %08x want %08x\n", names[q], i, a[i], b[i]);
        bad++;
      }
  }
  const char *kn[] = {"clusters", "far", "sphere", "grid"};
  if (bad) printf("%s n=%-6d d=%-5d m=%-5d %s %-8s fallback %6u (%5.2f%%)  %s\n", bad ? "FAIL" : "ok  ", n, d, m,
         f16 ? "f16" : "f32", kn[kind], fb, 100.0 * fb / n, bad ? "MISMATCH" : "");
  release(p);
  return bad ? 1 : 0;
}

static int check() {
  struct C { int n, d, m; } cases[] = {{1, 1, 1},     {5, 3, 2},        {7, 5, 4},       {9, 2, 5},
                                       {130, 17, 6},  {1000, 33, 31},   {777, 64, 129},  {4099, 128, 257},
                                       {2500, 100, 1000}, {3001, 384, 300}, {1500, 1536, 130}, {8191, 768, 1025},
                                       {20000, 128, 2048}, {513, 9, 513}};
  int fails = 0;
  unsigned seed = 1;
  std::vector<int> vs = {67, 66, 65, 60, 90, 4};
  if (getenv("SHC_VARIANTS")) {  // e.g. SHC_VARIANTS=97,98,99
    vs.clear();
    for (const char *c = getenv("SHC_VARIANTS"); *c;) { vs.push_back(atoi(c)); while (*c && *c != ',') c++; if (*c) c++; }
  }
  for (int v : vs) {
    variant = v;
    printf("variant %d\n", v);
    seed = 1;
    for (auto &c : cases)
      if (v == 4 || v == 90 || up(c.d, 64) <= (v >= 65 ? WMO_MAX_DP : WM_MAX_DP))  // the others hold the points resident
      for (int f16 = 0; f16 < 2; f16++)
        for (Kind k : {CLUSTERS, FAR, SPHERE, GRID}) fails += check_case(c.n, c.d, c.m, f16, k, seed++);
  }
  printf("check: %d failing cases\n", fails);
  return fails ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// bench: large data generated on the device (clustered, like src/bench/data.ts)

__device__ unsigned hash32(unsigned long long v) {
  v ^= v >> 33; v *= 0xff51afd7ed558ccdULL; v ^= v >> 33; v *= 0xc4ceb9fe1a85ec53ULL; v ^= v >> 33;
  return (unsigned)v;
}
__device__ float gauss(unsigned long long k) {
  float u = (hash32(2 * k) + 1.f) / 4294967297.f, v = hash32(2 * k + 1) / 4294967296.f;
  return sqrtf(-2.f * logf(u)) * cosf(6.2831853f * v);
}
__global__ void gen_data(float *X, long long n, int d, int clusters, float spread, unsigned seed) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n * d; e += (long long)gridDim.x * blockDim.x) {
    long long i = e / d;
    int k = (int)(e % d);
    unsigned c = hash32(i * 7919ULL + seed) % clusters;
    X[e] = gauss(((unsigned long long)seed << 40) ^ (c * 100003ULL + k)) + spread * gauss(((unsigned long long)(seed + 1) << 40) + e);
  }
}
__global__ void gen_anchors(const float *X, long long n, int d, float *C, int m, unsigned seed) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < (long long)m * d; e += (long long)gridDim.x * blockDim.x) {
    long long j = e / d;
    int k = (int)(e % d);
    long long i = hash32(j * 104729ULL + seed) % n;
    C[e] = X[i * d + k];
  }
}
__global__ void to_half(const float *X, __half *H, long long count) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count; e += (long long)gridDim.x * blockDim.x)
    H[e] = __float2half_rn(X[e]);
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void bench_one(const char *name, int n, int d, int m, bool f16, bool withDirect, int reps) {
  Problem p{n, d, m, 0, 0, 0, f16};
  alloc(p);
  float *Xf;
  CK(cudaMalloc(&Xf, (size_t)n * d * 4));
  gen_data<<<132 * 32, 256>>>(Xf, n, d, 512, 0.35f, 12345);
  LAUNCHED();
  gen_anchors<<<132 * 8, 256>>>(Xf, n, d, p.C, m, 777);
  LAUNCHED();
  if (f16) {
    to_half<<<132 * 32, 256>>>(Xf, (__half *)p.X, (long long)n * d);
    LAUNCHED();
  } else {
    CK(cudaMemcpy(p.X, Xf, (size_t)n * d * 4, cudaMemcpyDeviceToDevice));
  }
  CK(cudaFree(Xf));
  // μ = 0 here (the data are centred around 0 by construction); the scale from a bound of 8.
  CK(cudaMemset(p.mu, 0, d * 4));
  p.s = scale_for(8.f);
  prep_points_run(p);
  cudaEvent_t ev[5];
  for (auto &e : ev) CK(cudaEventCreate(&e));
  std::vector<float> tot, tPrep, tScreen, tExact, tList;
  screened(p);  // warm-up
  for (int r = 0; r < reps; r++) {
    screened(p, ev);
    CK(cudaEventSynchronize(ev[4]));
    float a, b, c, e, f;
    CK(cudaEventElapsedTime(&a, ev[0], ev[4]));
    CK(cudaEventElapsedTime(&b, ev[0], ev[1]));
    CK(cudaEventElapsedTime(&c, ev[1], ev[2]));
    CK(cudaEventElapsedTime(&e, ev[2], ev[3]));
    CK(cudaEventElapsedTime(&f, ev[3], ev[4]));
    tot.push_back(a); tPrep.push_back(b); tScreen.push_back(c); tExact.push_back(e); tList.push_back(f);
  }
  unsigned fb = fallbacks(p);
  double flop = 2.0 * n * (double)m * d;
  float ms = median(tot), msScreen = median(tScreen);
  float msDirect = -1;
  int bad = 0;
  if (withDirect) {
    std::vector<float> td;
    for (int r = 0; r < 3; r++) {
      CK(cudaEventRecord(ev[0]));
      direct(p);
      CK(cudaEventRecord(ev[1]));
      CK(cudaEventSynchronize(ev[1]));
      float a;
      CK(cudaEventElapsedTime(&a, ev[0], ev[1]));
      td.push_back(a);
    }
    msDirect = median(td);
    std::vector<unsigned> a(n), b(n);
    void *got[4] = {p.J1, p.D1, p.J2, p.D2}, *want[4] = {p.rJ1, p.rD1, p.rJ2, p.rD2};
    for (int q = 0; q < 4; q++) {
      CK(cudaMemcpy(a.data(), got[q], (size_t)n * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(b.data(), want[q], (size_t)n * 4, cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; i++) bad += a[i] != b[i];
    }
  }
  printf("{\"variant\":%d,\"workload\":\"%s\",\"n\":%d,\"d\":%d,\"m\":%d,\"dtype\":\"%s\",\"assign_ms\":%.4f,\"prep_anchors_ms\":%.4f,"
         "\"screen_ms\":%.4f,\"exact_ms\":%.4f,\"fallback_ms\":%.4f,\"uncertain\":%u,\"fallbacks\":%u,\"screen_tflops\":%.1f,"
         "\"assign_tflops\":%.1f,\"direct_ms\":%.3f,\"mismatches_vs_direct\":%d}\n",
         variant, name, n, d, m, f16 ? "f16" : "f32", ms, median(tPrep), msScreen, median(tExact), median(tList), uncertain, fb,
         flop / msScreen / 1e9, flop / ms / 1e9, msDirect, withDirect ? bad : -1);
  fflush(stdout);
  for (auto &e : ev) CK(cudaEventDestroy(e));
  release(p);
}

static int bench() {
  if (getenv("SHC_ONE")) {  // SHC_ONE=variant:n:d:m — one workload, for a profiler
    int v, n, d, m;
    if (sscanf(getenv("SHC_ONE"), "%d:%d:%d:%d", &v, &n, &d, &m) != 4) { fprintf(stderr, "SHC_ONE=variant:n:d:m\n"); return 2; }
    variant = v;
    bench_one("one", n, d, m, false, false, 2);
    return 0;
  }
  if (getenv("SHC_MO")) {  // screen_h90mo beside screen_h90m
    for (int v : {67, 66, 65, 60}) { variant = v; bench_one("prod", 1000000, 128, 2048, false, v == 67, 20); }
    for (int v : {60, 65, 66}) { variant = v; bench_one("1M-192-m20000", 1000000, 192, 20000, false, v == 65, 3); }
    return 0;
  }
  if (getenv("SHC_COLLECT")) {  // collect_h90 against collect_h under the same screen (SHC_PORTABLE_COLLECT set by the caller)
    variant = 90;
    bench_one("500k-768-m20000", 500000, 768, 20000, false, false, 3);
    variant = 60;
    bench_one("1M-256-m20000", 1000000, 256, 20000, false, false, 3);
    return 0;
  }
  for (int v : {67, 66, 65}) {
    variant = v;
    bench_one("prod", 1000000, 128, 2048, false, v == 67, 20);
  }
  variant = 60;
  bench_one("1M-256-m20000", 1000000, 256, 20000, false, true, 3);
  for (int v : {90, 4}) {
    variant = v;
    bench_one("prod", 1000000, 128, 2048, false, false, 20);
    bench_one("mnemo", 100000, 384, 1024, false, false, 20);
    bench_one("200k-1536", 200000, 1536, 1024, false, false, 10);
    bench_one("1M-256-m20000", 1000000, 256, 20000, false, false, 3);
    bench_one("500k-768-m20000", 500000, 768, 20000, false, false, 3);
  }
  variant = 67;
  bench_one("prod-f16", 1000000, 128, 2048, true, false, 20);
  return 0;
}

int main(int argc, char **argv) {
  CK(cudaFuncSetAttribute(screen_h90, cudaFuncAttributeMaxDynamicSharedMemorySize, W9_SMEM));
  CK(cudaFuncSetAttribute(collect_h90, cudaFuncAttributeMaxDynamicSharedMemorySize, W9_SMEM));
  for (auto k : {screen_h90m, screen_h90mo, screen_h90mo_k3, screen_h90mo_k2})
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, WM_SMEM(WM_MAX_DP)));
  const char *mode = argc > 1 ? argv[1] : "check";
  if (!strcmp(mode, "check")) return check();
  if (!strcmp(mode, "bench")) return bench();
  fprintf(stderr, "usage: %s check|bench\n", argv[0]);
  return 2;
}
