// Small running "best few" lists shared by the assign and screen kernels.
#pragma once

#define NONE 0xffffffffu

__device__ __forceinline__ bool lex_less(float da, unsigned ja, float db, unsigned jb) {
  return da < db || (da == db && ja < jb);
}

// Insert (d, j) into the exact top-2 (d1, j1) <= (d2, j2), lexicographically (ties: lower index).
__device__ __forceinline__ void top2_push(float d, unsigned j, float &d1, unsigned &j1, float &d2, unsigned &j2) {
  if (lex_less(d, j, d1, j1)) {
    d2 = d1; j2 = j1; d1 = d; j1 = j;
  } else if (lex_less(d, j, d2, j2)) {
    d2 = d; j2 = j;
  }
}

// The screens' list: (a1, j1) <= (a2, j2) <= (a3, j3) <= a4, the three best approximate
// distances with their anchors, and the fourth distance.
__device__ __forceinline__ void push4(float a, unsigned j, float &a1, unsigned &j1, float &a2, unsigned &j2,
                                      float &a3, unsigned &j3, float &a4) {
  if (a < a3) {
    a4 = a3;
    if (a < a2) {
      a3 = a2; j3 = j2;
      if (a < a1) {
        a2 = a1; j2 = j1; a1 = a; j1 = j;
      } else {
        a2 = a; j2 = j;
      }
    } else {
      a3 = a; j3 = j;
    }
  } else if (a < a4) {
    a4 = a;
  }
}

// Merge another lane's (or warp's) best-3 list into this one: its three entries with their
// anchors, then its a4 last, so it can only land fourth. The two lists hold different anchors.
__device__ __forceinline__ void merge4(float o1, unsigned oj1, float o2, unsigned oj2, float o3, unsigned oj3, float o4,
                                       float &a1, unsigned &j1, float &a2, unsigned &j2, float &a3, unsigned &j3,
                                       float &a4) {
  push4(o1, oj1, a1, j1, a2, j2, a3, j3, a4);
  push4(o2, oj2, a1, j1, a2, j2, a3, j3, a4);
  push4(o3, oj3, a1, j1, a2, j2, a3, j3, a4);
  push4(o4, NONE, a1, j1, a2, j2, a3, j3, a4);
}

// merge4 with the list of lane (this lane xor o), through warp shuffles.
__device__ __forceinline__ void merge4_xor(int o, float &a1, unsigned &j1, float &a2, unsigned &j2, float &a3,
                                           unsigned &j3, float &a4) {
  const float o1 = __shfl_xor_sync(0xffffffffu, a1, o);
  const unsigned oj1 = __shfl_xor_sync(0xffffffffu, j1, o);
  const float o2 = __shfl_xor_sync(0xffffffffu, a2, o);
  const unsigned oj2 = __shfl_xor_sync(0xffffffffu, j2, o);
  const float o3 = __shfl_xor_sync(0xffffffffu, a3, o);
  const unsigned oj3 = __shfl_xor_sync(0xffffffffu, j3, o);
  const float o4 = __shfl_xor_sync(0xffffffffu, a4, o);
  merge4(o1, oj1, o2, oj2, o3, oj3, o4, a1, j1, a2, j2, a3, j3, a4);
}

// The top-2 of lane (this lane xor o) merged into this lane's.
__device__ __forceinline__ void top2_merge_xor(int o, float &d1, unsigned &j1, float &d2, unsigned &j2) {
  const float od1 = __shfl_xor_sync(0xffffffffu, d1, o);
  const unsigned oj1 = __shfl_xor_sync(0xffffffffu, j1, o);
  const float od2 = __shfl_xor_sync(0xffffffffu, d2, o);
  const unsigned oj2 = __shfl_xor_sync(0xffffffffu, j2, o);
  top2_push(od1, oj1, d1, j1, d2, j2);
  top2_push(od2, oj2, d1, j1, d2, j2);
}
