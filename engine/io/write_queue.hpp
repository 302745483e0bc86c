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
#include <mutex>
#include <thread>
#include <vector>

namespace routescope {

class WriteQueue {
public:
    using Buffer = std::vector<std::byte>;
    /// Runs on the writer thread with the buffer that was pushed with it.
    using Write = std::function<void(const Buffer&)>;

    explicit WriteQueue(std::size_t capacity_bytes);
    ~WriteQueue();
    WriteQueue(const WriteQueue&) = delete;
    WriteQueue& operator=(const WriteQueue&) = delete;

    /// A buffer of `bytes` bytes (contents unspecified), reused from finished writes when one is
    /// free, so a long dump does not allocate (and fault in) fresh memory per row.
    Buffer buffer(std::size_t bytes);
    /// Queues `write` with its buffer; waits while the queue is full. Rethrows a write's error.
    void push(Buffer data, Write write);
    /// Waits until every queued write has run; rethrows the first error.
    void drain();
    /// The most bytes that were queued at once (for a benchmark's memory account).
    std::size_t peak_bytes() const;

private:
    struct Job {
        Buffer data;
        Write write;
    };
    void run();
    void rethrow_locked();

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable work_, room_;
    std::deque<Job> jobs_;
    std::vector<Buffer> free_;
    std::size_t queued_bytes_ = 0, peak_bytes_ = 0;
    bool busy_ = false, stop_ = false;
    std::exception_ptr error_;
    std::thread thread_;  // last: started once everything above exists
};

}  // namespace routescope
