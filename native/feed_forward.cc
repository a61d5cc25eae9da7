// T5 feed-forward sub-layer (without its norm and residual): the products on BLAS, the activation,
// gating and dropout in one pass over the hidden activations.
#include <algorithm>

#include "gemm.h"
#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {


AUTOUI_VECTORIZE void HiddenRange(const float* a, const float* b, float* h, int64_t from, int64_t to, DropoutMask mask) {
  if (b) {
    for (int64_t i = from; i < to; ++i) h[i] = (GeluNew(a[i]) * b[i]) * mask(static_cast<uint32_t>(i));
  } else {
    for (int64_t i = from; i < to; ++i) h[i] = (a[i] > 0.0f ? a[i] : 0.0f) * mask(static_cast<uint32_t>(i));
  }
}

// From dh = dy·Wo in place: dh ← da, and (gated) h ← db.
AUTOUI_VECTORIZE void HiddenGradRange(const float* a, const float* b, float* dh, float* h, int64_t from, int64_t to,
                                      DropoutMask mask) {
  if (b) {
    for (int64_t i = from; i < to; ++i) {
      const float g = dh[i] * mask(static_cast<uint32_t>(i));
      const float s = GeluSigmoid(a[i]);
      dh[i] = (g * b[i]) * GeluNewGrad(a[i], s);
      h[i] = g * (a[i] * s);
    }
  } else {
    for (int64_t i = from; i < to; ++i) dh[i] = a[i] > 0.0f ? dh[i] * mask(static_cast<uint32_t>(i)) : 0.0f;
  }
}

// h = act(a) [⊙ b] ⊙ mask over [n, dff].
void Hidden(const float* a, const float* b, float* h, int64_t count, const DropoutMask& mask) {
  ParallelFor(count, count, kMinParallelElements, [&](int64_t from, int64_t to) { HiddenRange(a, b, h, from, to, mask); }, 16);
}

}  // namespace

void FeedForward(const float* x, const float* wi0, const float* wi1, const float* wo, float* y, float* a, float* b,
                 const FeedForwardShape& s, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  Gemm(false, true, s.n, s.dff, s.d, 1.0f, x, wi0, 0.0f, a);
  if (wi1) Gemm(false, true, s.n, s.dff, s.d, 1.0f, x, wi1, 0.0f, b);
  float* h = Scratch(0, static_cast<size_t>(s.n * s.dff));
  Hidden(a, wi1 ? b : nullptr, h, s.n * s.dff, mask);
  Gemm(false, true, s.n, s.d, s.dff, 1.0f, h, wo, 0.0f, y);
}

void FeedForwardGrad(const float* dy, const float* x, const float* wi0, const float* wi1, const float* wo, const float* a,
                     const float* b, float* dx, float* dwi0, float* dwi1, float* dwo, const FeedForwardShape& s,
                     DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  const int64_t count = s.n * s.dff;
  float* h = Scratch(0, static_cast<size_t>(count));
  float* dh = Scratch(1, static_cast<size_t>(count));
  const bool gated = wi1 != nullptr;
  Hidden(a, gated ? b : nullptr, h, count, mask);
  Gemm(true, false, s.d, s.dff, s.n, 1.0f, dy, h, 0.0f, dwo);  // dWo = dyᵀ·h
  Gemm(false, false, s.n, s.dff, s.d, 1.0f, dy, wo, 0.0f, dh);  // dh = dy·Wo
  // In place: dh becomes da, and h (no longer needed) becomes db.
  ParallelFor(count, count, kMinParallelElements, [&](int64_t from, int64_t to) {
    HiddenGradRange(a, gated ? b : nullptr, dh, h, from, to, mask);
  }, 16);
  Gemm(true, false, s.dff, s.d, s.n, 1.0f, dh, x, 0.0f, dwi0);  // dWi0 = daᵀ·x
  Gemm(false, false, s.n, s.d, s.dff, 1.0f, dh, wi0, 0.0f, dx);  // dx = da·Wi0
  if (gated) {
    Gemm(true, false, s.dff, s.d, s.n, 1.0f, h, x, 0.0f, dwi1);  // dWi1 = dbᵀ·x
    Gemm(false, false, s.n, s.d, s.dff, 1.0f, h, wi1, 1.0f, dx);  // dx += db·Wi1
  }
}

}  // namespace autoui
