#include "pool.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AUTOUI_PAUSE() _mm_pause()
#else
#define AUTOUI_PAUSE() std::this_thread::yield()
#endif

namespace autoui {
namespace {

using Task = std::function<void(int, int)>;

// How long an idle helper, and the caller waiting for helpers, spin before sleeping. Kernels of
// a training step follow each other every few tens of microseconds, and a futex wake-up costs
// about as much; sleeping after a short spin keeps an idle process from holding a core.
constexpr auto kSpin = std::chrono::microseconds(40);

thread_local bool t_in_region = false;

// Persistent helpers: OpenBLAS gives every new thread its own work buffers (mmap + page faults),
// so a thread per call is slower than none.
class Pool {
 public:
  ~Pool() { Resize(0); }

  // Runs task(slice, slices) for slice in [0, slices), the caller doing slice 0. Returns false
  // (running nothing) when the pool is in use (a nested call or a second JS thread).
  bool Run(int slices, const Task& task) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Resize(slices - 1);
    task_ = &task;
    slices_ = slices;
    pending_.store(slices - 1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    t_in_region = true;
    task(0, slices);
    t_in_region = false;
    if (!SpinUntil([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    task_ = nullptr;
    return true;
  }

  void Stop() {
    std::lock_guard<std::mutex> busy(busy_);
    Resize(0);
  }

 private:
  template <typename Pred>
  static bool SpinUntil(Pred ready) {
    const auto end = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
      if (ready()) return true;
      AUTOUI_PAUSE();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > end) return false;
    }
  }

  void Resize(int helpers) {
    if (static_cast<int>(threads_.size()) == helpers) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    stop_.store(false, std::memory_order_release);
    // A helper waits for a generation after the current one: read here, not in Loop, or a helper
    // scheduled only after Run has published its task would wait for the next one forever.
    const uint64_t start = generation_.load();
    for (int i = 1; i <= helpers; ++i) threads_.emplace_back([this, i, start] { Loop(i, start); });
  }

  void Loop(int slice, uint64_t seen) {
    t_in_region = true;
    for (;;) {
      if (!SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen || stop_flag(); })) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_flag() || generation_.load(std::memory_order_acquire) != seen; });
      }
      if (stop_flag()) return;
      seen = generation_.load(std::memory_order_acquire);
      if (slice < slices_) (*task_)(slice, slices_);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_one();
      }
    }
  }

  bool stop_flag() const { return stop_.load(std::memory_order_acquire); }

  std::mutex busy_;  // one parallel call at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const Task* task_ = nullptr;
  int slices_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

Pool g_pool;
int g_threads = 1;

}  // namespace

int Threads() { return g_threads; }

void SetThreads(int threads) {
  g_threads = std::max(1, threads);
  openblas_set_num_threads(1);
}

void StopThreads() { g_pool.Stop(); }

bool InParallelRegion() { return t_in_region; }

void ParallelFor(int64_t n, double work, double minWork, const std::function<void(int64_t, int64_t)>& body, int64_t align) {
  if (n <= 0) return;
  int parts = static_cast<int>(std::min<double>(g_threads, std::max(1.0, work / std::max(minWork, 1.0))));
  parts = static_cast<int>(std::min<int64_t>(parts, (n + align - 1) / align));
  if (parts > 1 && !t_in_region) {
    const int64_t blocks = (n + align - 1) / align;
    const Task task = [&](int slice, int slices) {
      const int64_t from = std::min(n, blocks * slice / slices * align);
      const int64_t to = std::min(n, blocks * (slice + 1) / slices * align);
      if (from < to) body(from, to);
    };
    if (g_pool.Run(parts, task)) return;
  }
  const bool outer = !t_in_region;
  t_in_region = true;
  body(0, n);
  if (outer) t_in_region = false;
}

float* Scratch(int slot, size_t count) {
  thread_local std::vector<std::vector<float>> buffers;
  if (static_cast<int>(buffers.size()) <= slot) buffers.resize(slot + 1);
  auto& b = buffers[slot];
  if (b.size() < count) b.resize(count);
  return b.data();
}

}  // namespace autoui
