// Multi-head attention, forward and backward, all heads of a batch in one call: the per-head
// products are small (T5: dk = 64, lengths of tens), so the (batch, head) pairs are spread over
// the threads, each product a single-threaded GEMM read straight from the row layout (leading
// dimension heads·dk): no head split/merge transposes. Scores, bias, mask, softmax and dropout
// happen in between on one [lq, lk] block at a time, which stays in cache.
#include <algorithm>
#include <cmath>

#include "gemm.h"
#include "kernels.h"
#include "mathfun.h"
#include "pool.h"

namespace autoui {
namespace {

// Additive score for masked positions, as the JS model's MASKED: large but finite.
constexpr float kMasked = -1e9f;
// Below this many flops the pairs run on the caller alone.
constexpr double kMinParallelFlops = 1.0e6;

struct Pair {
  int64_t b, h;
  const float* q;  // [lq, dk] at leading dimension heads·dk
  const float* k;
  const float* v;
  int64_t ld;
};

Pair PairAt(const AttentionShape& s, int64_t index, const float* q, const float* k, const float* v) {
  const int64_t b = index / s.heads, h = index % s.heads, ld = s.heads * s.dk;
  return {b, h, q + b * s.lq * ld + h * s.dk, k + b * s.lk * ld + h * s.dk, v ? v + b * s.lk * ld + h * s.dk : nullptr, ld};
}

GemmArgs Product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc) {
  GemmArgs g;
  g.transA = ta;
  g.transB = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.c = c;
  g.ldc = ldc;
  return g;
}

// The bias of row i of head h of batch row b into bias[lk]: position + key mask + causal,
// summed in that order (as the JS model adds its bias tensors) before the scores get it.
AUTOUI_VECTORIZE void RowBias(const AttentionShape& s, int64_t b, int64_t h, int64_t i, float* bias) {
  const int64_t lk = s.lk;
  if (s.table) {
    const int32_t* buckets = s.buckets + i * lk;
    const float* table = s.table + h;
    for (int64_t j = 0; j < lk; ++j) bias[j] = table[static_cast<int64_t>(buckets[j]) * s.heads];
  } else {
    std::fill(bias, bias + lk, 0.0f);
  }
  if (s.keyMask.i32) {
    const int32_t* m = s.keyMask.i32 + b * lk;
    for (int64_t j = 0; j < lk; ++j) bias[j] += (1.0f - static_cast<float>(m[j])) * kMasked;
  } else if (s.keyMask.f32) {
    const float* m = s.keyMask.f32 + b * lk;
    for (int64_t j = 0; j < lk; ++j) bias[j] += (1.0f - m[j]) * kMasked;
  }
  if (s.causal)
    for (int64_t j = std::max<int64_t>(0, i + s.queryOffset + 1); j < lk; ++j) bias[j] += kMasked;
}

AUTOUI_VECTORIZE void AddRow(float* row, const float* bias, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = row[j] + bias[j];
}

// Row i of the scores in place → softmax probabilities; `bias` is scratch [lk].
void SoftmaxRow(const AttentionShape& s, const Pair& p, int64_t i, float* row, float* bias) {
  if (s.table || s.keyMask.present() || s.causal) {
    RowBias(s, p.b, p.h, i, bias);
    AddRow(row, bias, s.lk);
  }
  SoftmaxInPlace(row, s.lk);
}

AUTOUI_VECTORIZE void DropBlock(const float* P, float* W, int64_t count, uint32_t offset, DropoutMask mask) {
  for (int64_t e = 0; e < count; ++e) W[e] = P[e] * mask(offset + static_cast<uint32_t>(e));
}

// dS = P ⊙ (dP − rowsum(dP ⊙ P)) over an [lq, lk] block.
AUTOUI_VECTORIZE void SoftmaxGradBlock(const float* P, const float* dP, float* dS, int64_t lq, int64_t lk) {
  for (int64_t i = 0; i < lq; ++i) {
    const float* Pi = P + i * lk;
    const float* dPi = dP + i * lk;
    const float dot = Dot(dPi, Pi, lk);
    for (int64_t j = 0; j < lk; ++j) dS[i * lk + j] = Pi[j] * (dPi[j] - dot);
  }
}

}  // namespace

void Attention(const float* q, const float* k, const float* v, float* out, float* probs, const AttentionShape& s,
               DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  const int64_t pairs = s.batch * s.heads, block = s.lq * s.lk;
  const double flops = 4.0 * pairs * block * s.dk;
  ParallelFor(pairs, flops, kMinParallelFlops, [&](int64_t from, int64_t to) {
    float* dropped = Scratch(0, static_cast<size_t>(block));
    float* bias = Scratch(1, static_cast<size_t>(s.lk));
    for (int64_t index = from; index < to; ++index) {
      const Pair p = PairAt(s, index, q, k, v);
      float* P = probs + index * block;
      GemmSerial(Product(false, true, s.lq, s.lk, s.dk, s.scale, p.q, p.ld, p.k, p.ld, P, s.lk));
      for (int64_t i = 0; i < s.lq; ++i) SoftmaxRow(s, p, i, P + i * s.lk, bias);
      if (!v) continue;
      const float* W = P;
      if (mask.active()) {
        DropBlock(P, dropped, block, static_cast<uint32_t>(index * block), mask);
        W = dropped;
      }
      float* o = out + p.b * s.lq * p.ld + p.h * s.dk;
      GemmSerial(Product(false, false, s.lq, s.dk, s.lk, 1.0f, W, s.lk, p.v, p.ld, o, p.ld));
    }
  });
}

void AttentionGrad(const float* dOut, const float* dProbs, const float* q, const float* k, const float* v, const float* probs,
                   float* dq, float* dk, float* dv, float* dTable, const AttentionShape& s, DropoutSpec drop) {
  const DropoutMask mask(drop.rate, drop.seed);
  const int64_t pairs = s.batch * s.heads, block = s.lq * s.lk;
  // dS of every pair is kept when the position table needs its batch sum afterwards.
  float* allDs = dTable ? Scratch(0, static_cast<size_t>(pairs * block)) : nullptr;
  const double flops = 8.0 * pairs * block * s.dk;
  ParallelFor(pairs, flops, kMinParallelFlops, [&](int64_t from, int64_t to) {
    float* dP = Scratch(1, static_cast<size_t>(block));
    float* W = Scratch(2, static_cast<size_t>(block));
    float* ownDs = Scratch(3, static_cast<size_t>(block));
    for (int64_t index = from; index < to; ++index) {
      const Pair p = PairAt(s, index, q, k, v);
      const float* P = probs + index * block;
      float* dS = allDs ? allDs + index * block : ownDs;
      if (dOut) {
        const float* dO = dOut + p.b * s.lq * p.ld + p.h * s.dk;
        GemmSerial(Product(false, true, s.lq, s.lk, s.dk, 1.0f, dO, p.ld, p.v, p.ld, dP, s.lk));  // dW = dO·vᵀ
        DropBlock(P, W, block, static_cast<uint32_t>(index * block), mask);
        float* dV = dv + p.b * s.lk * p.ld + p.h * s.dk;
        GemmSerial(Product(true, false, s.lk, s.dk, s.lq, 1.0f, W, s.lk, dO, p.ld, dV, p.ld));  // dv = Wᵀ·dO
        if (mask.active()) DropBlock(dP, dP, block, static_cast<uint32_t>(index * block), mask);
      } else {
        std::copy(dProbs + index * block, dProbs + (index + 1) * block, dP);
      }
      SoftmaxGradBlock(P, dP, dS, s.lq, s.lk);
      float* dQ = dq + p.b * s.lq * p.ld + p.h * s.dk;
      float* dK = dk + p.b * s.lk * p.ld + p.h * s.dk;
      GemmSerial(Product(false, false, s.lq, s.dk, s.lk, s.scale, dS, s.lk, p.k, p.ld, dQ, p.ld));  // dq = dS·k
      GemmSerial(Product(true, false, s.lk, s.dk, s.lq, s.scale, dS, s.lk, p.q, p.ld, dK, p.ld));  // dk = dSᵀ·q
    }
  });
  if (!dTable) return;
  // dTable[bucket, h] = Σ_(i,j) in that bucket of Σ_b dS[b, h, i, j]: each head's column by one
  // thread, in a fixed order.
  ParallelFor(s.heads, static_cast<double>(pairs) * block, 32768, [&](int64_t h0, int64_t h1) {
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t bucket = 0; bucket < s.numBuckets; ++bucket) dTable[bucket * s.heads + h] = 0.0f;
      for (int64_t e = 0; e < block; ++e) {
        float sum = 0;
        for (int64_t b = 0; b < s.batch; ++b) sum += allDs[(b * s.heads + h) * block + e];
        dTable[static_cast<int64_t>(s.buckets[e]) * s.heads + h] += sum;
      }
    }
  });
}

}  // namespace autoui
