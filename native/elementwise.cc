// Element-wise and row-wise kernels: dropout, residual add, RMS norm, AdamW, Σx².
#include <algorithm>
#include <cmath>
#include <vector>

#include "gemm.h"
#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {

// Rows per partial sum of a column reduction: fixed, so the sum order does not depend on threads.
constexpr int64_t kReduceRows = 64;

inline float RmsScale(const float* x, int64_t d, float eps) {
  return 1.0f / std::sqrt(Dot(x, x, d) / static_cast<float>(d) + eps);
}

AUTOUI_VECTORIZE void DropoutRange(const float* x, float* y, int64_t from, int64_t to, DropoutMask mask) {
  for (int64_t i = from; i < to; ++i) y[i] = x[i] * mask(static_cast<uint32_t>(i));
}

AUTOUI_VECTORIZE void AddDropoutRange(const float* x, const float* h, float* y, int64_t from, int64_t to, DropoutMask mask) {
  if (!mask.active()) {
    for (int64_t i = from; i < to; ++i) y[i] = x[i] + h[i];
  } else {
    for (int64_t i = from; i < to; ++i) y[i] = x[i] + h[i] * mask(static_cast<uint32_t>(i));
  }
}

AUTOUI_VECTORIZE void RmsNormRows(const float* x, const float* w, float* y, int64_t from, int64_t to, int64_t d, float eps) {
  for (int64_t r = from; r < to; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float s = RmsScale(xr, d, eps);
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] * s) * w[j];
  }
}

// Rows [from, to) of the RMS norm's backward; their Σ dy·n goes to pw[d].
AUTOUI_VECTORIZE void RmsNormGradRows(const float* dy, const float* x, const float* w, float* dx, float* pw, float* g,
                                      int64_t from, int64_t to, int64_t d, float eps) {
  std::fill(pw, pw + d, 0.0f);
  for (int64_t r = from; r < to; ++r) {
    const float* xr = x + r * d;
    const float* dyr = dy + r * d;
    float* dxr = dx + r * d;
    const float s = RmsScale(xr, d, eps);
    for (int64_t j = 0; j < d; ++j) {
      g[j] = dyr[j] * w[j];
      pw[j] += dyr[j] * (xr[j] * s);
    }
    float* n = dxr;  // n = x·s, kept in dx until dx is written
    for (int64_t j = 0; j < d; ++j) n[j] = xr[j] * s;
    const float mean = Dot(g, n, d) / static_cast<float>(d);
    for (int64_t j = 0; j < d; ++j) dxr[j] = s * (g[j] - n[j] * mean);
  }
}

// Seven streams are too many for the vectoriser's run-time alias checks, hence __restrict: the
// outputs never overlap the inputs (addon.cc checks).
AUTOUI_VECTORIZE void AdamWRange(const float* __restrict p, const float* __restrict g, const float* __restrict m,
                                 const float* __restrict v, float* __restrict pOut, float* __restrict mOut,
                                 float* __restrict vOut, int64_t from, int64_t to, const AdamWStep& s) {
  const float scale = s.gradScale, b1 = s.beta1, b2 = s.beta2, c1 = 1.0f - s.beta1, c2 = 1.0f - s.beta2;
  const float bc1 = s.bc1, bc2 = s.bc2, eps = s.eps, keep = s.keep, lr = s.lr;
  for (int64_t i = from; i < to; ++i) {
    const float gi = g[i] * scale;
    const float mi = m[i] * b1 + gi * c1;
    const float vi = v[i] * b2 + gi * gi * c2;
    mOut[i] = mi;
    vOut[i] = vi;
    pOut[i] = p[i] * keep - (mi / bc1) / (std::sqrt(vi / bc2) + eps) * lr;
  }
}

AUTOUI_VECTORIZE void AddBiasRows(float* y, const float* bias, int64_t from, int64_t to, int64_t out) {
  for (int64_t r = from; r < to; ++r)
    for (int64_t j = 0; j < out; ++j) y[r * out + j] = y[r * out + j] + bias[j];
}

AUTOUI_VECTORIZE void SumRowsInto(const float* x, float* sum, int64_t from, int64_t to, int64_t width) {
  std::fill(sum, sum + width, 0.0f);
  for (int64_t r = from; r < to; ++r)
    for (int64_t j = 0; j < width; ++j) sum[j] += x[r * width + j];
}

// out[j] = Σ_r x[r, j] over rows [0, rows): partial sums of kReduceRows rows, then those in order.
void ColumnSums(const float* x, float* out, int64_t rows, int64_t width) {
  const int64_t chunks = (rows + kReduceRows - 1) / kReduceRows;
  float* partial = Scratch(4, static_cast<size_t>(std::max<int64_t>(chunks, 1) * width));
  ParallelFor(chunks, rows * width, kMinParallelElements, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) SumRowsInto(x, partial + c * width, c * kReduceRows, std::min(rows, (c + 1) * kReduceRows), width);
  });
  std::fill(out, out + width, 0.0f);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < width; ++j) out[j] += partial[c * width + j];
}

}  // namespace

void Linear(const float* x, const float* w, const float* bias, float* y, int64_t n, int64_t in, int64_t out) {
  Gemm(false, true, n, out, in, 1.0f, x, w, 0.0f, y);
  if (bias) ParallelFor(n, n * out, kMinParallelElements, [&](int64_t from, int64_t to) { AddBiasRows(y, bias, from, to, out); });
}

void LinearGrad(const float* dy, const float* x, float* dw, float* dbias, int64_t n, int64_t in, int64_t out) {
  Gemm(true, false, out, in, n, 1.0f, dy, x, 0.0f, dw);  // dW = dyᵀ·x
  if (dbias) ColumnSums(dy, dbias, n, out);
}

void Dropout(const float* x, float* y, int64_t n, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) { DropoutRange(x, y, from, to, mask); }, 16);
}

void AddDropout(const float* x, const float* h, float* y, int64_t n, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) { AddDropoutRange(x, h, y, from, to, mask); }, 16);
}

void RmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps) {
  ParallelFor(rows, rows * d, kMinParallelElements, [&](int64_t from, int64_t to) { RmsNormRows(x, w, y, from, to, d, eps); });
}

void RmsNormGrad(const float* dy, const float* x, const float* w, float* dx, float* dw, int64_t rows, int64_t d, float eps) {
  const int64_t chunks = (rows + kReduceRows - 1) / kReduceRows;
  float* partial = Scratch(0, static_cast<size_t>(std::max<int64_t>(chunks, 1) * d));
  ParallelFor(chunks, rows * d, kMinParallelElements, [&](int64_t c0, int64_t c1) {
    float* g = Scratch(1, static_cast<size_t>(d));
    for (int64_t c = c0; c < c1; ++c)
      RmsNormGradRows(dy, x, w, dx, partial + c * d, g, c * kReduceRows, std::min(rows, (c + 1) * kReduceRows), d, eps);
  });
  ParallelFor(d, chunks * d, kMinParallelElements, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) dw[j] = 0.0f;
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = j0; j < j1; ++j) dw[j] += partial[c * d + j];
  }, 16);
}

void AdamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n,
           const AdamWStep& s) {
  ParallelFor(n, n, kMinParallelElements, [&](int64_t from, int64_t to) { AdamWRange(p, g, m, v, pOut, mOut, vOut, from, to, s); }, 16);
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
