// Row-major single-precision GEMM over OpenBLAS (single-threaded), split over the addon's threads.
#pragma once

#include <cstdint>

namespace autoui {

// One product C = alpha·op(A)·op(B) + beta·C, row-major with leading dimensions; op(X) = Xᵀ when
// its flag is set. A is [m, k] ([k, m] if transA), B [k, n] ([n, k] if transB), C [m, n].
struct GemmArgs {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
};

// On the calling thread only (inside parallel regions).
void GemmSerial(const GemmArgs& g);

// Split into row or column blocks of C over the pool when the product is large enough. Each
// element of C is computed by one single-threaded call over the whole of k, and the split depends
// only on the shapes and the thread count, so results are the same run to run.
void Gemm(const GemmArgs& g);

// Convenience for contiguous operands: C[m, n] = alpha·op(A)·op(B) + beta·C.
void Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c);

// c[bi] = op(a[bi % batchA]) · op(b[bi % batchB]) for bi in [0, batch) (tfjs BatchMatMul
// indexing), every matrix contiguous. Small products are spread over the pool one matrix per
// call; large ones are split one at a time.
void BatchedGemm(const float* a, const float* b, float* c, int64_t batch, int64_t batchA, int64_t batchB, int64_t m,
                 int64_t n, int64_t k, bool transA, bool transB);

}  // namespace autoui
