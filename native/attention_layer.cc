// The whole T5 attention sub-layer (projections, attention, output projection) in one call each
// way: the four products and their gradients run back to back on BLAS with no tensor
// round-trips, and the input gradient of q, k and v is accumulated in place (beta = 1) instead of
// being summed by separate ops.
#include "gemm.h"
#include "kernels.h"
#include "pool.h"

namespace autoui {
namespace {

// Scratch slots of this file on the calling thread; attention.cc uses 0–3 inside Attention*.
constexpr int kSlotDCtx = 8, kSlotDq = 9, kSlotDk = 10, kSlotDv = 11;

}  // namespace

void AttentionLayer(const float* x, const float* src, const AttentionWeights& w, const AttentionLayerOut& out, int64_t d,
                    const AttentionShape& s, DropoutSpec drop) {
  const int64_t width = s.heads * s.dk, nq = s.batch * s.lq, nk = s.batch * s.lk;
  const float* kv = src ? src : x;
  Gemm(false, true, nq, width, d, 1.0f, x, w.q, 0.0f, out.q);
  Gemm(false, true, nk, width, d, 1.0f, kv, w.k, 0.0f, out.k);
  Gemm(false, true, nk, width, d, 1.0f, kv, w.v, 0.0f, out.v);
  Attention(out.q, out.k, out.v, out.ctx, out.probs, s, drop);
  Gemm(false, true, nq, d, width, 1.0f, out.ctx, w.o, 0.0f, out.y);
}

void AttentionLayerGrad(const float* dy, const float* x, const float* src, const AttentionWeights& w,
                        const AttentionLayerSaved& saved, const AttentionLayerGrads& g, int64_t d, const AttentionShape& s,
                        DropoutSpec drop) {
  const int64_t width = s.heads * s.dk, nq = s.batch * s.lq, nk = s.batch * s.lk;
  const float* kv = src ? src : x;
  float* dctx = Scratch(kSlotDCtx, static_cast<size_t>(nq * width));
  float* dq = Scratch(kSlotDq, static_cast<size_t>(nq * width));
  float* dk = Scratch(kSlotDk, static_cast<size_t>(nk * width));
  float* dv = Scratch(kSlotDv, static_cast<size_t>(nk * width));
  Gemm(true, false, d, width, nq, 1.0f, dy, saved.ctx, 0.0f, g.do_);  // dWo = dyᵀ·ctx
  Gemm(false, false, nq, width, d, 1.0f, dy, w.o, 0.0f, dctx);        // dctx = dy·Wo
  AttentionGrad(dctx, nullptr, saved.q, saved.k, saved.v, saved.probs, dq, dk, dv, g.dTable, s, drop);
  Gemm(true, false, width, d, nq, 1.0f, dq, x, 0.0f, g.dq);   // dWq = dqᵀ·x
  Gemm(true, false, width, d, nk, 1.0f, dk, kv, 0.0f, g.dk);  // dWk = dkᵀ·src
  Gemm(true, false, width, d, nk, 1.0f, dv, kv, 0.0f, g.dv);  // dWv = dvᵀ·src
  Gemm(false, false, nq, d, width, 1.0f, dq, w.q, 0.0f, g.dx);  // dx = dq·Wq
  float* dsrc = src ? g.dsrc : g.dx;
  Gemm(false, false, nk, d, width, 1.0f, dk, w.k, src ? 0.0f : 1.0f, dsrc);  // (+)= dk·Wk
  Gemm(false, false, nk, d, width, 1.0f, dv, w.v, 1.0f, dsrc);              // += dv·Wv
}

}  // namespace autoui
