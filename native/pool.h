// The addon's own threads. OpenBLAS is kept single-threaded (see SetThreads) and every kernel,
// GEMMs included, splits its work over this pool instead: one set of threads on the machine's
// cores, never two pools competing for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace autoui {

// Threads used by the kernels (the caller's plus helpers); at least 1.
int Threads();
// Sets the kernels' thread count and pins OpenBLAS to one thread.
void SetThreads(int threads);
// Joins the helpers (at unload).
void StopThreads();

// Element-wise kernels below this many elements run on the caller alone: waking a helper costs more.
constexpr double kMinParallelElements = 32768;

// Runs body(begin, end) over [0, n) cut into at most Threads() contiguous ranges, when the
// whole job is at least minWork (in the caller's units, e.g. flops or elements) per extra thread;
// otherwise on the caller alone. Ranges start at multiples of `align`. The caller runs the first
// range. Nested calls run serially (the pool is busy).
void ParallelFor(int64_t n, double work, double minWork, const std::function<void(int64_t, int64_t)>& body,
                 int64_t align = 1);

// True on a pool helper or inside a ParallelFor body on the caller.
bool InParallelRegion();

// A float buffer private to the calling thread, reused across calls; `slot` tells apart the
// buffers one kernel needs at the same time. Contents are undefined on return. Kernels that call
// each other use disjoint slots: attention.cc 0–3, ColumnSums 4, attention_layer.cc 8–11 (it
// calls attention.cc); the others (0–3) call no kernel that takes scratch.
float* Scratch(int slot, size_t count);

}  // namespace autoui
