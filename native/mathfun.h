// Small inline numerics shared by the kernels: a counter-based dropout mask and a vectorisable exp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace autoui {

// Dropout mask element i for (rate, seed): keep with probability 1 − rate, kept values scaled by
// 1/(1 − rate) (rounded to float first, as tf.dropout's float32 tensors do). Counter-based: any
// thread computes any element, the backward pass recomputes the forward mask instead of storing
// it, and the bits never depend on how work is split. The mixer is MurmurHash3's finaliser keyed
// twice by a SplitMix64 of the seed; dropout needs independence, not cryptography.
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

  // The factor element i is multiplied by: 0 or 1/(1 − rate); 1 when dropout is off.
  float operator()(uint64_t i) const {
    if (!active_) return 1.0f;
    return Bits(static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32) * 0x27D4EB2Fu) >= threshold_ ? scale_ : 0.0f;
  }

 private:
  uint32_t Bits(uint32_t x) const {
    x ^= k1_;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x ^= k2_;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return x;
  }

  bool active_;
  uint32_t k1_ = 0, k2_ = 0, threshold_ = 0;
  float scale_ = 1.0f;
};

// e^x in float, within ~2 ulp (Cephes expf: Cody–Waite reduction and a degree-6 polynomial).
// Written out because libm's expf does not vectorise; exact 0 below −87.3 so that masked scores
// (−1e9) get exactly zero weight, as with the JS kernels.
inline float ExpF(float x) {
  const float lo = -87.33654f, hi = 88.72283f;
  const bool under = x < lo;
  x = x > hi ? hi : (x < lo ? lo : x);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
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
  return under ? 0.0f : y * scale;
}

// HF gelu_new, x·σ(2·√(2/π)·(x + 0.044715·x³)), and its derivative.
constexpr float kGeluC = 0.7978845608028654f;  // √(2/π)

inline float Sigmoid(float z) { return 1.0f / (1.0f + ExpF(-z)); }

inline float GeluNew(float x) { return x * Sigmoid((x + 0.044715f * (x * (x * x))) * (2.0f * kGeluC)); }

inline float GeluNewGrad(float x) {
  const float s = Sigmoid((x + 0.044715f * (x * (x * x))) * (2.0f * kGeluC));
  return s + x * s * (1.0f - s) * (2.0f * kGeluC) * (1.0f + 3.0f * 0.044715f * x * x);
}

}  // namespace autoui
