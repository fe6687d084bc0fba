// The row decoders' loop (decode.cu, ec.cu): one thread per element of out (rows × d f32),
// grid-stride; element e is dimension k = e mod d of the file's row i = r0 + e / d, and
// body(e, i, k) writes it.
#pragma once

template <typename Body>
__device__ __forceinline__ void for_each_row_element(int r0, int rows, int d, Body body) {
  const long long total = (long long)rows * d;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x)
    body(e, r0 + e / d, (int)(e % d));
}
