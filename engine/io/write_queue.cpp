#include "engine/io/write_queue.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace routescope {

namespace {
HostMemory or_ordinary(HostMemory m) {
    if (!m.allocate || !m.release) {
        m.allocate = [](std::size_t bytes) {
            return ::operator new (std::max<std::size_t>(bytes, 1), std::align_val_t{64});
        };
        m.release = [](void* p) { ::operator delete (p, std::align_val_t{64}); };
    }
    return m;
}
}  // namespace

void WriteQueue::Buffer::reset() noexcept {
    if (data_ && memory_) memory_->release(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
}

WriteQueue::WriteQueue(std::size_t capacity_bytes, HostMemory memory)
    : capacity_(std::max<std::size_t>(capacity_bytes, 1)),
      memory_(or_ordinary(std::move(memory))),
      thread_([this] { run(); }) {}

WriteQueue::~WriteQueue() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        jobs_.clear();  // abandoned: what is still queued is never written
    }
    work_.notify_all();
    room_.notify_all();
    thread_.join();
}

WriteQueue::Buffer WriteQueue::buffer(std::size_t bytes) {
    Buffer b;
    if (bytes == 0) return b;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // The smallest finished buffer that holds `bytes`, unless it is more than twice that
        // (a small row would pin a large buffer while large rows allocate afresh).
        const auto it = free_.lower_bound(bytes);
        if (it != free_.end() && it->first / 2 <= bytes) {
            b = std::move(it->second);
            free_bytes_ -= it->first;
            free_.erase(it);
        } else {
            ++allocations_;
        }
    }
    if (!b.data_) {
        b.data_ = static_cast<std::byte*>(memory_.allocate(bytes));
        b.memory_ = &memory_;
        b.capacity_ = bytes;
    }
    b.size_ = bytes;
    return b;
}

void WriteQueue::keep_locked(Buffer b) {
    // Kept while the finished and the queued bytes together fit the capacity; released otherwise.
    if (!b.data_ || free_bytes_ + queued_bytes_ + b.capacity_ > capacity_) return;
    free_bytes_ += b.capacity_;
    const std::size_t c = b.capacity_;
    free_.emplace(c, std::move(b));
}

std::size_t WriteQueue::allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocations_;
}

void WriteQueue::rethrow_locked() {
    if (error_) std::rethrow_exception(error_);
}

void WriteQueue::push(Buffer data, Write write) {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::size_t bytes = data.size();
    room_.wait(lock,
               [&] { return error_ || queued_bytes_ == 0 || queued_bytes_ + bytes <= capacity_; });
    rethrow_locked();
    queued_bytes_ += bytes;
    peak_bytes_ = std::max(peak_bytes_, queued_bytes_);
    jobs_.push_back(Job{std::move(data), std::move(write)});
    lock.unlock();
    work_.notify_one();
}

void WriteQueue::drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return error_ || (jobs_.empty() && !busy_); });
    rethrow_locked();
}

std::size_t WriteQueue::peak_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_bytes_;
}

void WriteQueue::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        Job job = std::move(jobs_.front());
        jobs_.pop_front();
        busy_ = true;
        lock.unlock();
        std::exception_ptr failed;
        try {
            job.write(job.data);
        } catch (...) {
            failed = std::current_exception();
        }
        lock.lock();
        busy_ = false;
        queued_bytes_ -= job.data.size();
        if (failed && !error_) {
            error_ = failed;
            jobs_.clear();  // nothing after a failed write is written
            queued_bytes_ = 0;
        }
        keep_locked(std::move(job.data));
        room_.notify_all();
    }
}

}  // namespace routescope
