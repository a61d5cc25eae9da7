// autoui_pixels: the built-in screen encoder (src/screen/vision/builtin.ts and builtin/) in C++: the
// linear shrink of a screen (reduce.ts) and the whole feature pass. V8 runs these loops an element
// at a time with bounds checks; here they are compiled, and `data prepare` spends most of its CPU in
// them. The results are the JavaScript's to the bit (tests/pixels.test.ts holds them to it): the
// shrink is integer arithmetic, and the feature pass is transcribed operation by operation (below).
// Its own addon, apart from autoui_blas: it needs no OpenBLAS and no thread pool, and the encoder's
// worker threads load it, which must neither share the training kernels' pool nor stop it when they
// exit. src/screen/vision/builtin/native.ts states the JavaScript-side contract.
#include <node_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "napi_args.h"

namespace autoui {
namespace {

constexpr const char* kModule = "autoui_pixels";
// The shrink's taps per output pixel, its fixed-point shift and rounding term (reduce.ts).
constexpr int kTaps = 3;
constexpr int kShift = 12;
constexpr int kHalf = 1 << (kShift - 1);

// True when every index is in [0, limit).
bool InRange(const Array<int32_t>& index, int64_t limit) {
  return std::all_of(index.data, index.data + index.length, [limit](int32_t i) { return i >= 0 && i < limit; });
}

napi_value ReduceRowsEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 5, "reduceRows(src, rowBytes, index, weight, out)", kModule);
  const Array<uint8_t> src = a.Bytes(0, "src");
  const int64_t rowBytes = a.Int(1, "rowBytes");
  const Array<int32_t> index = a.Ints(2, "index"), weight = a.Ints(3, "weight");
  const Array<uint8_t> out = a.Bytes(4, "out");
  if (!a.ok()) return nullptr;
  const int64_t rows = static_cast<int64_t>(index.length) / kTaps;
  if (!a.Require(rowBytes > 0 && index.length % kTaps == 0 && weight.length == index.length, "index and weight must hold 3 taps per output row") ||
      !a.Require(static_cast<int64_t>(out.length) == rows * rowBytes, "out must hold (index.length / 3)·rowBytes bytes") ||
      !a.Require(InRange(index, static_cast<int64_t>(src.length) / rowBytes), "every index must be a row of src")) return nullptr;
  for (int64_t o = 0; o < rows; ++o) {
    const int32_t* k = index.data + o * kTaps;
    const int32_t* w = weight.data + o * kTaps;
    const uint8_t* r0 = src.data + k[0] * rowBytes;
    const uint8_t* r1 = src.data + k[1] * rowBytes;
    const uint8_t* r2 = src.data + k[2] * rowBytes;
    uint8_t* dst = out.data + o * rowBytes;
    const int32_t w0 = w[0], w1 = w[1], w2 = w[2];
    for (int64_t b = 0; b < rowBytes; ++b) dst[b] = static_cast<uint8_t>((kHalf + w0 * r0[b] + w1 * r1[b] + w2 * r2[b]) >> kShift);
  }
  return nullptr;
}

napi_value ReduceColumnsEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 6, "reduceColumns(src, width, height, index, weight, out)", kModule);
  const Array<uint8_t> src = a.Bytes(0, "src");
  const int64_t width = a.Int(1, "width"), height = a.Int(2, "height");
  const Array<int32_t> index = a.Ints(3, "index"), weight = a.Ints(4, "weight");
  const Array<uint8_t> out = a.Bytes(5, "out");
  if (!a.ok()) return nullptr;
  const int64_t cols = static_cast<int64_t>(index.length) / kTaps;
  if (!a.Require(index.length % kTaps == 0 && weight.length == index.length, "index and weight must hold 3 taps per output column") ||
      !a.Require(static_cast<int64_t>(src.length) >= width * height * 3, "src must hold width·height RGB pixels") ||
      !a.Require(static_cast<int64_t>(out.length) == cols * height * 3, "out must hold (index.length / 3)·height RGB pixels") ||
      !a.Require(InRange(index, width), "every index must be a column of src")) return nullptr;
  uint8_t* q = out.data;
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = src.data + y * width * 3;
    for (int64_t c = 0; c < cols; ++c) {
      const int32_t* k = index.data + c * kTaps;
      const int32_t* w = weight.data + c * kTaps;
      const uint8_t *p0 = row + k[0] * 3, *p1 = row + k[1] * 3, *p2 = row + k[2] * 3;
      for (int ch = 0; ch < 3; ++ch) *q++ = static_cast<uint8_t>((kHalf + w[0] * p0[ch] + w[1] * p1[ch] + w[2] * p2[ch]) >> kShift);
    }
  }
  return nullptr;
}

// ---- The feature pass (builtin.ts builtinFeatures and the builtin/ modules it calls) ----------
// A transcription of the JavaScript: every JavaScript number is a double here, every Float32Array
// element a float, and each sum runs in the JavaScript's order (no FMA contraction: binding.gyp),
// so each feature rounds to the same float. Structure constants are the modules' own.

constexpr int kPatchPx = 8;          // geometry.ts PATCH_PX: colour-image pixels a patch side
constexpr int kFineScale = 2;        // geometry.ts FINE_SCALE
constexpr int kColourBins = 16;      // colour.ts COLOUR_BINS
constexpr int kMemberships = 4;      // colour.ts MAX_MEMBERSHIPS
constexpr int kLbpBins = 58;         // lbp.ts LBP_BINS
constexpr int kLbpThreshold = 11;    // lbp.ts THRESHOLD
constexpr int kPositionFeatures = 22;  // position.ts POSITION_FEATURES
constexpr double kSqrt1_2 = 0.7071067811865476;  // Math.SQRT1_2

// sparse_blocks.ts SparseBlocks: per-block histograms that know their non-zero bins.
class SparseBlocks {
 public:
  SparseBlocks(int width, int block) : width_(width), block_(block) {}

  void Reset(int64_t imageWidth, int64_t imageHeight) {
    for (size_t blk = 0; blk < counts_.size(); ++blk)
      for (int j = 0; j < counts_[blk]; ++j) values_[blk * width_ + nonzero_[blk * width_ + j]] = 0;
    imageWidth_ = imageWidth;
    imageHeight_ = imageHeight;
    blockCols_ = (imageWidth + block_ - 1) / block_;
    blockRows_ = (imageHeight + block_ - 1) / block_;
    const size_t used = static_cast<size_t>(blockRows_ * blockCols_);
    if (used > counts_.size()) {
      values_.assign(used * width_, 0.0);
      nonzero_.assign(used * width_, 0);
      counts_.assign(used, 0);
    }
    std::fill(counts_.begin(), counts_.end(), 0);
  }

  int64_t BlockOf(int64_t x, int64_t y) const { return (y / block_) * blockCols_ + x / block_; }

  void Add(int64_t blk, int k, double v) {
    const size_t i = blk * width_ + k;
    if (values_[i] == 0) nonzero_[blk * width_ + counts_[blk]++] = static_cast<uint16_t>(k);
    values_[i] += v;
  }

  // The window of patch (pr, pc), `per` blocks a patch side, summed into `into`; returns its pixels.
  int64_t SumWindow(int per, int64_t pr, int64_t pc, double* into) const {
    std::fill(into, into + width_, 0.0);
    const int64_t br0 = std::max<int64_t>(0, pr * per - per / 2), br1 = std::min<int64_t>(blockRows_, (pr + 1) * per + per / 2);
    const int64_t bc0 = std::max<int64_t>(0, pc * per - per / 2), bc1 = std::min<int64_t>(blockCols_, (pc + 1) * per + per / 2);
    for (int64_t br = br0; br < br1; ++br) {
      for (int64_t bc = bc0; bc < bc1; ++bc) {
        const size_t base = (br * blockCols_ + bc) * width_;
        for (int j = 0; j < counts_[br * blockCols_ + bc]; ++j) {
          const int k = nonzero_[base + j];
          into[k] += values_[base + k];
        }
      }
    }
    const auto span = [this](int64_t lo, int64_t hi, int64_t size) { return std::min<int64_t>(size, hi * block_) - lo * block_; };
    return span(br0, br1, imageHeight_) * span(bc0, bc1, imageWidth_);
  }

 private:
  int width_, block_;
  int64_t imageWidth_ = 0, imageHeight_ = 0, blockCols_ = 0, blockRows_ = 0;
  std::vector<double> values_;
  std::vector<uint16_t> nonzero_;
  std::vector<int> counts_;
};

// colour.ts's soft-bin table, lbp.ts's pattern bins and position.ts's codes, as JavaScript made them.
struct Tables {
  const uint8_t* lutBins;
  const float* lutWeights;
  const uint8_t* lutCounts;
  const int8_t* binOf;
  const float* positions;
};

// builtin.ts BUILTIN_LAYOUT: where each group starts in a patch vector, and the vector's width.
struct Layout {
  int luma, edges, stats, histogram, position, pairs, row, lbp, dim;
};

struct Patch {
  int64_t x0, x1, y0, y1, stride;
};

// The per-thread scratch of one feature pass (colour planes, grey copy, block histograms).
struct Scratch {
  std::vector<uint8_t> coarse, grey;
  std::vector<float> luma, o1, o2;
  std::vector<uint16_t> code;
  SparseBlocks pairs{kColourBins * kColourBins, kPatchPx / 2};
  SparseBlocks lbp{2 * kLbpBins, kPatchPx * kFineScale / 2};
};

// This thread's scratch (worker threads encode side by side). Taken once per pass: a thread_local
// named in the loops costs a TLS lookup at each use in a shared library.
[[gnu::noinline]] Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

// builtin.ts splitFine and colour.ts fillPlanes.
void Planes(const uint8_t* fine, int64_t width, int64_t height, Scratch& s) {
  const int64_t fw = width * kFineScale, n = width * height;
  for (int64_t i = 0, j = 0; i < fw * height * kFineScale; ++i, j += 3) s.grey[i] = static_cast<uint8_t>((54 * fine[j] + 183 * fine[j + 1] + 19 * fine[j + 2] + 128) >> 8);
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const int64_t a = ((2 * y) * fw + 2 * x) * 3, b = a + fw * 3, o = (y * width + x) * 3;
      for (int ch = 0; ch < 3; ++ch) s.coarse[o + ch] = static_cast<uint8_t>((fine[a + ch] + fine[a + 3 + ch] + fine[b + ch] + fine[b + 3 + ch] + 2) >> 2);
    }
  }
  const double inv = 1.0 / 255, invSqrt6 = 1 / std::sqrt(6.0);
  for (int64_t i = 0, j = 0; i < n; ++i, j += 3) {
    const int r = s.coarse[j], g = s.coarse[j + 1], b = s.coarse[j + 2];
    s.luma[i] = static_cast<float>((0.2126 * r + 0.7152 * g + 0.0722 * b) * inv);
    s.o1[i] = static_cast<float>((r - g) * inv * kSqrt1_2);
    s.o2[i] = static_cast<float>((r + g - 2 * b) * inv * invSqrt6);
    s.code[i] = static_cast<uint16_t>(((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3));
  }
}

// pairs.ts addPairs.
void AddPairs(SparseBlocks& blocks, const Tables& t, int p, int q, int64_t blk, int n) {
  const int po = p * kMemberships, qo = q * kMemberships;
  for (int a = 0; a < t.lutCounts[p]; ++a) {
    const int row = t.lutBins[po + a] * kColourBins;
    const double wp = n * static_cast<double>(t.lutWeights[po + a]);
    for (int b = 0; b < t.lutCounts[q]; ++b) blocks.Add(blk, row + t.lutBins[qo + b], wp * static_cast<double>(t.lutWeights[qo + b]));
  }
}

// pairs.ts accumulatePairs: each block's distinct (code, right or lower neighbour's code) pairs in
// order of first appearance, then expanded into colour bins in that order.
void AccumulatePairs(const uint16_t* code, int64_t width, int64_t height, const Tables& t, SparseBlocks& blocks) {
  constexpr int block = kPatchPx / 2;
  blocks.Reset(width, height);
  int32_t keys[2 * block * block], counts[2 * block * block];
  for (int64_t by = 0; by < height; by += block) {
    for (int64_t bx = 0; bx < width; bx += block) {
      int m = 0;
      const auto note = [&](int32_t key) {
        int j = m - 1;
        while (j >= 0 && keys[j] != key) --j;
        if (j >= 0) {
          ++counts[j];
        } else {
          keys[m] = key;
          counts[m++] = 1;
        }
      };
      const int64_t x1 = std::min(width, bx + block), y1 = std::min(height, by + block);
      const int64_t xRight = std::min(x1, width - 1);
      for (int64_t y = by; y < y1; ++y) {
        const uint16_t* row = code + y * width;
        for (int64_t x = bx; x < xRight; ++x) note((row[x] << 15) | row[x + 1]);
        if (y + 1 < height)
          for (int64_t x = bx; x < x1; ++x) note((row[x] << 15) | row[width + x]);
      }
      const int64_t blk = blocks.BlockOf(bx, by);
      for (int j = 0; j < m; ++j) AddPairs(blocks, t, keys[j] >> 15, keys[j] & 0x7fff, blk, counts[j]);
    }
  }
}

// lbp.ts accumulateLbp: each interior pixel's brighter and darker patterns counted into its block.
void AccumulateLbp(const uint8_t* grey, int64_t width, int64_t height, const int8_t* binOf, SparseBlocks& blocks) {
  constexpr int block = kPatchPx * kFineScale / 2;
  blocks.Reset(width, height);
  int32_t counts[2 * kLbpBins];
  for (int64_t by = 0; by < height; by += block) {
    for (int64_t bx = 0; bx < width; bx += block) {
      const int64_t y0 = std::max<int64_t>(1, by), y1 = std::min(height - 1, by + block);
      const int64_t x0 = std::max<int64_t>(1, bx), x1 = std::min(width - 1, bx + block);
      if (y0 >= y1 || x0 >= x1) continue;
      // A region (with its one-pixel rim) spanning less than the threshold has no pattern.
      int lo = 255, hi = 0;
      for (int64_t y = y0 - 1; y < y1 + 1; ++y) {
        for (int64_t x = x0 - 1; x < x1 + 1; ++x) {
          lo = std::min<int>(lo, grey[y * width + x]);
          hi = std::max<int>(hi, grey[y * width + x]);
        }
      }
      if (hi - lo < kLbpThreshold) continue;
      std::fill(counts, counts + 2 * kLbpBins, 0);
      for (int64_t y = y0; y < y1; ++y) {
        for (int64_t i = y * width + x0, end = y * width + x1; i < end; ++i) {
          // Neighbours clockwise from the top-left (bit k), brighter or darker by the threshold.
          const int c = grey[i], up = c + kLbpThreshold, down = c - kLbpThreshold;
          const int n[8] = {grey[i - width - 1], grey[i - width], grey[i - width + 1], grey[i + 1],
                            grey[i + width + 1], grey[i + width], grey[i + width - 1], grey[i - 1]};
          int u = 0, d = 0;
          for (int k = 0; k < 8; ++k) {
            u |= (n[k] >= up) << k;
            d |= (n[k] <= down) << k;
          }
          if (binOf[u] >= 0) ++counts[binOf[u]];
          if (binOf[d] >= 0) ++counts[kLbpBins + binOf[d]];
        }
      }
      // Whole counts at once: the same doubles as adding 1 per pattern.
      const int64_t blk = blocks.BlockOf(x0, y0);
      for (int k = 0; k < 2 * kLbpBins; ++k)
        if (counts[k] > 0) blocks.Add(blk, k, counts[k]);
    }
  }
}

// local.ts cellMeans.
void CellMeans(const Patch& px, int n, const float* plane, double* means) {
  double sums[16] = {0}, counts[16] = {0};
  const int side = kPatchPx / n;
  for (int64_t y = px.y0; y < px.y1; ++y) {
    const int64_t row = ((y - px.y0) / side) * n;
    for (int64_t x = px.x0; x < px.x1; ++x) {
      const int64_t c = row + (x - px.x0) / side;
      sums[c] += plane[y * px.stride + x];
      counts[c]++;
    }
  }
  const int64_t lastRow = (px.y1 - px.y0 + side - 1) / side - 1, lastCol = (px.x1 - px.x0 + side - 1) / side - 1;
  for (int cy = 0; cy < n; ++cy)
    for (int cx = 0; cx < n; ++cx) {
      const int64_t src = std::min<int64_t>(cy, lastRow) * n + std::min<int64_t>(cx, lastCol);
      means[cy * n + cx] = sums[src] / counts[src];
    }
}

// local.ts lumaChromaFeatures.
void LumaChroma(const Scratch& s, const Patch& px, float* out) {
  double mean[16];
  CellMeans(px, 4, s.luma.data(), mean);
  for (int k = 0; k < 16; ++k) out[k] = static_cast<float>(2 * mean[k] - 1);
  CellMeans(px, 2, s.o1.data(), mean);
  for (int k = 0; k < 4; ++k) out[16 + k] = static_cast<float>(mean[k]);
  CellMeans(px, 2, s.o2.data(), mean);
  for (int k = 0; k < 4; ++k) out[20 + k] = static_cast<float>(mean[k]);
}

// local.ts edgeFeatures; returns the chroma edge energy.
double Edges(const Scratch& s, const Patch& px, float* out) {
  const float *luma = s.luma.data(), *o1 = s.o1.data(), *o2 = s.o2.data();
  const int64_t W = px.stride;
  constexpr int half = kPatchPx / 2;
  double sum[16] = {0}, count[16] = {0}, chroma = 0, chromaN = 0;
  for (int64_t y = px.y0; y < px.y1; ++y) {
    for (int64_t x = px.x0; x < px.x1; ++x) {
      const int64_t i = y * W + x;
      const double l = luma[i];
      const int64_t e = ((y - px.y0) / half) * 8 + ((x - px.x0) / half) * 4;
      const bool right = x + 1 < px.x1, down = y + 1 < px.y1;
      if (right) {
        sum[e] += std::fabs(luma[i + 1] - l);
        count[e]++;
        chroma += std::fabs(static_cast<double>(o1[i + 1]) - o1[i]) + std::fabs(static_cast<double>(o2[i + 1]) - o2[i]);
        chromaN++;
      }
      if (down) {
        sum[e + 1] += std::fabs(luma[i + W] - l);
        count[e + 1]++;
        chroma += std::fabs(static_cast<double>(o1[i + W]) - o1[i]) + std::fabs(static_cast<double>(o2[i + W]) - o2[i]);
        chromaN++;
        if (right) sum[e + 2] += std::fabs(luma[i + W + 1] - l) * kSqrt1_2, count[e + 2]++;
        if (x > px.x0) sum[e + 3] += std::fabs(luma[i + W - 1] - l) * kSqrt1_2, count[e + 3]++;
      }
    }
  }
  for (int k = 0; k < 16; ++k) out[k] = count[k] > 0 ? static_cast<float>(std::sqrt(sum[k] / count[k])) : 0.0f;
  return chromaN > 0 ? std::sqrt(chroma / chromaN) : 0;
}

// local.ts statsFeatures.
void Stats(const Scratch& s, const Patch& px, double chromaEdge, float* out) {
  double n = 0, lSum = 0, lSq = 0, c1 = 0, c2 = 0, cSq = 0;
  double lMin = INFINITY, lMax = -INFINITY;
  for (int64_t y = px.y0; y < px.y1; ++y) {
    for (int64_t x = px.x0; x < px.x1; ++x) {
      const int64_t i = y * px.stride + x;
      const double l = s.luma[i], a = s.o1[i], b = s.o2[i];
      n++;
      lSum += l;
      lSq += l * l;
      c1 += a;
      c2 += b;
      cSq += a * a + b * b;
      if (l < lMin) lMin = l;
      if (l > lMax) lMax = l;
    }
  }
  const double lMean = lSum / n;
  out[0] = static_cast<float>(2 * std::sqrt(std::max(0.0, lSq / n - lMean * lMean)));
  out[1] = static_cast<float>(2 * std::sqrt(std::max(0.0, cSq / n - (c1 / n) * (c1 / n) - (c2 / n) * (c2 / n))));
  out[2] = static_cast<float>(chromaEdge);
  out[3] = static_cast<float>(lMax - lMin);
}

// local.ts histogramFeatures: float sums, as the JavaScript adds into its Float32Array.
void Histogram(const Scratch& s, const Tables& t, const Patch& px, float* out) {
  std::fill(out, out + kColourBins, 0.0f);
  double n = 0;
  for (int64_t y = px.y0; y < px.y1; ++y) {
    for (int64_t x = px.x0; x < px.x1; ++x) {
      const int code = s.code[y * px.stride + x];
      const int m = code * kMemberships;
      for (int a = 0; a < t.lutCounts[code]; ++a) {
        float& h = out[t.lutBins[m + a]];
        h = static_cast<float>(static_cast<double>(h) + t.lutWeights[m + a]);
      }
      n++;
    }
  }
  for (int k = 0; k < kColourBins; ++k) out[k] = static_cast<float>(out[k] / n);
}

// pairs.ts pairFeatures.
void PairFeatures(const SparseBlocks& blocks, int64_t pr, int64_t pc, float* out) {
  double window[kColourBins * kColourBins];
  const double inv = 1.0 / blocks.SumWindow(2, pr, pc, window);
  int k = 0;
  for (int a = 0; a < kColourBins; ++a)
    for (int b = a; b < kColourBins; ++b) {
      const double count = a == b ? window[a * kColourBins + a] : window[a * kColourBins + b] + window[b * kColourBins + a];
      out[k++] = static_cast<float>(std::sqrt(count * inv));
    }
}

// lbp.ts lbpFeatures.
void LbpFeatures(const SparseBlocks& blocks, int64_t pr, int64_t pc, float* out) {
  double window[2 * kLbpBins];
  const double inv = 1.0 / blocks.SumWindow(2, pr, pc, window);
  for (int k = 0; k < 2 * kLbpBins; ++k) out[k] = static_cast<float>(std::sqrt(window[k] * inv));
}

// row.ts rowFeatures for grid row r.
void RowFeatures(float* out, int64_t r, int64_t cols, int64_t gridCols, const Layout& L) {
  const auto base = [&](int64_t c) { return out + (r * gridCols + c) * L.dim; };
  float running[kColourBins];
  std::fill(running, running + kColourBins, 0.0f);
  for (int64_t c = 0; c < cols; ++c) {
    std::copy(running, running + kColourBins, base(c) + L.row);
    for (int k = 0; k < kColourBins; ++k) running[k] = std::max(running[k], base(c)[L.histogram + k]);
  }
  std::fill(running, running + kColourBins, 0.0f);
  for (int64_t c = cols - 1; c >= 0; --c) {
    std::copy(running, running + kColourBins, base(c) + L.row + kColourBins);
    for (int k = 0; k < kColourBins; ++k) running[k] = std::max(running[k], base(c)[L.histogram + k]);
  }
  double edgeMean[4] = {0, 0, 0, 0};
  for (int64_t c = 0; c < cols; ++c)
    for (int q = 0; q < 16; ++q) edgeMean[q % 4] += base(c)[L.edges + q] / static_cast<double>(4 * cols);
  for (int64_t c = 0; c < cols; ++c)
    for (int k = 0; k < 4; ++k) base(c)[L.row + 2 * kColourBins + k] = static_cast<float>(edgeMean[k]);
}

// builtin.ts builtinFeatures(fine, geometry) into `out` (zeros on entry: padding patches stay 0).
napi_value BuiltinFeaturesEntry(napi_env env, napi_callback_info info) {
  Args a(env, info, 13, "builtinFeatures(fine, width, height, rows, cols, gridCols, layout, lutBins, lutWeights, lutCounts, binOf, positions, out)", kModule);
  const Array<uint8_t> fine = a.Bytes(0, "fine");
  const int64_t width = a.Int(1, "width"), height = a.Int(2, "height"), rows = a.Int(3, "rows"), cols = a.Int(4, "cols"), gridCols = a.Int(5, "gridCols");
  const Array<int32_t> layout = a.Ints(6, "layout");
  const Array<uint8_t> lutBins = a.Bytes(7, "lutBins");
  const Array<float> lutWeights = a.Floats(8, "lutWeights");
  const Array<uint8_t> lutCounts = a.Bytes(9, "lutCounts");
  const Array<int8_t> binOf = a.SignedBytes(10, "binOf");
  const Array<float> positions = a.Floats(11, "positions"), out = a.Floats(12, "out");
  if (!a.ok()) return nullptr;
  if (!a.Require(layout.length == 9, "layout must hold 9 offsets (luma, edges, stats, histogram, position, pairs, row, lbp, dim)")) return nullptr;
  const Layout L{layout.data[0], layout.data[1], layout.data[2], layout.data[3], layout.data[4], layout.data[5], layout.data[6], layout.data[7], layout.data[8]};
  const int64_t patches = L.dim > 0 ? static_cast<int64_t>(out.length) / L.dim : 0;
  const bool fits = L.luma >= 0 && L.luma + 24 <= L.dim && L.edges >= 0 && L.edges + 16 <= L.dim && L.stats >= 0 && L.stats + 4 <= L.dim &&
                    L.histogram >= 0 && L.histogram + kColourBins <= L.dim && L.position >= 0 && L.position + kPositionFeatures <= L.dim &&
                    L.pairs >= 0 && L.pairs + kColourBins * (kColourBins + 1) / 2 <= L.dim && L.row >= 0 && L.row + 2 * kColourBins + 4 <= L.dim &&
                    L.lbp >= 0 && L.lbp + 2 * kLbpBins <= L.dim;
  if (!a.Require(fits, "layout's groups must lie inside a patch vector of `dim`") ||
      !a.Require(rows >= 1 && cols >= 1 && cols <= gridCols && width > (cols - 1) * kPatchPx && width <= cols * kPatchPx &&
                     height > (rows - 1) * kPatchPx && height <= rows * kPatchPx, "width × height must fill the rows × cols real patches") ||
      !a.Require(static_cast<int64_t>(fine.length) == width * kFineScale * height * kFineScale * 3, "fine must hold the 2·width × 2·height RGB image") ||
      !a.Require(static_cast<int64_t>(out.length) % (gridCols * L.dim) == 0 && patches >= rows * gridCols, "out must hold whole grid rows of patch vectors, rows of them at least") ||
      !a.Require(static_cast<int64_t>(positions.length) >= patches * kPositionFeatures, "positions must hold a code for every patch") ||
      !a.Require(lutCounts.length == 1 << 15 && lutBins.length == lutCounts.length * kMemberships && lutWeights.length == lutBins.length,
                 "lutBins, lutWeights and lutCounts must be colour.ts's tables") ||
      !a.Require(std::all_of(lutCounts.data, lutCounts.data + lutCounts.length, [](uint8_t c) { return c <= kMemberships; }) &&
                     std::all_of(lutBins.data, lutBins.data + lutBins.length, [](uint8_t b) { return b < kColourBins; }),
                 "the colour table's bins must be below 16 and at most 4 a colour") ||
      !a.Require(binOf.length == 256 && std::all_of(binOf.data, binOf.data + 256, [](int8_t b) { return b < kLbpBins; }), "binOf must map the 256 patterns below 58")) {
    return nullptr;
  }
  const Tables t{lutBins.data, lutWeights.data, lutCounts.data, binOf.data, positions.data};
  Scratch& s = ThreadScratch();
  const int64_t pixels = width * height;
  s.coarse.resize(pixels * 3);
  s.grey.resize(pixels * kFineScale * kFineScale);
  s.luma.resize(pixels);
  s.o1.resize(pixels);
  s.o2.resize(pixels);
  s.code.resize(pixels);
  Planes(fine.data, width, height, s);
  AccumulatePairs(s.code.data(), width, height, t, s.pairs);
  AccumulateLbp(s.grey.data(), width * kFineScale, height * kFineScale, t.binOf, s.lbp);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t p = r * gridCols + c;
      float* o = out.data + p * L.dim;
      const Patch px{c * kPatchPx, std::min(width, (c + 1) * kPatchPx), r * kPatchPx, std::min(height, (r + 1) * kPatchPx), width};
      LumaChroma(s, px, o + L.luma);
      const double chromaEdge = Edges(s, px, o + L.edges);
      Stats(s, px, chromaEdge, o + L.stats);
      Histogram(s, t, px, o + L.histogram);
      std::copy(t.positions + p * kPositionFeatures, t.positions + (p + 1) * kPositionFeatures, o + L.position);
      PairFeatures(s.pairs, r, c, o + L.pairs);
      LbpFeatures(s.lbp, r, c, o + L.lbp);
    }
    RowFeatures(out.data, r, cols, gridCols, L);
  }
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor entries[] = {
      {"reduceRows", nullptr, ReduceRowsEntry, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"reduceColumns", nullptr, ReduceColumnsEntry, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"builtinFeatures", nullptr, BuiltinFeaturesEntry, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
  };
  napi_define_properties(env, exports, sizeof(entries) / sizeof(entries[0]), entries);
  return exports;
}

}  // namespace
}  // namespace autoui

NAPI_MODULE(NODE_GYP_MODULE_NAME, autoui::Init)
