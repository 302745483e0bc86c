#include "engine/core/thread_pool.hpp"

#include "engine/core/error.hpp"

#include <exception>
#include <string>
#include <system_error>

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
    workers_.reserve(static_cast<std::size_t>(n_threads_ - 1));
    try {
        for (int t = 1; t < n_threads_; ++t)
            workers_.emplace_back([this, t] { worker_loop(t); });
    } catch (...) {
        // A thread the process may not create (ulimit -u, ulimit -v: each thread reserves its
        // stack; a container's pids limit). The workers already started wait on wake_: they are
        // stopped and joined here, since a throwing constructor runs no destructor, and
        // destroying wake_ under its waiters (and joinable std::threads) hung the process.
        const int started = static_cast<int>(workers_.size()) + 1;  // the caller's thread too
        stop_workers();
        try {
            throw;
        } catch (const std::system_error& e) {
            throw RuntimeFailure(
                "threads: only " + std::to_string(started) + " of the " +
                std::to_string(n_threads_) + " threads asked for could be started (" + e.what() +
                "; this process's limits, such as ulimit -u or -v or a container's pids limit, "
                "allow no more); ask for fewer with train.threads or --threads");
        }
    }
}

ThreadPool::~ThreadPool() {
    stop_workers();
}

void ThreadPool::stop_workers() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_)
        if (w.joinable()) w.join();
    workers_.clear();
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
