// The screens' running lists of candidate anchors (screen_h.cu, screen_h90.cu): 32-bit keys that
// order by approximate distance, then anchor index. A key is the bits of a non-negative f32
// distance (which order as unsigned integers) with the low bits replaced by the anchor index, so a
// key's distance is truncated down: a list's last key bounds every anchor outside it from below.
#pragma once

#define SH_EMPTY 0xffffffffu  // no key (real keys have the sign bit clear)
#define SH_ROW 8              // keys per point the screens write (then the smallest left out); exact_h reads them
#define SH_ROW_WIDE 16        // ... screen_h90 and screen_h90m (8 keys a lane, 32 a quad), read by exact_h16

// Insert `key` into the sorted k[0..K-1] and keep the smallest key pushed out in k[K].
template <int K>
__device__ __forceinline__ void key_push(unsigned key, unsigned (&k)[K + 1]) {
  unsigned t = key;
#pragma unroll
  for (int q = 0; q < K; q++) {
    const unsigned lo = min(k[q], t);
    t = max(k[q], t);
    k[q] = lo;
  }
  k[K] = min(k[K], t);
}

// Merge another list (its K keys, then its last) into this one; the lists hold different anchors.
template <int K>
__device__ __forceinline__ void key_merge(const unsigned (&o)[K + 1], unsigned (&k)[K + 1]) {
#pragma unroll
  for (int q = 0; q < K; q++)
    if (o[q] < k[K]) key_push<K>(o[q], k);
  k[K] = min(k[K], o[K]);
}

// The largest distance a key's bucket holds (keys drop the low bits of the distance): +inf for an
// empty key or a padding anchor's.
__device__ __forceinline__ float key_top(unsigned key, unsigned imask) {
  return key >= 0x7f800000u ? __int_as_float(0x7f800000) : __uint_as_float((key & ~imask) + imask + 1);
}
__device__ __forceinline__ float key_val(unsigned key, unsigned imask) { return __uint_as_float(key & ~imask); }

