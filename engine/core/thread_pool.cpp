#include "engine/core/thread_pool.hpp"

#include "engine/core/error.hpp"

#include <exception>

namespace routescope {

namespace {
// Set on pool workers (and on the caller while it runs chunk 0) so that a nested parallel_for
// runs inline instead of deadlocking on a busy pool.
thread_local bool t_inside_pool = false;
}  // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads > kMaxThreads)
        throw ConfigError("threads: " + std::to_string(threads) + " is more than " +
                          std::to_string(kMaxThreads) + " (0 = one per core)");
    if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
    n_threads_ = threads > 0 ? threads : 1;
    errors_.resize(static_cast<std::size_t>(n_threads_));
    for (int t = 1; t < n_threads_; ++t)
        workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_)
        w.join();
}

ThreadPool& ThreadPool::serial() {
    static ThreadPool pool(1);
    return pool;
}

void ThreadPool::run(std::int64_t n, const ChunkFn& fn) {
    if (n <= 0) return;
    if (n_threads_ == 1 || t_inside_pool) {
        fn(0, n, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = &fn;
        job_n_ = n;
        pending_ = n_threads_ - 1;
        for (auto& e : errors_)
            e = nullptr;
        ++generation_;
    }
    wake_.notify_all();

    t_inside_pool = true;
    try {
        const std::int64_t b = chunk_begin(n, 0, n_threads_), e = chunk_begin(n, 1, n_threads_);
        if (e > b) fn(b, e, 0);
    } catch (...) {
        errors_[0] = std::current_exception();
    }
    t_inside_pool = false;

    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    for (auto& e : errors_) {
        if (e) std::rethrow_exception(e);
    }
}

void ThreadPool::worker_loop(int index) {
    t_inside_pool = true;
    std::uint64_t seen = 0;
    for (;;) {
        const ChunkFn* job = nullptr;
        std::int64_t n = 0;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            n = job_n_;
        }
        try {
            const std::int64_t b = chunk_begin(n, index, n_threads_);
            const std::int64_t e = chunk_begin(n, index + 1, n_threads_);
            if (e > b) (*job)(b, e, index);
        } catch (...) {
            errors_[static_cast<std::size_t>(index)] = std::current_exception();
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }
}

}  // namespace routescope
