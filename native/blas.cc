// Row-major (batched) single-precision GEMM for TensorFlow.js kernels, computed by OpenBLAS directly
// on the memory of the Float32Arrays that the tfjs cpu backend keeps its tensors in (no copies).
//
// Exports:
//   sgemm(a, b, c, batch, batchA, batchB, m, n, k, transA, transB): for bi in [0, batch):
//       c[bi] = op(a[bi % batchA]) · op(b[bi % batchB]), op(x) = xᵀ when its flag is set.
//     The `bi % batchX` indexing is exactly what tfjs's cpu BatchMatMul kernel does, so results
//     match it even for the mixed broadcasts where that is not numpy broadcasting.
//   adamw(p, g, m, v, pOut, mOut, vOut, lr, beta1, beta2, bc1, bc2, epsilon, decay, gradScale):
//     one AdamW step for one parameter tensor, element by element in float32, written to the three
//     outputs: g' = gradScale·g, m' = β1·m + (1−β1)·g', v' = β2·v + (1−β2)·g'²,
//     p' = (1 − decay)·p − lr · (m'/bc1) / (√(v'/bc2) + ε). One call instead of ~20 tfjs ops.
//   sumSquares(x): Σ x² of a Float32Array, accumulated in double (for the global gradient norm).
//   setThreads(n), threads(), config()
//
// Written against plain N-API (node_api.h ships with Node's headers) rather than node-addon-api:
// four small entry points do not justify a build-time npm dependency.
#include <node_api.h>
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// OpenBLAS runs a GEMM with m·n·k at or below 65536·GEMM_MULTITHREAD_THRESHOLD (= 4 by default) on
// the calling thread only (interface/gemm.c). Batches of such small products (attention heads) are
// therefore spread over our own threads instead; larger products use OpenBLAS's own pool and are
// issued one after another, so the two kinds of threading never nest.
constexpr double kOpenBlasSingleThreadMnk = 65536.0 * 4.0;
// Below this many flops a whole call is cheaper than starting a thread (~20–50 µs).
constexpr double kMinParallelFlops = 4.0e6;

int g_threads = 1;

bool Check(napi_env env, napi_status status, const char* what) {
  if (status == napi_ok) return true;
  const napi_extended_error_info* info = nullptr;
  napi_get_last_error_info(env, &info);
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) {
    std::string msg = std::string("autoui_blas: ") + what;
    if (info && info->error_message) msg += std::string(": ") + info->error_message;
    napi_throw_error(env, nullptr, msg.c_str());
  }
  return false;
}

bool GetFloat32(napi_env env, napi_value v, const char* name, float** data, size_t* length) {
  bool is_typed = false;
  if (!Check(env, napi_is_typedarray(env, v, &is_typed), name)) return false;
  napi_typedarray_type type;
  void* ptr = nullptr;
  if (is_typed) {
    if (!Check(env, napi_get_typedarray_info(env, v, &type, length, &ptr, nullptr, nullptr), name)) return false;
  }
  if (!is_typed || type != napi_float32_array) {
    std::string msg = std::string("autoui_blas: ") + name + " must be a Float32Array";
    napi_throw_type_error(env, nullptr, msg.c_str());
    return false;
  }
  *data = static_cast<float*>(ptr);
  return true;
}

bool GetInt(napi_env env, napi_value v, const char* name, int64_t* out) {
  napi_valuetype t;
  if (!Check(env, napi_typeof(env, v, &t), name)) return false;
  if (t == napi_number && Check(env, napi_get_value_int64(env, v, out), name) && *out >= 0 && *out <= INT32_MAX) return true;
  std::string msg = std::string("autoui_blas: ") + name + " must be an integer in [0, 2^31)";
  napi_throw_range_error(env, nullptr, msg.c_str());
  return false;
}

bool GetBool(napi_env env, napi_value v, const char* name, bool* out) {
  if (napi_get_value_bool(env, v, out) == napi_ok) return true;
  std::string msg = std::string("autoui_blas: ") + name + " must be a boolean";
  napi_throw_type_error(env, nullptr, msg.c_str());
  return false;
}

// Reads exactly `n` arguments into argv, or throws a TypeError quoting the call's signature.
bool GetArgs(napi_env env, napi_callback_info info, size_t n, napi_value* argv, const char* signature) {
  size_t argc = n;
  if (!Check(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr), signature)) return false;
  if (argc == n) return true;
  std::string msg = std::string("autoui_blas.") + signature;
  napi_throw_type_error(env, nullptr, msg.c_str());
  return false;
}

struct Gemm {
  const float* a;
  const float* b;
  float* c;
  int64_t batchA, batchB, m, n, k;
  bool transA, transB;

  void Run(int64_t from, int64_t to) const {
    const int64_t lda = transA ? m : k;
    const int64_t ldb = transB ? k : n;
    for (int64_t bi = from; bi < to; ++bi) {
      cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                  static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f,
                  a + (bi % batchA) * m * k, static_cast<int>(lda),
                  b + (bi % batchB) * k * n, static_cast<int>(ldb), 0.0f,
                  c + bi * m * n, static_cast<int>(n));
    }
  }
};

// Persistent helpers for splitting a batch. Threads are kept rather than started per call: OpenBLAS
// gives every new thread its own work buffer (mmap + page faults), which made a fresh thread per
// call slower than no thread at all (measured: 755 µs vs 299 µs on 128 32×40×32 products).
class BatchPool {
 public:
  ~BatchPool() { Resize(0); }

  // Runs task(slice, slices) for slice in [0, slices) with slices = helpers + 1, the caller doing
  // slice 0. Returns false (running nothing) when another call is using the pool (a second JS
  // thread); the caller then does all the work itself.
  bool Run(int slices, const std::function<void(int, int)>& task) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Resize(slices - 1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = &task;
      slices_ = slices;
      pending_ = slices - 1;
      ++generation_;
    }
    wake_.notify_all();
    task(0, slices);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    return true;
  }

  // Stops every helper (at unload).
  void Stop() {
    std::lock_guard<std::mutex> busy(busy_);
    Resize(0);
  }

 private:
  void Resize(int helpers) {
    if (static_cast<int>(threads_.size()) == helpers) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    stop_ = false;
    // A helper waits for a generation after the one current now: read here, not in Loop, or a helper
    // scheduled only after Run has published its task would wait for the next one forever.
    const uint64_t start = generation_;
    for (int i = 1; i <= helpers; ++i) threads_.emplace_back([this, i, start] { Loop(i, start); });
  }

  void Loop(int slice, uint64_t seen) {
    for (;;) {
      const std::function<void(int, int)>* task;
      int slices;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        task = task_;
        slices = slices_;
      }
      (*task)(slice, slices);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;  // one parallel call at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int, int)>* task_ = nullptr;
  int slices_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

BatchPool g_pool;

napi_value Sgemm(napi_env env, napi_callback_info info) {
  napi_value argv[11];
  if (!GetArgs(env, info, 11, argv, "sgemm(a, b, c, batch, batchA, batchB, m, n, k, transA, transB)")) return nullptr;
  float *a, *b, *c;
  size_t la, lb, lc;
  int64_t batch, batchA, batchB, m, n, k;
  bool transA, transB;
  if (!GetFloat32(env, argv[0], "a", &a, &la) || !GetFloat32(env, argv[1], "b", &b, &lb) ||
      !GetFloat32(env, argv[2], "c", &c, &lc) || !GetInt(env, argv[3], "batch", &batch) ||
      !GetInt(env, argv[4], "batchA", &batchA) || !GetInt(env, argv[5], "batchB", &batchB) ||
      !GetInt(env, argv[6], "m", &m) || !GetInt(env, argv[7], "n", &n) || !GetInt(env, argv[8], "k", &k) ||
      !GetBool(env, argv[9], "transA", &transA) || !GetBool(env, argv[10], "transB", &transB)) {
    return nullptr;
  }
  // Never touch memory outside the arrays, whatever the caller passes.
  if (batchA < 1 || batchB < 1 || batch < std::max(batchA, batchB) ||
      static_cast<double>(la) < static_cast<double>(batchA) * m * k ||
      static_cast<double>(lb) < static_cast<double>(batchB) * k * n ||
      static_cast<double>(lc) < static_cast<double>(batch) * m * n) {
    napi_throw_range_error(env, nullptr, "autoui_blas.sgemm: array lengths do not cover the given shapes");
    return nullptr;
  }
  if (m == 0 || n == 0) return nullptr;
  if (k == 0) {  // an empty sum; BLAS may leave C untouched
    std::memset(c, 0, sizeof(float) * batch * m * n);
    return nullptr;
  }
  Gemm g{a, b, c, batchA, batchB, m, n, k, transA, transB};
  if (batch > 1 && batchB == 1 && batchA == batch && !transA) {
    // Consecutive a[bi] (each [m, k], row-major) against one b form a single [batch·m, k] product.
    Gemm whole{a, b, c, 1, 1, batch * m, n, k, false, transB};
    whole.Run(0, 1);
    return nullptr;
  }
  const double mnk = static_cast<double>(m) * n * k;
  const int workers = static_cast<int>(std::min<int64_t>(g_threads, batch));
  if (workers > 1 && mnk <= kOpenBlasSingleThreadMnk && 2.0 * mnk * batch >= kMinParallelFlops) {
    // Contiguous slices of the batch: every matrix is still computed by one single-threaded call,
    // so the bits do not depend on the split.
    const std::function<void(int, int)> slice = [&g, batch](int w, int slices) {
      g.Run(batch * w / slices, batch * (w + 1) / slices);
    };
    if (g_pool.Run(workers, slice)) return nullptr;
  }
  g.Run(0, batch);
  return nullptr;
}

bool GetNumber(napi_env env, napi_value v, const char* name, double* out) {
  if (napi_get_value_double(env, v, out) == napi_ok) return true;
  std::string msg = std::string("autoui_blas: ") + name + " must be a number";
  napi_throw_type_error(env, nullptr, msg.c_str());
  return false;
}

napi_value AdamW(napi_env env, napi_callback_info info) {
  napi_value argv[15];
  if (!GetArgs(env, info, 15, argv, "adamw(p, g, m, v, pOut, mOut, vOut, lr, beta1, beta2, bc1, bc2, epsilon, decay, gradScale)")) return nullptr;
  static const char* kArrays[] = {"p", "g", "m", "v", "pOut", "mOut", "vOut"};
  float* x[7];
  size_t len[7];
  for (int i = 0; i < 7; ++i)
    if (!GetFloat32(env, argv[i], kArrays[i], &x[i], &len[i])) return nullptr;
  static const char* kNumbers[] = {"lr", "beta1", "beta2", "bc1", "bc2", "epsilon", "decay", "gradScale"};
  double h[8];
  for (int i = 0; i < 8; ++i)
    if (!GetNumber(env, argv[7 + i], kNumbers[i], &h[i])) return nullptr;
  const size_t n = len[0];
  for (int i = 1; i < 7; ++i) {
    if (len[i] != n) {
      napi_throw_range_error(env, nullptr, "autoui_blas.adamw: all arrays must have the same length");
      return nullptr;
    }
  }
  const float lr = static_cast<float>(h[0]), b1 = static_cast<float>(h[1]), b2 = static_cast<float>(h[2]);
  const float bc1 = static_cast<float>(h[3]), bc2 = static_cast<float>(h[4]), eps = static_cast<float>(h[5]);
  const float keep = static_cast<float>(1.0 - h[6]), scale = static_cast<float>(h[7]);
  const float *p = x[0], *g = x[1], *m = x[2], *v = x[3];
  float *po = x[4], *mo = x[5], *vo = x[6];
  for (size_t i = 0; i < n; ++i) {
    const float gi = g[i] * scale;
    const float mi = m[i] * b1 + gi * (1.0f - b1);
    const float vi = v[i] * b2 + gi * gi * (1.0f - b2);
    mo[i] = mi;
    vo[i] = vi;
    po[i] = p[i] * keep - (mi / bc1) / (std::sqrt(vi / bc2) + eps) * lr;
  }
  return nullptr;
}

napi_value SumSquares(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  float* x;
  size_t n;
  if (!GetArgs(env, info, 1, argv, "sumSquares(x)") || !GetFloat32(env, argv[0], "x", &x, &n)) return nullptr;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  napi_value out;
  napi_create_double(env, sum, &out);
  return out;
}

napi_value SetThreads(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int64_t n = 0;
  if (!GetArgs(env, info, 1, argv, "setThreads(threads)") || !GetInt(env, argv[0], "threads", &n)) return nullptr;
  if (n < 1) {
    napi_throw_range_error(env, nullptr, "autoui_blas.setThreads: threads must be at least 1");
    return nullptr;
  }
  g_threads = static_cast<int>(n);
  openblas_set_num_threads(g_threads);
  return nullptr;
}

napi_value Threads(napi_env env, napi_callback_info) {
  napi_value out;
  napi_create_int32(env, openblas_get_num_threads(), &out);
  return out;
}

napi_value Config(napi_env env, napi_callback_info) {
  napi_value out;
  std::string s = openblas_get_config();
  napi_create_string_utf8(env, s.c_str(), s.size(), &out);
  return out;
}

napi_value Init(napi_env env, napi_value exports) {
  g_threads = std::max(1, openblas_get_num_threads());
  napi_property_descriptor props[] = {
      {"sgemm", nullptr, Sgemm, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"adamw", nullptr, AdamW, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"sumSquares", nullptr, SumSquares, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"setThreads", nullptr, SetThreads, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"threads", nullptr, Threads, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"config", nullptr, Config, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  // Join the helpers before the process (or a worker thread using us) tears down.
  napi_add_env_cleanup_hook(env, [](void*) { g_pool.Stop(); }, nullptr);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
