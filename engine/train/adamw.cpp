#include "engine/train/adamw.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/lr_schedule.hpp"

namespace routescope::train {

namespace {
Backend& backend_of(const ParamStore& store) {
    if (!store.backend())
        throw Error(
            "AdamW: the parameter store is not on a backend (ParamStore::allocate(Backend&))");
    return *store.backend();
}
}  // namespace

AdamW::AdamW(const TrainConfig& config, const ParamStore& store)
    : config_(config), m_(backend_of(store), store.size()), v_(backend_of(store), store.size()) {
    // The group is declared with each parameter; adjacent parameters of one group update as one
    // span (the same rate and decay per element, so the result is the same as per parameter).
    for (const auto& e : store.entries()) {
        if (!spans_.empty() && spans_.back().group == e.group &&
            spans_.back().offset + spans_.back().size == e.offset)
            spans_.back().size += e.size;
        else
            spans_.push_back({e.offset, e.size, e.group});
    }
    updates_.resize(spans_.size());
}

void AdamW::set_moments(const std::vector<float>& m, const std::vector<float>& v) {
    if (m.size() != m_.size() || v.size() != v_.size())
        throw Error("AdamW::set_moments: " + std::to_string(m.size()) + " and " +
                    std::to_string(v.size()) + " moments for " + std::to_string(m_.size()) +
                    " parameters");
    m_.upload(m);
    v_.upload(v);
}

double AdamW::grad_norm(const ParamStore& store) {
    return std::sqrt(backend_of(store).sum_squares(store.grad_data(), store.size()));
}

double AdamW::clip(ParamStore& store) const {
    const double total = grad_norm(store);
    const double max_norm = config_.clip_grad_norm;
    if (max_norm > 0) {
        const double coef = max_norm / (total + 1e-6);  // torch.nn.utils.clip_grad_norm_
        if (coef < 1.0)
            backend_of(store).scale(store.grad_data(), static_cast<float>(coef), store.size());
    }
    return total;
}

double AdamW::update(ParamStore& store) {
    Backend& backend = backend_of(store);
    if (store.size() != m_.size())
        throw Error("AdamW::update: the store has " + std::to_string(store.size()) +
                    " parameters, the optimizer state " + std::to_string(m_.size()));
    const double factor = lr_factor(step_, config_);
    AdamWSpan span;
    span.beta1 = config_.betas[0];
    span.beta2 = config_.betas[1];
    span.eps = config_.eps;
    span.update = step_ + 1;
    for (std::size_t k = 0; k < spans_.size(); ++k) {
        const Span& s = spans_[k];
        const double base = s.group == ParamGroup::ssm ? config_.effective_ssm_lr() : config_.lr;
        span.params = store.data() + s.offset;
        span.grads = store.grad_data() + s.offset;
        span.m = m_.data() + s.offset;
        span.v = v_.data() + s.offset;
        span.n = s.size;
        span.lr = base * factor;
        span.weight_decay = s.group == ParamGroup::decay ? config_.weight_decay : 0.0;
        updates_[k] = span;
    }
    backend.adamw_spans(updates_.data(), updates_.size());
    ++step_;
    return config_.lr * factor;
}

}  // namespace routescope::train
