#include "mathfun.h"

#include <algorithm>
#include <cmath>

namespace autoui {

float ExpShifted(const float* x, float max, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = ExpF(x[j] - max);
  return Sum(out, n);
}

void SoftmaxInPlace(float* row, int64_t n) {
  float max = -INFINITY;
  for (int64_t j = 0; j < n; ++j) max = std::max(max, row[j]);
  const float sum = ExpShifted(row, max, row, n);
  for (int64_t j = 0; j < n; ++j) row[j] = row[j] / sum;
}

}  // namespace autoui
