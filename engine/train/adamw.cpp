#include "engine/train/adamw.hpp"

#include <cmath>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/core/error.hpp"
#include "engine/train/lr_schedule.hpp"

namespace routescope::train {

AdamW::AdamW(const TrainConfig& config, const ParamStore& store)
    : config_(config), m_(store.size(), 0.0f), v_(store.size(), 0.0f) {
    for (const auto& e : store.entries())
        spans_.push_back({e.offset, e.size, e.group});  // declared with the parameter
}

double AdamW::grad_norm(const ParamStore& store) {
    CpuBackend cpu(ThreadPool::serial());
    return grad_norm(store, cpu);
}

double AdamW::grad_norm(const ParamStore& store, Backend& backend) {
    return std::sqrt(backend.sum_squares(store.grad_data(), store.size()));
}

double AdamW::clip(ParamStore& store) const {
    CpuBackend cpu(ThreadPool::serial());
    return clip(store, cpu);
}

double AdamW::clip(ParamStore& store, Backend& backend) const {
    const double total = grad_norm(store, backend);
    const double max_norm = config_.clip_grad_norm;
    if (max_norm > 0) {
        const double coef = max_norm / (total + 1e-6);  // torch.nn.utils.clip_grad_norm_
        if (coef < 1.0) backend.scale(store.grad_data(), static_cast<float>(coef), store.size());
    }
    return total;
}

double AdamW::update(ParamStore& store, ThreadPool& pool) {
    CpuBackend cpu(pool);
    return update(store, cpu);
}

double AdamW::update(ParamStore& store, Backend& backend) {
    if (store.size() != m_.size())
        throw Error("AdamW::update: the store has " + std::to_string(store.size()) +
                    " parameters, the optimizer state " + std::to_string(m_.size()));
    const double factor = lr_factor(step_, config_);
    AdamWSpan span;
    span.beta1 = config_.betas[0];
    span.beta2 = config_.betas[1];
    span.eps = config_.eps;
    span.update = step_ + 1;
    for (const Span& s : spans_) {
        const double base = s.group == ParamGroup::ssm ? config_.effective_ssm_lr() : config_.lr;
        span.params = store.data() + s.offset;
        span.grads = store.grad_data() + s.offset;
        span.m = m_.data() + s.offset;
        span.v = v_.data() + s.offset;
        span.n = s.size;
        span.lr = base * factor;
        span.weight_decay = s.group == ParamGroup::decay ? config_.weight_decay : 0.0;
        backend.adamw(span);
    }
    ++step_;
    return config_.lr * factor;
}

}  // namespace routescope::train
