#include "engine/io/write_queue.hpp"

#include <algorithm>
#include <utility>

namespace routescope {

WriteQueue::WriteQueue(std::size_t capacity_bytes)
    : capacity_(std::max<std::size_t>(capacity_bytes, 1)), thread_([this] { run(); }) {}

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
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!free_.empty()) {
            b = std::move(free_.back());
            free_.pop_back();
        }
    }
    b.resize(bytes);
    return b;
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
        if (free_.size() < 8) free_.push_back(std::move(job.data));
        room_.notify_all();
    }
}

}  // namespace routescope
