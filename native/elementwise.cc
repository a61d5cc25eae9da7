// Element-wise and row-wise kernels: dropout, residual add, RMS norm, AdamW, Σx².
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {

// Below this many elements a kernel runs on the caller alone (a helper wake-up costs ~5–20 µs).
constexpr double kMinParallelElements = 32768;
// Rows per partial sum of a column reduction: fixed, so the sum order does not depend on threads.
constexpr int64_t kReduceRows = 64;

// Σ x[i]·y[i] in float over 8 interleaved partial sums (vectorisable; the order is fixed).
inline float Dot(const float* x, const float* y, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += x[i + l] * y[i + l];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

inline float RmsScale(const float* x, int64_t d, float eps) {
  return 1.0f / std::sqrt(Dot(x, x, d) / static_cast<float>(d) + eps);
}

}  // namespace

void Dropout(const float* x, float* y, int64_t n, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) y[i] = x[i] * mask(i);
  }, 16);
}

void AddDropout(const float* x, const float* h, float* y, int64_t n, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) {
    if (!mask.active()) {
      for (int64_t i = from; i < to; ++i) y[i] = x[i] + h[i];
    } else {
      for (int64_t i = from; i < to; ++i) y[i] = x[i] + h[i] * mask(i);
    }
  }, 16);
}

void RmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps) {
  ParallelFor(rows, rows * d, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t r = from; r < to; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      const float s = RmsScale(xr, d, eps);
      for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] * s) * w[j];
    }
  });
}

void RmsNormGrad(const float* dy, const float* x, const float* w, float* dx, float* dw, int64_t rows, int64_t d, float eps) {
  const int64_t chunks = (rows + kReduceRows - 1) / kReduceRows;
  float* partial = Scratch(0, static_cast<size_t>(std::max<int64_t>(chunks, 1) * d));
  ParallelFor(chunks, rows * d, kMinParallelElements, [&](int64_t c0, int64_t c1) {
    float* g = Scratch(1, static_cast<size_t>(d));
    for (int64_t c = c0; c < c1; ++c) {
      float* pw = partial + c * d;
      std::fill(pw, pw + d, 0.0f);
      for (int64_t r = c * kReduceRows; r < std::min(rows, (c + 1) * kReduceRows); ++r) {
        const float* xr = x + r * d;
        const float* dyr = dy + r * d;
        float* dxr = dx + r * d;
        const float s = RmsScale(xr, d, eps);
        for (int64_t j = 0; j < d; ++j) {
          g[j] = dyr[j] * w[j];
          pw[j] += dyr[j] * (xr[j] * s);
        }
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t j = 0;
        for (; j + 8 <= d; j += 8)
          for (int l = 0; l < 8; ++l) acc[l] += g[j + l] * (xr[j + l] * s);
        float gn = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; j < d; ++j) gn += g[j] * (xr[j] * s);
        const float mean = gn / static_cast<float>(d);
        for (int64_t k = 0; k < d; ++k) dxr[k] = s * (g[k] - (xr[k] * s) * mean);
      }
    }
  });
  ParallelFor(d, chunks * d, kMinParallelElements, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) dw[j] = 0.0f;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = j0; j < j1; ++j) dw[j] += partial[c * d + j];
  }, 16);
}

void AdamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n,
           const AdamWStep& s) {
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      const float gi = g[i] * s.gradScale;
      const float mi = m[i] * s.beta1 + gi * (1.0f - s.beta1);
      const float vi = v[i] * s.beta2 + gi * gi * (1.0f - s.beta2);
      mOut[i] = mi;
      vOut[i] = vi;
      pOut[i] = p[i] * s.keep - (mi / s.bc1) / (std::sqrt(vi / s.bc2) + s.eps) * s.lr;
    }
  }, 16);
}

double SumSquares(const float* x, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  ParallelFor(chunks, n, kMinParallelElements, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double acc[4] = {0, 0, 0, 0};
      const int64_t end = std::min(n, (c + 1) * kChunk);
      int64_t i = c * kChunk;
      for (; i + 4 <= end; i += 4)
        for (int l = 0; l < 4; ++l) acc[l] += static_cast<double>(x[i + l]) * x[i + l];
      double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
      for (; i < end; ++i) s += static_cast<double>(x[i]) * x[i];
      partial[c] = s;
    }
  });
  double sum = 0;
  for (double s : partial) sum += s;
  return sum;
}

}  // namespace autoui
