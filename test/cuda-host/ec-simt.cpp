// cuda/ec.cu's ec_decode run on the CPU (test/cuda-host/ec-simt.test.ts): the kernel's own source,
// compiled by g++, each warp's 32 lanes as 32 threads meeting at a barrier in every warp intrinsic
// (__ballot_sync, __any_sync), so lanes diverge and vote as on a GPU. Reads a problem written by the
// test (the blocks, their offsets, the tables ec.ts uploads, the host's codes), decodes it in spans
// of blocks, and prints how many codes differ from the host's and the kernel's error word; then
// rebuilds rows r0 .. r1 − 1 with ec_axis or ec_rotated (one thread) and prints how many values
// differ from the host's reconstruction in their bits; exit 0 when nothing differs and no block was
// refused.
// Usage: ec-simt DIR [blocks per launch]
#include <barrier>
#include <thread>
#include <atomic>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <functional>
struct dim3_ { unsigned x = 0, y = 0, z = 0; };
thread_local dim3_ threadIdx, blockIdx;
dim3_ gridDim, blockDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads()
#define __launch_bounds__(...)
static std::barrier<> *bar;
static unsigned slotsBallot[32];
static unsigned ballotImpl(bool p) {
  unsigned lane = threadIdx.x & 31;
  bar->arrive_and_wait();
  slotsBallot[lane] = p;
  bar->arrive_and_wait();
  unsigned r = 0;
  for (int l = 0; l < 32; l++) r |= slotsBallot[l] << l;
  bar->arrive_and_wait();
  return r;
}
#define __ballot_sync(m, p) ballotImpl(p)
#define __any_sync(m, p) (ballotImpl(p) != 0)
#define __popc(x) __builtin_popcount(x)
#define __ffs(x) __builtin_ffs(x)
static std::atomic<int> errAtom;
static int atomicCAS(int *p, int cmp, int v) {
  int c = cmp;
  errAtom.compare_exchange_strong(c, v);
  *p = errAtom.load();
  return c;
}
using std::min;
#define __dmul_rn(a, b) ((a) * (b))
#define __dadd_rn(a, b) ((a) + (b))
#define __dsub_rn(a, b) ((a) - (b))
#define __double2float_rn(a) ((float)(a))
#include "../../cuda/ec.cu"

template <typename T> std::vector<T> readv(const char *dir, const char *name) {
  std::string p = std::string(dir) + "/" + name;
  std::ifstream f(p, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), {});
  std::vector<T> v(b.size() / sizeof(T));
  memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}
int main(int argc, char **argv) {
  const char *dir = argv[1];
  // blocks, blockRows, n, D, scaleBits, then the rows rebuilt: r0, r1, d, rotated
  auto meta = readv<int>(dir, "meta");
  int blocks = meta[0], blockRows = meta[1], n = meta[2], D = meta[3], S = meta[4];
  int r0 = meta[5], r1 = meta[6], d = meta[7], rotated = meta[8];
  auto bytes = readv<unsigned char>(dir, "bytes");
  auto at = readv<unsigned long long>(dir, "at");
  auto slots = readv<unsigned short>(dir, "slots");
  auto state = readv<unsigned>(dir, "state");
  auto lo = readv<int>(dir, "lo");
  auto size = readv<unsigned>(dir, "size");
  auto want = readv<int>(dir, "codes");
  std::vector<int> codes((size_t)n * D, 0x7fffffff);
  int err = 0;
  errAtom = 0;
  // Launches of `span` blocks (b0 moves as in ec.ts); each thread block's warps one after the other.
  int span = argc > 2 ? atoi(argv[2]) : blocks;
  for (int b0 = 0; b0 < blocks; b0 += span) {
    int cnt = std::min(span, blocks - b0);
    int grid = (cnt + EC_WARPS - 1) / EC_WARPS;
    for (int g = 0; g < grid; g++)
      for (int w = 0; w < EC_WARPS; w++) {
        std::barrier<> br(32);
        bar = &br;
        std::vector<std::thread> th;
        for (int l = 0; l < 32; l++)
          th.emplace_back([&, l] {
            threadIdx.x = w * 32 + l;
            blockIdx.x = g;
            ec_decode(bytes.data(), at.data(), b0, cnt, blockRows, n, D, S, slots.data(), state.data(), lo.data(), size.data(),
                      codes.data() + (size_t)b0 * blockRows * D, &err);
          });
        for (auto &t : th) t.join();
      }
  }
  size_t bad = 0, first = SIZE_MAX;
  for (size_t i = 0; i < codes.size(); i++)
    if (codes[i] != want[i] && bad++ == 0) first = i;
  printf("err %d, %zu of %zu codes differ", err, bad, codes.size());
  if (bad) printf(" (first at %zu: %d vs %d)", first, codes[first], want[first]);
  printf("\n");
  if (bad || err) return 1;
  // Rows r0 .. r1 − 1 from the decoded codes (one thread, grid-stride over every element), as bits.
  auto anchors = readv<float>(dir, "anchors"), steps = readv<float>(dir, "steps"), offsets = readv<float>(dir, "offsets");
  auto assign = readv<unsigned>(dir, "assign");
  auto map = readv<int>(dir, "map");  // colOf (axes) or dims (rotated)
  auto P = readv<float>(dir, "P"), rows = readv<float>(dir, "rows");
  std::vector<float> out((size_t)(r1 - r0) * d, __builtin_nanf(""));
  threadIdx.x = blockIdx.x = 0;
  blockDim.x = gridDim.x = 1;
  if (rotated)
    ec_rotated(anchors.data(), assign.data(), codes.data(), map.data(), P.data(), steps.data(), offsets.data(), D, 0, r0, r1 - r0, d, out.data());
  else
    ec_axis(anchors.data(), assign.data(), codes.data(), map.data(), steps.data(), offsets.data(), D, 0, r0, r1 - r0, d, out.data());
  size_t badRows = 0;
  for (size_t e = 0; e < out.size(); e++)
    if (memcmp(&out[e], &rows[e], 4) != 0 && badRows++ == 0) first = e;
  printf("%zu of %zu row values differ", badRows, out.size());
  if (badRows) printf(" (first at row %zu, dim %zu: %.9g vs %.9g)", r0 + first / d, first % d, out[first], rows[first]);
  printf("\n");
  return badRows ? 1 : 0;
}
