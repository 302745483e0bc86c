#pragma once
// The tape: while a model's forward runs it records, op by op, a closure that performs that op's
// backward (capturing the buffers it needs); backward() then plays the closures in reverse order.
// Ops' backwards accumulate (+=) into gradient buffers, so a tensor used twice (a residual, a tied
// embedding) simply receives two contributions. The tape holds no tensors itself: every buffer
// lives in the parameter store or the activation arena and must outlive the step.
//
//   tape.record("dense", [=, &pool] { ops::dense_backward(dx, dw, db, dy, x, w, rows, in, out,
//   pool); });
//   ...
//   tape.backward();  // last op first
//   tape.clear();     // before the next step's forward
#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace routescope {

class Tape {
public:
    using Backward = std::function<void()>;
    /// Optional per-op hook for backward(): the recorded name and the closure's wall time.
    using Timer = std::function<void(const char* name, double seconds)>;

    /// Reserve once (from the model's op count) so recording does not grow the vector mid-step.
    void reserve(std::size_t ops) { entries_.reserve(ops); }

    /// Evaluation passes turn recording off: their forwards then record nothing.
    void set_recording(bool on) { recording_ = on; }
    bool recording() const { return recording_; }

    /// `name` must outlive the tape (a string literal: the op's name in the op table).
    void record(const char* name, Backward backward) {
        if (!recording_) return;
        if (forward_timer_) {  // ops record right after their forward: time since the last mark
            const auto now = std::chrono::steady_clock::now();
            forward_timer_(name, std::chrono::duration<double>(now - mark_).count());
            mark_ = now;
        }
        entries_.push_back({name, std::move(backward)});
    }
    /// Optional profile of the forward: record() reports each op's name with the time since the
    /// previous record() (or clear()), which is that op's forward when ops record after computing.
    void set_forward_timer(Timer timer) { forward_timer_ = std::move(timer); }

    /// Runs the recorded backwards, last recorded first. The tape keeps them until clear().
    void backward(const Timer& timer = {}) const {
        using Clock = std::chrono::steady_clock;
        for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
            if (!timer) {
                it->backward();
                continue;
            }
            const auto start = Clock::now();
            it->backward();
            timer(it->name, std::chrono::duration<double>(Clock::now() - start).count());
        }
    }

    void clear() {
        entries_.clear();
        mark_ = std::chrono::steady_clock::now();
    }
    std::size_t size() const { return entries_.size(); }

private:
    struct Entry {
        const char* name;
        Backward backward;
    };
    std::vector<Entry> entries_;
    bool recording_ = true;
    Timer forward_timer_;
    std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now();
};

}  // namespace routescope
