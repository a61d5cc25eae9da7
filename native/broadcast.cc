// tfjs's Add, Sub, Multiply and Sum on the addon's threads (kernels.h). The wasm backend runs them
// on one thread, and Sum over an axis that is not the last transposes its input first; in a
// training step they are the largest kernels tfjs still runs itself. Each output element is
// computed as the stock kernels compute it (one IEEE operation; a sum from 0 in index order), so
// results are the same bits on any split.
#include <algorithm>

#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {

template <BinaryOp op>
inline float Apply(float a, float b) {
  if constexpr (op == BinaryOp::kAdd) return a + b;
  else if constexpr (op == BinaryOp::kSub) return a - b;
  else return a * b;
}

// One row of n outputs: a and b advance by 1 (their row is contiguous) or 0 (broadcast along it).
template <BinaryOp op>
AUTOUI_VECTORIZE void Row(const float* a, const float* b, float* y, int64_t n, bool aStep, bool bStep) {
  if (aStep && bStep) {
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<op>(a[i], b[i]);
  } else if (aStep) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<op>(a[i], bv);
  } else if (bStep) {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) y[i] = Apply<op>(av, b[i]);
  } else {
    const float v = Apply<op>(*a, *b);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

// Outputs [from, to) of the flat output, a row segment at a time: a split may start mid-row.
template <BinaryOp op>
void BinaryRange(const float* a, const float* b, float* y, const BroadcastShape& s, int64_t from, int64_t to) {
  const int64_t n = s.dims[2];
  for (int64_t at = from; at < to;) {
    const int64_t r = at / n, j = at % n, len = std::min(n - j, to - at);
    const int64_t i0 = r / s.dims[1], i1 = r % s.dims[1];
    Row<op>(a + i0 * s.a[0] + i1 * s.a[1] + j * s.a[2], b + i0 * s.b[0] + i1 * s.b[1] + j * s.b[2], y + at, len, s.a[2] != 0,
            s.b[2] != 0);
    at += len;
  }
}

template <BinaryOp op>
void BinaryAll(const float* a, const float* b, float* y, const BroadcastShape& s) {
  const int64_t total = s.dims[0] * s.dims[1] * s.dims[2];
  ParallelFor(total, static_cast<double>(total), kMinParallelElements,
              [&](int64_t from, int64_t to) { BinaryRange<op>(a, b, y, s, from, to); }, 16);
}

// y[i] += x[i] over [0, n): one column block of one outer slice, added a mid index at a time.
AUTOUI_VECTORIZE void AddInto(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

// Columns of the inner axis summed together per task: wide enough to vectorise, narrow enough that
// [outer, mid, 128] sums with a small outer still split over the threads.
constexpr int64_t kSumBlock = 256;

}  // namespace

void Binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastShape& s) {
  switch (op) {
    case BinaryOp::kAdd: BinaryAll<BinaryOp::kAdd>(a, b, y, s); break;
    case BinaryOp::kSub: BinaryAll<BinaryOp::kSub>(a, b, y, s); break;
    case BinaryOp::kMul: BinaryAll<BinaryOp::kMul>(a, b, y, s); break;
  }
}

void SumAxis(const float* x, float* y, int64_t outer, int64_t mid, int64_t inner) {
  const double work = static_cast<double>(outer) * mid * inner;
  if (inner == 1) {
    // Sums of contiguous runs, each from 0 in order.
    ParallelFor(outer, work, kMinParallelElements, [&](int64_t from, int64_t to) {
      for (int64_t o = from; o < to; ++o) {
        float s = 0.0f;
        for (const float *p = x + o * mid, *end = p + mid; p < end; ++p) s += *p;
        y[o] = s;
      }
    });
    return;
  }
  const int64_t blocks = (inner + kSumBlock - 1) / kSumBlock;
  ParallelFor(outer * blocks, work, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t t = from; t < to; ++t) {
      const int64_t o = t / blocks, j0 = (t % blocks) * kSumBlock, n = std::min(inner, j0 + kSumBlock) - j0;
      float* out = y + o * inner + j0;
      std::fill(out, out + n, 0.0f);
      for (int64_t m = 0; m < mid; ++m) AddInto(x + (o * mid + m) * inner + j0, out, n);
    }
  });
}

}  // namespace autoui
