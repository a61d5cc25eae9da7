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

using Chunk = std::function<void(int64_t)>;

// How long an idle helper, and the caller waiting for helpers, spin before sleeping. Kernels of
// a training step follow each other every few tens of microseconds, and a futex wake-up costs
// about as much; sleeping after a short spin keeps an idle process from holding a core.
constexpr auto kSpin = std::chrono::microseconds(30);

thread_local bool t_in_region = false;

template <typename Pred>
bool SpinUntil(Pred ready) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    AUTOUI_PAUSE();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > end) return false;
  }
}

// Persistent helpers (OpenBLAS gives every new thread its own work buffers: mmap + page faults,
// so a thread per call is slower than none) that claim the chunks of a job dynamically.
//
// A helper only works on a job it has joined, and the caller closes the job to late joiners once
// it has run out of chunks: the caller then waits for the helpers that joined, never for one that
// has not been scheduled yet. On a loaded machine a descheduled helper therefore costs nothing:
// the caller runs its chunks. Which thread runs a chunk never changes the result.
class Pool {
 public:
  ~Pool() { Resize(0); }

  // Runs chunk(i) for i in [0, chunks) on the caller and the helpers (kept at `helpers`). Returns
  // false (running nothing) when the pool is in use (a nested call or a second JS thread).
  bool Run(int64_t chunks, int helpers, const Chunk& chunk) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Resize(helpers);
    chunk_ = &chunk;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    const uint64_t job = (job_.load(std::memory_order_relaxed) >> kGenShift) + 1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_.store(job << kGenShift, std::memory_order_release);
    }
    wake_.notify_all();
    t_in_region = true;
    Work();
    t_in_region = false;
    // Close the job: helpers that have not joined by now stay out of it.
    const uint64_t joined = job_.fetch_or(kClosed, std::memory_order_acq_rel) & kJoinedMask;
    const auto done = [&] { return static_cast<uint64_t>(finished_.load(std::memory_order_acquire)) == joined; };
    if (!SpinUntil(done)) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, done);
    }
    chunk_ = nullptr;
    return true;
  }

  void Stop() {
    std::lock_guard<std::mutex> busy(busy_);
    Resize(0);
  }

 private:
  // job_: generation << kGenShift | closed bit | number of helpers that joined.
  static constexpr int kGenShift = 16;
  static constexpr uint64_t kClosed = 1u << 15;
  static constexpr uint64_t kJoinedMask = kClosed - 1;

  void Work() {
    for (int64_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < chunks_;) (*chunk_)(i);
  }

  // Joins the job of generation `gen` unless it is closed or already replaced.
  bool Join(uint64_t gen) {
    uint64_t word = job_.load(std::memory_order_acquire);
    while ((word >> kGenShift) == gen && !(word & kClosed)) {
      if (job_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
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
    const uint64_t seen = job_.load() >> kGenShift;
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this, seen] { Loop(seen); });
  }

  void Loop(uint64_t seen) {
    t_in_region = true;
    const auto fresh = [&] { return stop_.load(std::memory_order_acquire) || (job_.load(std::memory_order_acquire) >> kGenShift) != seen; };
    for (;;) {
      if (!SpinUntil(fresh)) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, fresh);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = job_.load(std::memory_order_acquire) >> kGenShift;
      if (!Join(seen)) continue;
      Work();
      finished_.fetch_add(1, std::memory_order_acq_rel);
      std::lock_guard<std::mutex> lock(mu_);
      done_.notify_one();
    }
  }

  std::mutex busy_;  // one parallel call at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const Chunk* chunk_ = nullptr;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> finished_{0};
  std::atomic<uint64_t> job_{0};
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
  // The cut depends only on the sizes and the thread count, never on timing; and whichever thread
  // runs a part, it computes the same bits.
  const int64_t blocks = (n + align - 1) / align;
  const int64_t parts = std::min<int64_t>({static_cast<int64_t>(g_threads), blocks,
                                           static_cast<int64_t>(std::max(1.0, work / std::max(minWork, 1.0)))});
  if (parts > 1 && !t_in_region) {
    const Chunk chunk = [&](int64_t i) {
      const int64_t from = std::min(n, blocks * i / parts * align);
      const int64_t to = std::min(n, blocks * (i + 1) / parts * align);
      if (from < to) body(from, to);
    };
    if (g_pool.Run(parts, g_threads - 1, chunk)) return;
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
