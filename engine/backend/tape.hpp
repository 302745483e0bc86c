#pragma once
// The tape is data: while a model's forward runs, the Graph appends the OpCall of every op it
// applied (engine/ops/op.hpp: the op, its tensors and scalar arguments); backward() then hands the
// records, last first, to the backend's backward. Ops' backwards accumulate (+=) into gradient
// buffers, so a tensor used twice (a residual, a tied embedding) simply receives two
// contributions. The tape holds no tensors itself: every buffer lives in the parameter store, the
// activation arena or the batch, and must outlive the step.
//
// Its storage is reserved once (Model sizes it from the planning pass), so recording never
// allocates in a step.
#include <cstddef>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/ops/op.hpp"
#include "engine/ops/op_table.hpp"

namespace routescope {

class Tape {
public:
    void reserve(std::size_t ops) { entries_.reserve(ops); }

    /// Evaluation passes turn recording off: their forwards then record nothing.
    void set_recording(bool on) { recording_ = on; }
    bool recording() const { return recording_; }

    void record(const ops::OpCall& call) {
        if (recording_) entries_.push_back(call);
    }

    /// Runs the recorded backwards on `backend`, last recorded first. With a profile, each op's
    /// backward is timed (after a synchronize) and recorded as "<op> backward" with its cost
    /// (twice the forward's FLOPs, engine/ops/op_cost.hpp).
    void backward(Backend& backend, ops::OpProfile* profile = nullptr) const;

    /// Points the loss's gradient of the last recorded cross-entropy at `seed` (one double in the
    /// backend's memory): its backward then starts from ∂total/∂loss = *seed instead of 1 (a rank
    /// of a data-parallel step weighs its mean loss by its share of the step's targets). nullptr:
    /// back to 1. No cross-entropy recorded: nothing.
    void set_loss_seed(const double* seed) {
        for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
            if (it->op == ops::OpId::cross_entropy) {
                it->grad[2] = const_cast<double*>(seed);
                return;
            }
    }

    void clear() { entries_.clear(); }
    std::size_t size() const { return entries_.size(); }
    const std::vector<ops::OpCall>& entries() const { return entries_; }

private:
    std::vector<ops::OpCall> entries_;
    bool recording_ = true;
};

}  // namespace routescope
