// The fused training kernels, as plain C++ over float arrays (addon.cc checks the arrays and
// shapes that come from JavaScript before calling any of these). Every kernel writes only its
// outputs, splits its work over the addon's threads (pool.h), and computes each output element
// in an order that does not depend on the split, so results are identical run to run.
#pragma once

#include <cstdint>

namespace autoui {

// A 0/1 mask over keys or tokens, int32 or float32 as the tensor came ([B, L]); absent if null.
struct Mask {
  const int32_t* i32 = nullptr;
  const float* f32 = nullptr;
  bool present() const { return i32 != nullptr || f32 != nullptr; }
  float at(int64_t i) const { return i32 ? static_cast<float>(i32[i]) : f32[i]; }
};

struct DropoutSpec {
  double rate = 0;
  uint32_t seed = 0;
};

// ---- element-wise (elementwise.cc) ----
// y = x ⊙ dropout mask.
void Dropout(const float* x, float* y, int64_t n, DropoutSpec drop);
// y = x + h ⊙ dropout mask (a residual connection).
void AddDropout(const float* x, const float* h, float* y, int64_t n, DropoutSpec drop);
// T5LayerNorm on rows x [rows, d]: y = x·r·w with r = (mean(x²) + ε)^-½.
void RmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps);
// With n = x·r and g = dy·w: dx = r·(g − n·mean(g·n)), dw = Σ_rows dy·n.
void RmsNormGrad(const float* dy, const float* x, const float* w, float* dx, float* dw, int64_t rows, int64_t d, float eps);

// ---- tfjs element-wise ops with broadcasting, and sums over an axis (broadcast.cc) ----
enum class BinaryOp { kAdd, kSub, kMul };
// An output [dims[0], dims[1], dims[2]] (row-major); element (i, j, k) reads a[i·a[0] + j·a[1] +
// k·a[2]] and likewise b, with a[2] and b[2] each 0 (broadcast) or 1.
struct BroadcastShape {
  int64_t dims[3];
  int64_t a[3];
  int64_t b[3];
};
void Binary(BinaryOp op, const float* a, const float* b, float* y, const BroadcastShape& s);
// y[o, i] = Σ_m x[o, m, i] for x [outer, mid, inner], each sum from 0 in order of m.
void SumAxis(const float* x, float* y, int64_t outer, int64_t mid, int64_t inner);

// ---- optimiser (elementwise.cc) ----
struct AdamWStep {
  float lr, beta1, beta2, bc1, bc2, eps, keep, gradScale;
};
// The outputs must not overlap the inputs or each other.
void AdamW(const float* p, const float* g, const float* m, const float* v, float* pOut, float* mOut, float* vOut, int64_t n,
           const AdamWStep& s);
// Σ x² in double, summed in fixed chunks so the result does not depend on the thread count.
double SumSquares(const float* x, int64_t n);

// ---- feed-forward (feed_forward.cc) ----
// T5 DenseReluDense (wi1 == nullptr: y = wo·drop(relu(wi·x))) or DenseGatedActDense
// (y = wo·drop(gelu_new(wi0·x) ⊙ wi1·x)) on rows x [n, d]; weights in HF layout
// (wi0, wi1 [dff, d], wo [d, dff]). Also writes the pre-activations a = x·wi0ᵀ and b = x·wi1ᵀ
// [n, dff] that the backward pass needs (b only when gated).
struct FeedForwardShape {
  int64_t n, d, dff;
};
void FeedForward(const float* x, const float* wi0, const float* wi1, const float* wo, float* y, float* a, float* b,
                 const FeedForwardShape& s, DropoutSpec drop);
void FeedForwardGrad(const float* dy, const float* x, const float* wi0, const float* wi1, const float* wo, const float* a,
                     const float* b, float* dx, float* dwi0, float* dwi1, float* dwo, const FeedForwardShape& s,
                     DropoutSpec drop);

// ---- attention (attention.cc) ----
// Multi-head attention on row layouts: q [batch·lq, heads·dk], k and v [batch·lk, heads·dk]
// (head h in columns h·dk … h·dk + dk − 1), out likewise [batch·lq, heads·dk].
// Scores s = scale·q·kᵀ + (position bias + key-mask bias + causal bias), probs = softmax(s)
// [batch, heads, lq, lk]; out = dropout(probs)·v. Without v, only probs are computed.
struct AttentionShape {
  int64_t batch, lq, lk, heads, dk;
  float scale = 1.0f;
  // Position bias table[bucket·heads + h] for buckets[i·lk + j] (T5's relative attention), or none.
  const float* table = nullptr;
  const int32_t* buckets = nullptr;
  int64_t numBuckets = 0;
  Mask keyMask;        // [batch, lk]: 0 adds −1e9
  bool causal = false;  // key j > query i + queryOffset adds −1e9
  int64_t queryOffset = 0;
};
void Attention(const float* q, const float* k, const float* v, float* out, float* probs, const AttentionShape& s,
               DropoutSpec drop);
// Given dOut (with v) or dProbs (without): dq, dk, dv and, with a table, dTable [numBuckets, heads].
void AttentionGrad(const float* dOut, const float* dProbs, const float* q, const float* k, const float* v, const float* probs,
                   float* dq, float* dk, float* dv, float* dTable, const AttentionShape& s, DropoutSpec drop);

// ---- attention sub-layer with its projections (attention_layer.cc) ----
// T5Attention as HF runs it, on rows: q = x·Wqᵀ, k = src·Wkᵀ, v = src·Wvᵀ (src = x for
// self-attention), ctx = Attention(q, k, v), y = ctx·Woᵀ; Wq/Wk/Wv [heads·dk, d], Wo [d, heads·dk].
// Writes q, k, v, ctx and probs for the backward pass.
struct AttentionWeights {
  const float *q, *k, *v, *o;
};
struct AttentionLayerOut {
  float *y, *q, *k, *v, *ctx, *probs;
};
void AttentionLayer(const float* x, const float* src, const AttentionWeights& w, const AttentionLayerOut& out, int64_t d,
                    const AttentionShape& s, DropoutSpec drop);
struct AttentionLayerGrads {
  float *dx, *dsrc, *dq, *dk, *dv, *do_, *dTable;  // dsrc null for self-attention (its part goes to dx)
};
struct AttentionLayerSaved {
  const float *q, *k, *v, *ctx, *probs;
};
void AttentionLayerGrad(const float* dy, const float* x, const float* src, const AttentionWeights& w,
                        const AttentionLayerSaved& saved, const AttentionLayerGrads& g, int64_t d, const AttentionShape& s,
                        DropoutSpec drop);

// ---- linear layer (elementwise.cc) ----
// y[n, out] = x[n, in]·Wᵀ (+ bias).
void Linear(const float* x, const float* w, const float* bias, float* y, int64_t n, int64_t in, int64_t out);
// The parameters' gradients: dW = dyᵀ·x, dbias = Σ_rows dy (when bias gradients are wanted). The input's,
// dy·W, is a plain product, left to the matmul kernel so that it runs only when the input needs it.
void LinearGrad(const float* dy, const float* x, float* dw, float* dbias, int64_t n, int64_t in, int64_t out);

// ---- losses and lookups (losses.cc) ----
// Per-token softmax cross-entropy of logits [n, vocab]: loss = log Σ e^z − z[label] (0 where
// label == ignoreIndex).
void CrossEntropy(const float* logits, const int32_t* labels, float* loss, int64_t n, int64_t vocab, int32_t ignoreIndex);
// dlogits = (softmax − onehot(label))·dloss per row (0 for ignored rows).
void CrossEntropyGrad(const float* dloss, const float* logits, const int32_t* labels, float* dlogits, int64_t n, int64_t vocab,
                      int32_t ignoreIndex);
// y [n, d] = dropout(table[ids]); ids must lie in [0, vocab) (checked by the caller).
void Embedding(const float* table, const int32_t* ids, float* y, int64_t n, int64_t d, DropoutSpec drop);
// dtable [vocab, d] = Σ over rows with that id of dropout(dy) (duplicates add up).
void EmbeddingGrad(const float* dy, const int32_t* ids, float* dtable, int64_t n, int64_t d, int64_t vocab, DropoutSpec drop);
// ā [batch, p] = Σ_t m_t·a[b, t, p] / max(Σ_t m_t, 1) for attention a [batch, l, p] and mask m [batch, l].
void MeanTokenAttention(const float* a, Mask mask, float* out, int64_t batch, int64_t l, int64_t p);
void MeanTokenAttentionGrad(const float* dOut, Mask mask, float* da, int64_t batch, int64_t l, int64_t p);
// L = mean over rows with a target of −log(Σ_p ā_p·t_p + 1e-6) (0 when no row has one), and
// da = ∂L/∂a·dLoss.
float GroundingLoss(const float* a, Mask mask, const float* targets, int64_t batch, int64_t l, int64_t p);
void GroundingLossGrad(float dLoss, const float* a, Mask mask, const float* targets, float* da, int64_t batch, int64_t l,
                       int64_t p);

}  // namespace autoui
