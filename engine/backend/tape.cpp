#include "engine/backend/tape.hpp"

#include <chrono>

namespace routescope {

void Tape::backward(Backend& backend, ops::OpProfile* profile) const {
    using Clock = std::chrono::steady_clock;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
        if (!profile) {
            backend.backward(*it);
            continue;
        }
        const auto start = Clock::now();
        backend.backward(*it);
        backend.synchronize();
        ops::OpCost cost = ops::call_cost(*it);
        cost.flops *= 2;
        cost.bytes *= 2;
        profile->record_phase(ops::op_def(it->op).name, ops::OpProfile::Phase::backward,
                              std::chrono::duration<double>(Clock::now() - start).count(), cost);
    }
}

}  // namespace routescope
