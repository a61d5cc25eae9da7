#include "gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "pool.h"

namespace autoui {
namespace {

// Below this many flops a product is not worth a second thread: waking a helper costs more.
constexpr double kMinParallelFlops = 2.0e6;

}  // namespace

void GemmSerial(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // an empty sum; BLAS may leave C untouched
    for (int64_t i = 0; i < g.m; ++i) {
      float* row = g.c + i * g.ldc;
      if (g.beta == 0.0f) {
        std::memset(row, 0, sizeof(float) * g.n);
      } else {
        for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
      }
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans, g.transB ? CblasTrans : CblasNoTrans,
              static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), g.alpha, g.a,
              static_cast<int>(g.lda), g.b, static_cast<int>(g.ldb), g.beta, g.c, static_cast<int>(g.ldc));
}

void Gemm(const GemmArgs& g) {
  const double flops = 2.0 * g.m * g.n * g.k;
  // Cut the longer side of C; blocks start at multiples of 16 rows or columns (OpenBLAS's
  // micro-kernels work on such tiles, so no block ends in a ragged edge but the last).
  if (g.m >= g.n) {
    ParallelFor(g.m, flops, kMinParallelFlops, [&g](int64_t from, int64_t to) {
      GemmArgs part = g;
      part.m = to - from;
      part.a = g.transA ? g.a + from : g.a + from * g.lda;
      part.c = g.c + from * g.ldc;
      GemmSerial(part);
    }, 16);
  } else {
    ParallelFor(g.n, flops, kMinParallelFlops, [&g](int64_t from, int64_t to) {
      GemmArgs part = g;
      part.n = to - from;
      part.b = g.transB ? g.b + from * g.ldb : g.b + from;
      part.c = g.c + from;
      GemmSerial(part);
    }, 16);
  }
}

void Gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta,
          float* c) {
  GemmArgs g;
  g.transA = transA;
  g.transB = transB;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.a = a;
  g.lda = transA ? m : k;
  g.b = b;
  g.ldb = transB ? k : n;
  g.beta = beta;
  g.c = c;
  g.ldc = n;
  Gemm(g);
}

void BatchedGemm(const float* a, const float* b, float* c, int64_t batch, int64_t batchA, int64_t batchB, int64_t m,
                 int64_t n, int64_t k, bool transA, bool transB) {
  if (batch > 1 && batchB == 1 && batchA == batch && !transA) {
    // Consecutive a[bi] (each [m, k], row-major) against one b form a single [batch·m, k] product.
    Gemm(false, transB, batch * m, n, k, 1.0f, a, b, 0.0f, c);
    return;
  }
  const auto one = [=](int64_t bi, bool split) {
    GemmArgs g;
    g.transA = transA;
    g.transB = transB;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a + (bi % batchA) * m * k;
    g.lda = transA ? m : k;
    g.b = b + (bi % batchB) * k * n;
    g.ldb = transB ? k : n;
    g.c = c + bi * m * n;
    g.ldc = n;
    if (split) Gemm(g); else GemmSerial(g);
  };
  const double flops = 2.0 * m * n * k;
  if (batch == 1 || flops >= kMinParallelFlops * Threads()) {
    for (int64_t bi = 0; bi < batch; ++bi) one(bi, true);
    return;
  }
  // Contiguous slices of the batch, every matrix by one single-threaded call: the bits do not
  // depend on the split.
  ParallelFor(batch, flops * batch, kMinParallelFlops, [&](int64_t from, int64_t to) {
    for (int64_t bi = from; bi < to; ++bi) one(bi, false);
  });
}

}  // namespace autoui
