// Small inline numerics shared by the kernels: a counter-based dropout mask and a vectorisable exp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace autoui {

// Hot element-wise loops get an AVX2 clone beside the baseline one, picked once at load
// (target_clones): the addon is built for any CPU of its architecture, not -march=native. The
// clones compute the same bits (no FMA contraction: -ffp-contract=off, and no reordered sums).
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define AUTOUI_VECTORIZE __attribute__((target_clones("avx2", "default")))
#else
#define AUTOUI_VECTORIZE
#endif

// Dropout mask element i for (rate, seed): keep with probability 1 − rate, kept values scaled by
// 1/(1 − rate) (rounded to float first, as tf.dropout's float32 tensors do). Counter-based: any
// thread computes any element, the backward pass recomputes the forward mask instead of storing
// it, and the bits never depend on how work is split. The mixer is MurmurHash3's finaliser keyed
// twice by a SplitMix64 of the seed (32-bit multiplies, so it vectorises); dropout needs
// independence, not cryptography. Element indices are below 2^31 (the addon's size limit).
class DropoutMask {
 public:
  DropoutMask(double rate, uint32_t seed) : active_(rate > 0) {
    uint64_t z = static_cast<uint64_t>(seed) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    k1_ = static_cast<uint32_t>(z);
    k2_ = static_cast<uint32_t>(z >> 32);
    const double t = std::ldexp(rate, 32);
    threshold_ = t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
    scale_ = 1.0f / static_cast<float>(1.0 - rate);
  }

  bool active() const { return active_; }

  // The factor element i is multiplied by: 0 or 1/(1 − rate); 1 when dropout is off (threshold 0).
  // Branch-free, and loops should hold the mask by value: then its keys stay in registers and the
  // loop vectorises (through a reference they might alias the float outputs).
  float operator()(uint32_t i) const {
    uint32_t x = i ^ k1_;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x ^= k2_;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return x >= threshold_ ? scale_ : 0.0f;
  }

 private:
  bool active_;
  uint32_t k1_ = 0, k2_ = 0, threshold_ = 0;
  float scale_ = 1.0f;
};

// e^x in float, within ~2 ulp (Cephes expf: Cody–Waite reduction and a degree-6 polynomial).
// Written out because libm's expf is a call per element that does not vectorise: branch-free,
// rounding by the 1.5·2^23 trick instead of floor. Exactly 0 below −87.3, so masked scores
// (−1e9) get exactly zero weight as with the JS kernels; +inf-like above 88.7.
inline float ExpF(float x) {
  const float lo = -87.33654f, hi = 88.72283f;
  const float zero = x < lo ? 0.0f : 1.0f;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return (y * scale) * zero;
}

// HF gelu_new, x·σ(2·√(2/π)·(x + 0.044715·x³)), and its derivative.
constexpr float kGeluC = 0.7978845608028654f;  // √(2/π)

inline float Sigmoid(float z) { return 1.0f / (1.0f + ExpF(-z)); }

inline float GeluSigmoid(float x) { return Sigmoid((x + 0.044715f * (x * (x * x))) * (2.0f * kGeluC)); }

inline float GeluNew(float x) { return x * GeluSigmoid(x); }

// d gelu_new / dx given s = GeluSigmoid(x).
inline float GeluNewGrad(float x, float s) {
  return s + x * s * (1.0f - s) * (2.0f * kGeluC) * (1.0f + 3.0f * 0.044715f * x * x);
}

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

// Σ x[i] in float over 8 interleaved partial sums.
inline float Sum(const float* x, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += x[i + l];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += x[i];
  return s;
}

// Row softmax in place, as the JS kernels compute it: e^{x − max} / Σ.
AUTOUI_VECTORIZE void SoftmaxInPlace(float* row, int64_t n);

// e^{x − max} into out and returns Σ (the softmax's denominator).
AUTOUI_VECTORIZE float ExpShifted(const float* x, float max, float* out, int64_t n);

}  // namespace autoui
