// N-API entry points of autoui_blas: each reads its arguments (typed arrays over the memory of
// TensorFlow.js tensors, used in place), checks that every array covers the shape it is given —
// no kernel may touch memory outside them, whatever JavaScript passes — and runs one kernel.
// See src/native/blas.ts for the JavaScript-side contract of every function.
//
// Written against plain N-API (node_api.h ships with Node's headers) rather than node-addon-api:
// a handful of flat entry points do not justify a build-time npm dependency.
#include <node_api.h>
#include <cblas.h>

#include <string>

#include "gemm.h"
#include "kernels.h"
#include "napi_args.h"
#include "pool.h"

namespace autoui {
namespace {

using Floats = Array<float>;
using Ints = Array<int32_t>;

// True when the array holds at least `count` elements (counts are products of int32 dims).
bool Covers(size_t length, double count) { return static_cast<double>(length) >= count; }

DropoutSpec Drop(Args& a, size_t rateAt, size_t seedAt) {
  DropoutSpec d;
  d.rate = a.Number(rateAt, "rate");
  d.seed = a.Seed(seedAt, "seed");
  a.Require(d.rate >= 0 && d.rate < 1, "rate must be in [0, 1)");
  return d;
}

napi_value Sgemm(napi_env env, napi_callback_info info) {
  Args a(env, info, 11, "sgemm(a, b, c, batch, batchA, batchB, m, n, k, transA, transB)");
  const Floats x = a.Floats(0, "a"), y = a.Floats(1, "b"), c = a.Floats(2, "c");
  const int64_t batch = a.Int(3, "batch"), batchA = a.Int(4, "batchA"), batchB = a.Int(5, "batchB");
  const int64_t m = a.Int(6, "m"), n = a.Int(7, "n"), k = a.Int(8, "k");
  const bool transA = a.Bool(9, "transA"), transB = a.Bool(10, "transB");
  if (!a.ok()) return nullptr;
  if (!a.Require(batchA >= 1 && batchB >= 1 && batch >= std::max(batchA, batchB) && Covers(x.length, 1.0 * batchA * m * k) &&
                     Covers(y.length, 1.0 * batchB * k * n) && Covers(c.length, 1.0 * batch * m * n),
                 "array lengths do not cover the given shapes")) {
    return nullptr;
  }
  BatchedGemm(x.data, y.data, c.data, batch, batchA, batchB, m, n, k, transA, transB);
  return nullptr;
}

napi_value AdamWEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 15, "adamw(p, g, m, v, pOut, mOut, vOut, lr, beta1, beta2, bc1, bc2, epsilon, decay, gradScale)");
  static const char* kArrays[] = {"p", "g", "m", "v", "pOut", "mOut", "vOut"};
  Floats x[7];
  for (int i = 0; i < 7; ++i) x[i] = a.Floats(i, kArrays[i]);
  static const char* kNumbers[] = {"lr", "beta1", "beta2", "bc1", "bc2", "epsilon", "decay", "gradScale"};
  double h[8];
  for (int i = 0; i < 8; ++i) h[i] = a.Number(7 + i, kNumbers[i]);
  if (!a.ok()) return nullptr;
  for (int i = 1; i < 7; ++i)
    if (!a.Require(x[i].length == x[0].length, "all arrays must have the same length")) return nullptr;
  // The kernel reads and writes through non-aliasing pointers.
  const auto overlap = [](const Floats& u, const Floats& w) { return u.data < w.data + w.length && w.data < u.data + u.length; };
  for (int o = 4; o < 7; ++o)
    for (int i = 0; i < o; ++i)
      if (!a.Require(!overlap(x[o], x[i]), "outputs must not overlap the inputs or each other")) return nullptr;
  const AdamWStep s{static_cast<float>(h[0]), static_cast<float>(h[1]), static_cast<float>(h[2]),
                    static_cast<float>(h[3]), static_cast<float>(h[4]), static_cast<float>(h[5]),
                    static_cast<float>(1.0 - h[6]), static_cast<float>(h[7])};
  AdamW(x[0].data, x[1].data, x[2].data, x[3].data, x[4].data, x[5].data, x[6].data, static_cast<int64_t>(x[0].length), s);
  return nullptr;
}

napi_value SumSquaresEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 1, "sumSquares(x)");
  const Floats x = a.Floats(0, "x");
  if (!a.ok()) return nullptr;
  napi_value out;
  napi_create_double(env, SumSquares(x.data, static_cast<int64_t>(x.length)), &out);
  return out;
}

napi_value DropoutEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 4, "dropout(x, y, rate, seed)");
  const Floats x = a.Floats(0, "x"), y = a.Floats(1, "y");
  const DropoutSpec d = Drop(a, 2, 3);
  if (!a.ok() || !a.Require(x.length == y.length, "x and y must have the same length")) return nullptr;
  Dropout(x.data, y.data, static_cast<int64_t>(x.length), d);
  return nullptr;
}

napi_value AddDropoutEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "addDropout(x, h, y, rate, seed)");
  const Floats x = a.Floats(0, "x"), h = a.Floats(1, "h"), y = a.Floats(2, "y");
  const DropoutSpec d = Drop(a, 3, 4);
  if (!a.ok() || !a.Require(x.length == y.length && h.length == y.length, "x, h and y must have the same length")) return nullptr;
  AddDropout(x.data, h.data, y.data, static_cast<int64_t>(x.length), d);
  return nullptr;
}

// Rows of width w.length, all of x covered: the shape of a norm over the last axis.
bool RowsOf(Args& a, const Floats& x, const Floats& w, int64_t* rows) {
  if (!a.Require(w.length > 0 && x.length % w.length == 0, "x must hold whole rows of w.length elements")) return false;
  *rows = static_cast<int64_t>(x.length / w.length);
  return true;
}

napi_value RmsNormEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 4, "rmsNorm(x, w, y, eps)");
  const Floats x = a.Floats(0, "x"), w = a.Floats(1, "w"), y = a.Floats(2, "y");
  const double eps = a.Number(3, "eps");
  int64_t rows = 0;
  if (!a.ok() || !RowsOf(a, x, w, &rows) || !a.Require(y.length == x.length, "y must have x's length")) return nullptr;
  RmsNorm(x.data, w.data, y.data, rows, static_cast<int64_t>(w.length), static_cast<float>(eps));
  return nullptr;
}

napi_value RmsNormGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "rmsNormGrad(dy, x, w, dx, dw, eps)");
  const Floats dy = a.Floats(0, "dy"), x = a.Floats(1, "x"), w = a.Floats(2, "w"), dx = a.Floats(3, "dx"), dw = a.Floats(4, "dw");
  const double eps = a.Number(5, "eps");
  int64_t rows = 0;
  if (!a.ok() || !RowsOf(a, x, w, &rows) ||
      !a.Require(dy.length == x.length && dx.length == x.length && dw.length == w.length, "dy and dx must have x's length, dw w's")) {
    return nullptr;
  }
  RmsNormGrad(dy.data, x.data, w.data, dx.data, dw.data, rows, static_cast<int64_t>(w.length), static_cast<float>(eps));
  return nullptr;
}

bool CheckFeedForward(Args& a, const FeedForwardShape& s, const Floats& x, const Floats& wi0, const Floats& wi1, const Floats& wo,
                      const Floats& y, const Floats& pa, const Floats& pb) {
  const double n = static_cast<double>(s.n), d = static_cast<double>(s.d), dff = static_cast<double>(s.dff);
  return a.Require(bool(wi1) == bool(pb), "wi1 and b must be both given (gated) or both null") &&
         a.Require(x.length == n * d && y.length == n * d && wi0.length == dff * d && wo.length == d * dff &&
                       pa.length == n * dff && (!wi1 || (wi1.length == dff * d && pb.length == n * dff)),
                   "array lengths do not match n, d, dff");
}

napi_value FeedForwardEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 12, "feedForward(x, wi0, wi1, wo, y, a, b, n, d, dff, rate, seed)");
  const Floats x = a.Floats(0, "x"), wi0 = a.Floats(1, "wi0"), wi1 = a.Floats(2, "wi1", true), wo = a.Floats(3, "wo");
  const Floats y = a.Floats(4, "y"), pa = a.Floats(5, "a"), pb = a.Floats(6, "b", true);
  const FeedForwardShape s{a.Int(7, "n"), a.Int(8, "d"), a.Int(9, "dff")};
  const DropoutSpec d = Drop(a, 10, 11);
  if (!a.ok() || !CheckFeedForward(a, s, x, wi0, wi1, wo, y, pa, pb)) return nullptr;
  FeedForward(x.data, wi0.data, wi1.data, wo.data, y.data, pa.data, pb.data, s, d);
  return nullptr;
}

napi_value FeedForwardGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 16, "feedForwardGrad(dy, x, wi0, wi1, wo, a, b, dx, dwi0, dwi1, dwo, n, d, dff, rate, seed)");
  const Floats dy = a.Floats(0, "dy"), x = a.Floats(1, "x"), wi0 = a.Floats(2, "wi0"), wi1 = a.Floats(3, "wi1", true);
  const Floats wo = a.Floats(4, "wo"), pa = a.Floats(5, "a"), pb = a.Floats(6, "b", true), dx = a.Floats(7, "dx");
  const Floats dwi0 = a.Floats(8, "dwi0"), dwi1 = a.Floats(9, "dwi1", true), dwo = a.Floats(10, "dwo");
  const FeedForwardShape s{a.Int(11, "n"), a.Int(12, "d"), a.Int(13, "dff")};
  const DropoutSpec d = Drop(a, 14, 15);
  if (!a.ok() || !CheckFeedForward(a, s, x, wi0, wi1, wo, dy, pa, pb) ||
      !a.Require(dx.length == x.length && dwi0.length == wi0.length && dwo.length == wo.length &&
                     bool(dwi1) == bool(wi1) && (!wi1 || dwi1.length == wi1.length),
                 "gradient lengths must match their inputs'")) {
    return nullptr;
  }
  FeedForwardGrad(dy.data, x.data, wi0.data, wi1.data, wo.data, pa.data, pb.data, dx.data, dwi0.data, dwi1.data, dwo.data, s, d);
  return nullptr;
}

// Shape arguments shared by attention and attentionGrad, from `at` on:
// batch, lq, lk, heads, dk, scale.
AttentionShape ReadAttentionShape(Args& a, size_t at) {
  AttentionShape s{};
  s.batch = a.Int(at, "batch");
  s.lq = a.Int(at + 1, "lq");
  s.lk = a.Int(at + 2, "lk");
  s.heads = a.Int(at + 3, "heads");
  s.dk = a.Int(at + 4, "dk");
  s.scale = static_cast<float>(a.Number(at + 5, "scale"));
  return s;
}

bool CheckBuckets(Args& a, const AttentionShape& s, const Ints& buckets) {
  if (!a.Require(buckets.length == static_cast<size_t>(s.lq * s.lk), "buckets must hold lq·lk entries")) return false;
  for (size_t e = 0; e < buckets.length; ++e) {
    if (buckets.data[e] < 0 || buckets.data[e] >= s.numBuckets) {
      return a.Require(false, "bucket " + std::to_string(buckets.data[e]) + " outside the table's " + std::to_string(s.numBuckets) + " rows");
    }
  }
  return true;
}

bool CheckAttention(Args& a, const AttentionShape& s, const Floats& q, const Floats& k, const Floats& v, const Floats& probs) {
  const double width = static_cast<double>(s.heads) * s.dk;
  return a.Require(s.batch > 0 && s.lq > 0 && s.lk > 0 && s.heads > 0 && s.dk > 0, "batch, lq, lk, heads and dk must be positive") &&
         a.Require(q.length == s.batch * s.lq * width && k.length == s.batch * s.lk * width &&
                       (!v || v.length == k.length) && probs.length == 1.0 * s.batch * s.heads * s.lq * s.lk,
                   "array lengths do not match batch, lq, lk, heads, dk");
}

// Reads the bias arguments (table, buckets, keyMask) at `at`, at+1, at+2 into s; checks them.
bool ReadBias(Args& a, size_t at, AttentionShape* s) {
  const Floats table = a.Floats(at, "table", true);
  const Ints buckets = a.Ints(at + 1, "buckets", true);
  size_t maskLength = 0;
  s->keyMask = a.MaskArg(at + 2, "keyMask", &maskLength);
  if (!a.ok() || !a.Require(bool(table) == bool(buckets), "table and buckets must be both given or both null") ||
      !a.Require(!s->keyMask.present() || maskLength == static_cast<size_t>(s->batch * s->lk), "keyMask must hold batch·lk entries")) {
    return false;
  }
  if (!table) return true;
  if (!a.Require(table.length % s->heads == 0, "table must be [numBuckets, heads]")) return false;
  s->table = table.data;
  s->buckets = buckets.data;
  s->numBuckets = static_cast<int64_t>(table.length) / s->heads;
  return CheckBuckets(a, *s, buckets);
}

napi_value AttentionEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 18, "attention(q, k, v, out, probs, table, buckets, keyMask, batch, lq, lk, heads, dk, scale, causal, queryOffset, rate, seed)");
  const Floats q = a.Floats(0, "q"), k = a.Floats(1, "k"), v = a.Floats(2, "v", true), out = a.Floats(3, "out", true);
  const Floats probs = a.Floats(4, "probs");
  AttentionShape s = ReadAttentionShape(a, 8);
  s.causal = a.Bool(14, "causal");
  s.queryOffset = a.Int(15, "queryOffset");
  const DropoutSpec d = Drop(a, 16, 17);
  if (!a.ok() || !CheckAttention(a, s, q, k, v, probs) ||
      !a.Require(bool(v) == bool(out) && (!out || out.length == q.length), "v and out must be both given (out like q) or both null") ||
      !ReadBias(a, 5, &s)) {
    return nullptr;
  }
  Attention(q.data, k.data, v.data, out.data, probs.data, s, d);
  return nullptr;
}

napi_value AttentionGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 19, "attentionGrad(dOut, dProbs, q, k, v, probs, dq, dk, dv, dTable, buckets, batch, lq, lk, heads, dk, scale, rate, seed)");
  const Floats dOut = a.Floats(0, "dOut", true), dProbs = a.Floats(1, "dProbs", true), q = a.Floats(2, "q"), k = a.Floats(3, "k");
  const Floats v = a.Floats(4, "v", true), probs = a.Floats(5, "probs"), dq = a.Floats(6, "dq"), dk = a.Floats(7, "dk");
  const Floats dv = a.Floats(8, "dv", true), dTable = a.Floats(9, "dTable", true);
  const Ints buckets = a.Ints(10, "buckets", true);
  AttentionShape s = ReadAttentionShape(a, 11);
  const DropoutSpec d = Drop(a, 17, 18);
  if (!a.ok() || !CheckAttention(a, s, q, k, v, probs) ||
      !a.Require(bool(dOut) != bool(dProbs), "exactly one of dOut and dProbs must be given") ||
      !a.Require(bool(dOut) == bool(v) && bool(v) == bool(dv), "dOut, v and dv go together") ||
      !a.Require((!dOut || dOut.length == q.length) && (!dProbs || dProbs.length == probs.length) && dq.length == q.length &&
                     dk.length == k.length && (!dv || dv.length == k.length),
                 "gradient lengths must match their inputs'") ||
      !a.Require(bool(dTable) == bool(buckets), "dTable and buckets must be both given or both null")) {
    return nullptr;
  }
  if (dTable) {
    if (!a.Require(dTable.length % s.heads == 0, "dTable must be [numBuckets, heads]")) return nullptr;
    s.buckets = buckets.data;
    s.numBuckets = static_cast<int64_t>(dTable.length) / s.heads;
    if (!CheckBuckets(a, s, buckets)) return nullptr;
  }
  AttentionGrad(dOut.data, dProbs.data, q.data, k.data, v.data, probs.data, dq.data, dk.data, dv.data, dTable.data, s, d);
  return nullptr;
}

// x [batch·lq, d], src [batch·lk, d] or null (self), four weights; shared checks of the layer entries.
bool CheckLayer(Args& a, const AttentionShape& s, int64_t d, const Floats& x, const Floats& src, const Floats* w) {
  const double width = static_cast<double>(s.heads) * s.dk;
  return a.Require(s.batch > 0 && s.lq > 0 && s.lk > 0 && s.heads > 0 && s.dk > 0 && d > 0, "batch, lq, lk, heads, dk and d must be positive") &&
         a.Require(x.length == 1.0 * s.batch * s.lq * d && (src ? src.length == 1.0 * s.batch * s.lk * d : s.lq == s.lk) &&
                       w[0].length == width * d && w[1].length == width * d && w[2].length == width * d && w[3].length == width * d,
                   "array lengths do not match batch, lq, lk, heads, dk, d");
}

napi_value AttentionLayerEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 25, "attentionLayer(x, src, wq, wk, wv, wo, y, q, k, v, ctx, probs, table, buckets, keyMask, batch, lq, lk, heads, dk, d, causal, queryOffset, rate, seed)");
  const Floats x = a.Floats(0, "x"), src = a.Floats(1, "src", true);
  const Floats w[4] = {a.Floats(2, "wq"), a.Floats(3, "wk"), a.Floats(4, "wv"), a.Floats(5, "wo")};
  const Floats y = a.Floats(6, "y"), q = a.Floats(7, "q"), k = a.Floats(8, "k"), v = a.Floats(9, "v"), ctx = a.Floats(10, "ctx"), probs = a.Floats(11, "probs");
  AttentionShape s{};
  s.batch = a.Int(15, "batch");
  s.lq = a.Int(16, "lq");
  s.lk = a.Int(17, "lk");
  s.heads = a.Int(18, "heads");
  s.dk = a.Int(19, "dk");
  const int64_t d = a.Int(20, "d");
  s.causal = a.Bool(21, "causal");
  s.queryOffset = a.Int(22, "queryOffset");
  const DropoutSpec drop = Drop(a, 23, 24);
  if (!a.ok() || !CheckLayer(a, s, d, x, src, w) || !CheckAttention(a, s, q, k, v, probs) ||
      !a.Require(y.length == x.length && ctx.length == q.length, "y must be like x and ctx like q") || !ReadBias(a, 12, &s)) {
    return nullptr;
  }
  AttentionLayer(x.data, src.data, {w[0].data, w[1].data, w[2].data, w[3].data}, {y.data, q.data, k.data, v.data, ctx.data, probs.data}, d, s, drop);
  return nullptr;
}

napi_value AttentionLayerGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 28, "attentionLayerGrad(dy, x, src, wq, wk, wv, wo, q, k, v, ctx, probs, dx, dsrc, dwq, dwk, dwv, dwo, dTable, buckets, batch, lq, lk, heads, dk, d, rate, seed)");
  const Floats dy = a.Floats(0, "dy"), x = a.Floats(1, "x"), src = a.Floats(2, "src", true);
  const Floats w[4] = {a.Floats(3, "wq"), a.Floats(4, "wk"), a.Floats(5, "wv"), a.Floats(6, "wo")};
  const Floats q = a.Floats(7, "q"), k = a.Floats(8, "k"), v = a.Floats(9, "v"), ctx = a.Floats(10, "ctx"), probs = a.Floats(11, "probs");
  const Floats dx = a.Floats(12, "dx"), dsrc = a.Floats(13, "dsrc", true);
  const Floats dw[4] = {a.Floats(14, "dwq"), a.Floats(15, "dwk"), a.Floats(16, "dwv"), a.Floats(17, "dwo")};
  const Floats dTable = a.Floats(18, "dTable", true);
  const Ints buckets = a.Ints(19, "buckets", true);
  AttentionShape s{};
  s.batch = a.Int(20, "batch");
  s.lq = a.Int(21, "lq");
  s.lk = a.Int(22, "lk");
  s.heads = a.Int(23, "heads");
  s.dk = a.Int(24, "dk");
  const int64_t d = a.Int(25, "d");
  const DropoutSpec drop = Drop(a, 26, 27);
  if (!a.ok() || !CheckLayer(a, s, d, x, src, w) || !CheckAttention(a, s, q, k, v, probs) ||
      !a.Require(dy.length == x.length && dx.length == x.length && ctx.length == q.length && bool(dsrc) == bool(src) &&
                     (!src || dsrc.length == src.length) && dw[0].length == w[0].length && dw[1].length == w[1].length &&
                     dw[2].length == w[2].length && dw[3].length == w[3].length,
                 "gradient lengths must match their inputs'") ||
      !a.Require(bool(dTable) == bool(buckets), "dTable and buckets must be both given or both null")) {
    return nullptr;
  }
  if (dTable) {
    if (!a.Require(dTable.length % s.heads == 0, "dTable must be [numBuckets, heads]")) return nullptr;
    s.buckets = buckets.data;
    s.numBuckets = static_cast<int64_t>(dTable.length) / s.heads;
    if (!CheckBuckets(a, s, buckets)) return nullptr;
  }
  AttentionLayerGrad(dy.data, x.data, src.data, {w[0].data, w[1].data, w[2].data, w[3].data},
                     {q.data, k.data, v.data, ctx.data, probs.data},
                     {dx.data, dsrc.data, dw[0].data, dw[1].data, dw[2].data, dw[3].data, dTable.data}, d, s, drop);
  return nullptr;
}

// x [n, in], w [out, in]: n from x's length.
bool LinearShape(Args& a, const Floats& x, const Floats& w, int64_t in, int64_t* n, int64_t* out) {
  if (!a.Require(in > 0 && x.length % in == 0 && w.length % in == 0 && w.length > 0, "x must be [n, in] and w [out, in]")) return false;
  *n = static_cast<int64_t>(x.length) / in;
  *out = static_cast<int64_t>(w.length) / in;
  return true;
}

napi_value LinearEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "linear(x, w, bias, y, in)");
  const Floats x = a.Floats(0, "x"), w = a.Floats(1, "w"), bias = a.Floats(2, "bias", true), y = a.Floats(3, "y");
  const int64_t in = a.Int(4, "in");
  int64_t n = 0, out = 0;
  if (!a.ok() || !LinearShape(a, x, w, in, &n, &out) ||
      !a.Require(y.length == static_cast<size_t>(n * out) && (!bias || bias.length == static_cast<size_t>(out)), "y must be [n, out] and bias [out]")) {
    return nullptr;
  }
  Linear(x.data, w.data, bias.data, y.data, n, in, out);
  return nullptr;
}

napi_value LinearGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "linearGrad(dy, x, dw, dbias, in)");
  const Floats dy = a.Floats(0, "dy"), x = a.Floats(1, "x"), dw = a.Floats(2, "dw"), dbias = a.Floats(3, "dbias", true);
  const int64_t in = a.Int(4, "in");
  int64_t n = 0, out = 0;
  if (!a.ok() || !LinearShape(a, x, dw, in, &n, &out) ||
      !a.Require(dy.length == static_cast<size_t>(n * out) && (!dbias || dbias.length == static_cast<size_t>(out)),
                 "gradient lengths must match their inputs'")) {
    return nullptr;
  }
  LinearGrad(dy.data, x.data, dw.data, dbias.data, n, in, out);
  return nullptr;
}

bool CheckLabels(Args& a, const Ints& labels, int64_t vocab, int32_t ignoreIndex) {
  for (size_t r = 0; r < labels.length; ++r) {
    const int32_t l = labels.data[r];
    if (l != ignoreIndex && (l < 0 || l >= vocab)) {
      return a.Require(false, "label " + std::to_string(l) + " at row " + std::to_string(r) + " is outside [0, " + std::to_string(vocab) + ")");
    }
  }
  return true;
}

napi_value CrossEntropyEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 4, "crossEntropy(logits, labels, loss, ignoreIndex)");
  const Floats logits = a.Floats(0, "logits"), loss = a.Floats(2, "loss");
  const Ints labels = a.Ints(1, "labels");
  const int32_t ignore = a.SignedInt(3, "ignoreIndex");
  const size_t n = labels.length;
  if (!a.ok() || !a.Require(n > 0 && logits.length % n == 0 && logits.length > 0 && loss.length == n,
                            "logits must be [n, vocab] for n labels, loss [n]")) {
    return nullptr;
  }
  const int64_t vocab = static_cast<int64_t>(logits.length / n);
  if (!CheckLabels(a, labels, vocab, ignore)) return nullptr;
  CrossEntropy(logits.data, labels.data, loss.data, static_cast<int64_t>(n), vocab, ignore);
  return nullptr;
}

napi_value CrossEntropyGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "crossEntropyGrad(dloss, logits, labels, dlogits, ignoreIndex)");
  const Floats dloss = a.Floats(0, "dloss"), logits = a.Floats(1, "logits"), dlogits = a.Floats(3, "dlogits");
  const Ints labels = a.Ints(2, "labels");
  const int32_t ignore = a.SignedInt(4, "ignoreIndex");
  const size_t n = labels.length;
  if (!a.ok() || !a.Require(n > 0 && logits.length % n == 0 && logits.length > 0 && dloss.length == n && dlogits.length == logits.length,
                            "logits and dlogits must be [n, vocab] for n labels, dloss [n]")) {
    return nullptr;
  }
  const int64_t vocab = static_cast<int64_t>(logits.length / n);
  if (!CheckLabels(a, labels, vocab, ignore)) return nullptr;
  CrossEntropyGrad(dloss.data, logits.data, labels.data, dlogits.data, static_cast<int64_t>(n), vocab, ignore);
  return nullptr;
}

// ids index rows of a [vocab, d] table; rows out of range are an error, not a read out of bounds.
bool CheckIds(Args& a, const Ints& ids, int64_t vocab) {
  for (size_t r = 0; r < ids.length; ++r) {
    if (ids.data[r] < 0 || ids.data[r] >= vocab) {
      return a.Require(false, "id " + std::to_string(ids.data[r]) + " at position " + std::to_string(r) + " is outside [0, " + std::to_string(vocab) + ")");
    }
  }
  return true;
}

napi_value EmbeddingEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "embedding(table, ids, y, d, rate, seed)");
  const Floats table = a.Floats(0, "table"), y = a.Floats(2, "y");
  const Ints ids = a.Ints(1, "ids");
  const int64_t d = a.Int(3, "d");
  const DropoutSpec drop = Drop(a, 4, 5);
  if (!a.ok() || !a.Require(d > 0 && table.length % d == 0 && y.length == ids.length * d, "table must be [vocab, d] and y [ids.length, d]") ||
      !CheckIds(a, ids, static_cast<int64_t>(table.length) / d)) {
    return nullptr;
  }
  Embedding(table.data, ids.data, y.data, static_cast<int64_t>(ids.length), d, drop);
  return nullptr;
}

napi_value EmbeddingGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "embeddingGrad(dy, ids, dtable, d, rate, seed)");
  const Floats dy = a.Floats(0, "dy"), dtable = a.Floats(2, "dtable");
  const Ints ids = a.Ints(1, "ids");
  const int64_t d = a.Int(3, "d");
  const DropoutSpec drop = Drop(a, 4, 5);
  if (!a.ok() || !a.Require(d > 0 && dtable.length % d == 0 && dy.length == ids.length * d, "dtable must be [vocab, d] and dy [ids.length, d]")) {
    return nullptr;
  }
  const int64_t vocab = static_cast<int64_t>(dtable.length) / d;
  if (!CheckIds(a, ids, vocab)) return nullptr;
  EmbeddingGrad(dy.data, ids.data, dtable.data, static_cast<int64_t>(ids.length), d, vocab, drop);
  return nullptr;
}

// Reads (a, mask, …, batch, l, p) as the grounding functions take them and checks the lengths.
bool GroundingShape(Args& a, const Floats& att, size_t maskLength, const Mask& mask, int64_t batch, int64_t l, int64_t p) {
  return a.Require(mask.present(), "mask must be given") &&
         a.Require(att.length == 1.0 * batch * l * p && maskLength == static_cast<size_t>(batch * l),
                   "attention must be [batch, l, p] and mask [batch, l]");
}

napi_value MeanTokenAttentionEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "meanTokenAttention(a, mask, out, batch, l, p)");
  const Floats att = a.Floats(0, "a"), out = a.Floats(2, "out");
  size_t maskLength = 0;
  const Mask mask = a.MaskArg(1, "mask", &maskLength);
  const int64_t batch = a.Int(3, "batch"), l = a.Int(4, "l"), p = a.Int(5, "p");
  if (!a.ok() || !GroundingShape(a, att, maskLength, mask, batch, l, p) || !a.Require(out.length == static_cast<size_t>(batch * p), "out must be [batch, p]")) {
    return nullptr;
  }
  MeanTokenAttention(att.data, mask, out.data, batch, l, p);
  return nullptr;
}

napi_value MeanTokenAttentionGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "meanTokenAttentionGrad(dOut, mask, da, batch, l, p)");
  const Floats dOut = a.Floats(0, "dOut"), da = a.Floats(2, "da");
  size_t maskLength = 0;
  const Mask mask = a.MaskArg(1, "mask", &maskLength);
  const int64_t batch = a.Int(3, "batch"), l = a.Int(4, "l"), p = a.Int(5, "p");
  if (!a.ok() || !GroundingShape(a, da, maskLength, mask, batch, l, p) || !a.Require(dOut.length == static_cast<size_t>(batch * p), "dOut must be [batch, p]")) {
    return nullptr;
  }
  MeanTokenAttentionGrad(dOut.data, mask, da.data, batch, l, p);
  return nullptr;
}

napi_value GroundingLossEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "groundingLoss(a, mask, targets, batch, l, p)");
  const Floats att = a.Floats(0, "a"), targets = a.Floats(2, "targets");
  size_t maskLength = 0;
  const Mask mask = a.MaskArg(1, "mask", &maskLength);
  const int64_t batch = a.Int(3, "batch"), l = a.Int(4, "l"), p = a.Int(5, "p");
  if (!a.ok() || !GroundingShape(a, att, maskLength, mask, batch, l, p) || !a.Require(targets.length == static_cast<size_t>(batch * p), "targets must be [batch, p]")) {
    return nullptr;
  }
  napi_value out;
  napi_create_double(env, GroundingLoss(att.data, mask, targets.data, batch, l, p), &out);
  return out;
}

napi_value GroundingLossGradEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 8, "groundingLossGrad(dLoss, a, mask, targets, da, batch, l, p)");
  const double dLoss = a.Number(0, "dLoss");
  const Floats att = a.Floats(1, "a"), targets = a.Floats(3, "targets"), da = a.Floats(4, "da");
  size_t maskLength = 0;
  const Mask mask = a.MaskArg(2, "mask", &maskLength);
  const int64_t batch = a.Int(5, "batch"), l = a.Int(6, "l"), p = a.Int(7, "p");
  if (!a.ok() || !GroundingShape(a, att, maskLength, mask, batch, l, p) ||
      !a.Require(targets.length == static_cast<size_t>(batch * p) && da.length == att.length, "targets must be [batch, p] and da like a")) {
    return nullptr;
  }
  GroundingLossGrad(static_cast<float>(dLoss), att.data, mask, targets.data, da.data, batch, l, p);
  return nullptr;
}

napi_value SetThreadsEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 1, "setThreads(threads)");
  const int64_t n = a.Int(0, "threads");
  if (!a.ok() || !a.Require(n >= 1, "threads must be at least 1")) return nullptr;
  SetThreads(static_cast<int>(n));
  return nullptr;
}

napi_value ThreadsEntry(napi_env env, napi_callback_info) {
  napi_value out;
  napi_create_int32(env, Threads(), &out);
  return out;
}

// The largest index + 1 an operand of `s` reads (its strides over the output's dims).
int64_t Extent(const int64_t dims[3], const int64_t strides[3]) {
  int64_t last = 0;
  for (int i = 0; i < 3; ++i) last += (dims[i] - 1) * strides[i];
  return last + 1;
}

napi_value BinaryEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 13, "binary(op, a, b, y, n0, n1, n2, a0, a1, a2, b0, b1, b2)");
  const int64_t op = a.Int(0, "op");
  const Floats x = a.Floats(1, "a"), w = a.Floats(2, "b"), y = a.Floats(3, "y");
  BroadcastShape s{};
  for (int i = 0; i < 3; ++i) {
    s.dims[i] = a.Int(4 + i, "n");
    s.a[i] = a.Int(7 + i, "a stride");
    s.b[i] = a.Int(10 + i, "b stride");
  }
  if (!a.ok() || !a.Require(op <= 2, "op must be 0 (add), 1 (sub) or 2 (mul)") ||
      !a.Require(s.a[2] <= 1 && s.b[2] <= 1, "the last strides must be 0 or 1")) return nullptr;
  const int64_t total = s.dims[0] * s.dims[1] * s.dims[2];
  if (!a.Require(static_cast<int64_t>(y.length) == total, "y must hold n0·n1·n2 elements")) return nullptr;
  if (total == 0) return nullptr;
  if (!a.Require(static_cast<int64_t>(x.length) >= Extent(s.dims, s.a) && static_cast<int64_t>(w.length) >= Extent(s.dims, s.b),
                 "a and b must cover their strides")) return nullptr;
  Binary(static_cast<BinaryOp>(op), x.data, w.data, y.data, s);
  return nullptr;
}

napi_value SumAxisEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "sumAxis(x, y, outer, mid, inner)");
  const Floats x = a.Floats(0, "x"), y = a.Floats(1, "y");
  const int64_t outer = a.Int(2, "outer"), mid = a.Int(3, "mid"), inner = a.Int(4, "inner");
  if (!a.ok() || !a.Require(static_cast<int64_t>(x.length) == outer * mid * inner, "x must hold outer·mid·inner elements") ||
      !a.Require(static_cast<int64_t>(y.length) == outer * inner, "y must hold outer·inner elements")) return nullptr;
  SumAxis(x.data, y.data, outer, mid, inner);
  return nullptr;
}

napi_value ConfigEntry(napi_env env, napi_callback_info) {
  napi_value out;
  const std::string s = openblas_get_config();
  napi_create_string_utf8(env, s.c_str(), s.size(), &out);
  return out;
}

napi_value Init(napi_env env, napi_value exports) {
  SetThreads(Threads());
  struct Entry {
    const char* name;
    napi_callback fn;
  };
  static const Entry kEntries[] = {
      {"sgemm", Sgemm},
      {"adamw", AdamWEntry},
      {"sumSquares", SumSquaresEntry},
      {"dropout", DropoutEntry},
      {"addDropout", AddDropoutEntry},
      {"rmsNorm", RmsNormEntry},
      {"rmsNormGrad", RmsNormGradEntry},
      {"feedForward", FeedForwardEntry},
      {"feedForwardGrad", FeedForwardGradEntry},
      {"attention", AttentionEntry},
      {"attentionGrad", AttentionGradEntry},
      {"attentionLayer", AttentionLayerEntry},
      {"attentionLayerGrad", AttentionLayerGradEntry},
      {"linear", LinearEntry},
      {"linearGrad", LinearGradEntry},
      {"crossEntropy", CrossEntropyEntry},
      {"crossEntropyGrad", CrossEntropyGradEntry},
      {"embedding", EmbeddingEntry},
      {"embeddingGrad", EmbeddingGradEntry},
      {"meanTokenAttention", MeanTokenAttentionEntry},
      {"meanTokenAttentionGrad", MeanTokenAttentionGradEntry},
      {"groundingLoss", GroundingLossEntry},
      {"groundingLossGrad", GroundingLossGradEntry},
      {"binary", BinaryEntry},
      {"sumAxis", SumAxisEntry},
      {"setThreads", SetThreadsEntry},
      {"threads", ThreadsEntry},
      {"config", ConfigEntry},
  };
  for (const Entry& e : kEntries) {
    napi_property_descriptor p = {e.name, nullptr, e.fn, nullptr, nullptr, nullptr, napi_enumerable, nullptr};
    napi_define_properties(env, exports, 1, &p);
  }
  // Join the helpers before the process (or a worker thread using us) tears down.
  napi_add_env_cleanup_hook(env, [](void*) { StopThreads(); }, nullptr);
  return exports;
}

}  // namespace
}  // namespace autoui

NAPI_MODULE(NODE_GYP_MODULE_NAME, autoui::Init)
