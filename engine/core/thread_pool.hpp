#pragma once
// A fixed pool of worker threads with deterministic static partitioning.
//
// parallel_for(n, fn) splits [0, n) into size() contiguous chunks, chunk t = [n·t/T, n·(t+1)/T),
// and chunk t always runs on worker t (the calling thread runs chunk 0). Which element lands in
// which chunk depends only on n and the thread count, never on timing, so an op that reduces only
// inside a chunk gives bit-identical results run after run with the same thread count.
// A parallel_for issued from inside a worker runs serially on that worker (no nested fan-out).
// (That holds for any pool: a worker of one pool runs another pool's loop inline too.) A pool
// serves one calling thread at a time; give each thread that drives ops its own pool.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace routescope {

/// The most threads a pool (and every --threads option, and train.threads) accepts. Far beyond
/// any machine's cores; a pool of a hundred thousand threads took minutes only to start on two
/// cores, so a mistyped count is refused instead.
inline constexpr int kMaxThreads = 1024;

class ThreadPool {
public:
    /// fn(begin, end, thread): the chunk [begin, end) handled by worker `thread` (0-based).
    using ChunkFn = std::function<void(std::int64_t, std::int64_t, int)>;

    /// threads <= 0 means one per hardware thread. ConfigError above kMaxThreads; RuntimeFailure
    /// naming how many started when the process may create no more threads (the ones started are
    /// stopped and joined first).
    explicit ThreadPool(int threads = 1);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }

    /// Chunk t of [0, n) under static partitioning over `parts` chunks.
    static std::int64_t chunk_begin(std::int64_t n, int t, int parts) { return n * t / parts; }

    /// Runs fn over [0, n) in size() static chunks; fn is fn(begin, end) or fn(begin, end, thread).
    /// Empty chunks are skipped. Exceptions from a chunk are rethrown on the caller (first chunk
    /// index wins, so which error surfaces is deterministic too).
    template <class F>
    void parallel_for(std::int64_t n, F&& fn) {
        // The job is a one-pointer closure over fn, which std::function stores in place: a
        // parallel_for never allocates (a training step allocates nothing, engine issue).
        if constexpr (std::is_invocable_v<F&, std::int64_t, std::int64_t, int>) {
            run(n, ChunkFn([&fn](std::int64_t b, std::int64_t e, int t) { fn(b, e, t); }));
        } else {
            run(n, ChunkFn([&fn](std::int64_t b, std::int64_t e, int) { fn(b, e); }));
        }
    }

    /// As parallel_for, but runs serially when n < 2·grain: for elementwise work the fan-out costs
    /// more than it saves below a few tens of thousands of elements. Still a pure function of
    /// (n, grain, size()), so still deterministic.
    template <class F>
    void parallel_for(std::int64_t n, std::int64_t grain, F&& fn) {
        if (n < 2 * grain) {
            if constexpr (std::is_invocable_v<F&, std::int64_t, std::int64_t, int>) {
                if (n > 0) fn(std::int64_t{0}, n, 0);
            } else {
                if (n > 0) fn(std::int64_t{0}, n);
            }
            return;
        }
        parallel_for(n, std::forward<F>(fn));
    }

    /// A process-wide single-threaded pool, for callers that do not care about threads.
    static ThreadPool& serial();

private:
    void run(std::int64_t n, const ChunkFn& fn);
    void worker_loop(int index);
    /// Stops the workers and joins them (the destructor, and a constructor that could not start
    /// them all).
    void stop_workers() noexcept;

    int n_threads_ = 1;
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const ChunkFn* job_ = nullptr;
    std::int64_t job_n_ = 0;
    std::uint64_t generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;
    std::vector<std::exception_ptr> errors_;
};

}  // namespace routescope
