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
