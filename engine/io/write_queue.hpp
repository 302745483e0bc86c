#pragma once
// Writes on a thread of their own, in the order they were queued, while the caller computes what
// comes next (a dump's rows while the model runs the next layers and batches). The queue holds at
// most `capacity` bytes of buffers (a producer waits for room; a buffer larger than that waits
// for an empty queue), so memory stays bounded whatever the ratio of compute to disk speed. The
// first error a write raises is rethrown to the producer at its next push() or at drain(), and
// nothing queued after it is written. The destructor drops what is still queued and joins.
//
// One writer thread is the only thread that runs the writes, so a non-thread-safe sink (an HDF5
// file) is touched by one thread at a time as long as the producer leaves it alone between the
// first push() and drain().
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace routescope {

/// Where a WriteQueue's buffers come from: ordinary memory by default; a dump on a GPU passes the
/// backend's page-locked memory (Backend::allocate_host), which device → host copies fill at the
/// link's full speed. `allocate` throws on failure; `release` takes what it returned.
struct HostMemory {
    std::function<void*(std::size_t)> allocate;
    std::function<void(void*)> release;
};

class WriteQueue {
public:
    /// A move-only byte buffer of the queue's memory; it must not outlive its queue.
    class Buffer {
    public:
        Buffer() = default;
        ~Buffer() { reset(); }
        Buffer(Buffer&& o) noexcept
            : memory_(std::exchange(o.memory_, nullptr)),
              data_(std::exchange(o.data_, nullptr)),
              size_(std::exchange(o.size_, 0)),
              capacity_(std::exchange(o.capacity_, 0)) {}
        Buffer& operator=(Buffer&& o) noexcept {
            if (this != &o) {
                reset();
                memory_ = std::exchange(o.memory_, nullptr);
                data_ = std::exchange(o.data_, nullptr);
                size_ = std::exchange(o.size_, 0);
                capacity_ = std::exchange(o.capacity_, 0);
            }
            return *this;
        }
        Buffer(const Buffer&) = delete;
        Buffer& operator=(const Buffer&) = delete;

        std::byte* data() { return data_; }
        const std::byte* data() const { return data_; }
        std::size_t size() const { return size_; }
        std::size_t capacity() const { return capacity_; }
        bool empty() const { return size_ == 0; }
        std::byte& operator[](std::size_t i) { return data_[i]; }
        const std::byte& operator[](std::size_t i) const { return data_[i]; }

    private:
        friend class WriteQueue;
        void reset() noexcept;
        const HostMemory* memory_ = nullptr;
        std::byte* data_ = nullptr;
        std::size_t size_ = 0, capacity_ = 0;
    };
    /// Runs on the writer thread with the buffer that was pushed with it.
    using Write = std::function<void(const Buffer&)>;

    /// `memory` (default: ordinary memory) must outlive the queue.
    explicit WriteQueue(std::size_t capacity_bytes, HostMemory memory = {});
    ~WriteQueue();
    WriteQueue(const WriteQueue&) = delete;
    WriteQueue& operator=(const WriteQueue&) = delete;

    /// A buffer of `bytes` bytes (contents unspecified), reused from finished writes when one of
    /// them is large enough (and at most twice as large), so a long dump does not allocate (and
    /// fault in, or page-lock) fresh memory per row. Finished buffers are kept while they and the
    /// queued ones together stay within the capacity.
    Buffer buffer(std::size_t bytes);
    /// Queues `write` with its buffer; waits while the queue is full. Rethrows a write's error.
    void push(Buffer data, Write write);
    /// Waits until every queued write has run; rethrows the first error.
    void drain();
    /// The most bytes that were queued at once (for a benchmark's memory account).
    std::size_t peak_bytes() const;
    /// Buffers allocated so far (the rest were reused): for tests and benchmarks.
    std::size_t allocations() const;

private:
    struct Job {
        Buffer data;
        Write write;
    };
    void run();
    void rethrow_locked();
    void keep_locked(Buffer b);

    const std::size_t capacity_;
    const HostMemory memory_;
    mutable std::mutex mutex_;
    std::condition_variable work_, room_;
    std::deque<Job> jobs_;
    std::multimap<std::size_t, Buffer> free_;  // by capacity
    std::size_t free_bytes_ = 0;
    std::size_t queued_bytes_ = 0, peak_bytes_ = 0, allocations_ = 0;
    bool busy_ = false, stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;  // last: started once everything above exists
};

}  // namespace routescope
