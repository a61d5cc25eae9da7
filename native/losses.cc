// Token cross-entropy, embedding lookup and its scatter-add gradient, and the screen-grounding
// reductions of src/model/grounding.ts.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {


// The maximum of one row and Σ_j e^{z_j − max}: softmax = e^{z − max}/sum, log Z = max + log sum.
struct RowPartition {
  float max, sum;
};

// e^{z − max} goes to `scratch` [vocab].
RowPartition Partition(const float* z, int64_t vocab, float* scratch) {
  float max = -INFINITY;
  for (int64_t j = 0; j < vocab; ++j) max = std::max(max, z[j]);
  return {max, ExpShifted(z, max, scratch, vocab)};
}

// d = (e/sum − onehot(label))·scale; e may be d itself.
AUTOUI_VECTORIZE void SoftmaxMinusOneHot(const float* e, float sum, int32_t label, float scale, float* d, int64_t vocab) {
  const float atLabel = e[label] / sum;
  for (int64_t j = 0; j < vocab; ++j) d[j] = (e[j] / sum) * scale;
  d[label] = (atLabel - 1.0f) * scale;
}

// Σ_t m_t over row b, at least 1 (a row without real tokens averages nothing).
float TokenCount(Mask mask, int64_t b, int64_t l) {
  float n = 0;
  for (int64_t t = 0; t < l; ++t) n += mask.at(b * l + t);
  return std::max(n, 1.0f);
}

AUTOUI_VECTORIZE void ScaleRow(const float* x, float* y, int64_t d, uint32_t offset, DropoutMask mask) {
  for (int64_t j = 0; j < d; ++j) y[j] = x[j] * mask(offset + static_cast<uint32_t>(j));
}

AUTOUI_VECTORIZE void AddScaledRow(const float* x, float* y, int64_t d, uint32_t offset, DropoutMask mask) {
  for (int64_t j = 0; j < d; ++j) y[j] += x[j] * mask(offset + static_cast<uint32_t>(j));
}

}  // namespace

void CrossEntropy(const float* logits, const int32_t* labels, float* loss, int64_t n, int64_t vocab, int32_t ignoreIndex) {
  ParallelFor(n, n * vocab, kMinParallelElements, [&](int64_t from, int64_t to) {
    float* e = Scratch(0, static_cast<size_t>(vocab));
    for (int64_t r = from; r < to; ++r) {
      const float* z = logits + r * vocab;
      const RowPartition part = Partition(z, vocab, e);
      loss[r] = labels[r] == ignoreIndex ? 0.0f : (part.max + std::log(part.sum)) - z[labels[r]];
    }
  });
}

// The softmax is recomputed as the forward JS kernels compute it, e^{z − max}/Σ, rather than
// from a stored log Z: e^{z − log Z} loses relative accuracy in p when |z| is large.
void CrossEntropyGrad(const float* dloss, const float* logits, const int32_t* labels, float* dlogits, int64_t n,
                      int64_t vocab, int32_t ignoreIndex) {
  ParallelFor(n, n * vocab, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t r = from; r < to; ++r) {
      float* d = dlogits + r * vocab;
      if (labels[r] == ignoreIndex) {
        std::fill(d, d + vocab, 0.0f);
        continue;
      }
      const RowPartition part = Partition(logits + r * vocab, vocab, d);  // e^{z − max} lands in d
      SoftmaxMinusOneHot(d, part.sum, labels[r], dloss[r], d, vocab);
    }
  });
}

void Embedding(const float* table, const int32_t* ids, float* y, int64_t n, int64_t d, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  ParallelFor(n, n * d, kMinParallelElements, [&](int64_t from, int64_t to) {
    for (int64_t r = from; r < to; ++r) {
      const float* row = table + static_cast<int64_t>(ids[r]) * d;
      float* out = y + r * d;
      if (!mask.active()) {
        std::memcpy(out, row, sizeof(float) * d);
      } else {
        ScaleRow(row, out, d, static_cast<uint32_t>(r * d), mask);
      }
    }
  });
}

void EmbeddingGrad(const float* dy, const int32_t* ids, float* dtable, int64_t n, int64_t d, int64_t vocab, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  // Each thread owns a range of columns and adds the rows in order: duplicates sum in a fixed order.
  ParallelFor(d, (n + vocab) * d, kMinParallelElements, [&](int64_t j0, int64_t j1) {
    for (int64_t v = 0; v < vocab; ++v) std::fill(dtable + v * d + j0, dtable + v * d + j1, 0.0f);
    for (int64_t r = 0; r < n; ++r) {
      float* row = dtable + static_cast<int64_t>(ids[r]) * d;
      AddScaledRow(dy + r * d + j0, row + j0, j1 - j0, static_cast<uint32_t>(r * d + j0), mask);
    }
  }, 16);
}

void MeanTokenAttention(const float* a, Mask mask, float* out, int64_t batch, int64_t l, int64_t p) {
  ParallelFor(batch, batch * l * p, kMinParallelElements, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      float* o = out + b * p;
      std::fill(o, o + p, 0.0f);
      for (int64_t t = 0; t < l; ++t) {
        const float m = mask.at(b * l + t);
        const float* row = a + (b * l + t) * p;
        for (int64_t j = 0; j < p; ++j) o[j] += m * row[j];
      }
      const float tokens = TokenCount(mask, b, l);
      for (int64_t j = 0; j < p; ++j) o[j] = o[j] / tokens;
    }
  });
}

void MeanTokenAttentionGrad(const float* dOut, Mask mask, float* da, int64_t batch, int64_t l, int64_t p) {
  ParallelFor(batch, batch * l * p, kMinParallelElements, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float tokens = TokenCount(mask, b, l);
      for (int64_t t = 0; t < l; ++t) {
        const float m = mask.at(b * l + t);
        float* row = da + (b * l + t) * p;
        for (int64_t j = 0; j < p; ++j) row[j] = (dOut[b * p + j] / tokens) * m;
      }
    }
  });
}

namespace {

// Per row b: the hit mass Σ_p ā_p·t_p (ā the mean token attention) and whether it has a target.
void GroundingRows(const float* a, Mask mask, const float* targets, int64_t batch, int64_t l, int64_t p, float* hit,
                   bool* counted) {
  float* mean = Scratch(0, static_cast<size_t>(batch * p));
  MeanTokenAttention(a, mask, mean, batch, l, p);
  for (int64_t b = 0; b < batch; ++b) {
    float h = 0, t = 0;
    for (int64_t j = 0; j < p; ++j) {
      h += mean[b * p + j] * targets[b * p + j];
      t += targets[b * p + j];
    }
    hit[b] = h;
    counted[b] = t > 0;
  }
}

}  // namespace

float GroundingLoss(const float* a, Mask mask, const float* targets, int64_t batch, int64_t l, int64_t p) {
  float* hit = Scratch(1, static_cast<size_t>(batch));
  bool* counted = reinterpret_cast<bool*>(Scratch(2, static_cast<size_t>(batch)));
  GroundingRows(a, mask, targets, batch, l, p, hit, counted);
  float total = 0, rows = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (!counted[b]) continue;
    total += -std::log(hit[b] + 1e-6f);
    rows += 1;
  }
  return total / std::max(rows, 1.0f);
}

void GroundingLossGrad(float dLoss, const float* a, Mask mask, const float* targets, float* da, int64_t batch, int64_t l,
                       int64_t p) {
  float* hit = Scratch(1, static_cast<size_t>(batch));
  bool* counted = reinterpret_cast<bool*>(Scratch(2, static_cast<size_t>(batch)));
  GroundingRows(a, mask, targets, batch, l, p, hit, counted);
  float rows = 0;
  for (int64_t b = 0; b < batch; ++b) rows += counted[b] ? 1.0f : 0.0f;
  float* dMean = Scratch(3, static_cast<size_t>(batch * p));
  for (int64_t b = 0; b < batch; ++b) {
    const float dHit = counted[b] ? -(dLoss / std::max(rows, 1.0f)) / (hit[b] + 1e-6f) : 0.0f;
    for (int64_t j = 0; j < p; ++j) dMean[b * p + j] = dHit * targets[b * p + j];
  }
  MeanTokenAttentionGrad(dMean, mask, da, batch, l, p);
}

}  // namespace autoui
