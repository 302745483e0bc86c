#include "engine/train/adamw.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/train/lr_schedule.hpp"

namespace routescope::train {

ParamGroup param_group(const std::string& name) {
    if (name.find(".ssm_forward.") != std::string::npos ||
        name.find(".ssm_backward.") != std::string::npos)
        return ParamGroup::ssm;
    const auto dot = name.rfind('.');
    const std::string leaf = dot == std::string::npos ? name : name.substr(dot + 1);
    const std::string module = dot == std::string::npos ? "" : name.substr(0, dot);
    const std::string owner = module.substr(module.rfind('.') + 1);
    if (owner == "w_f") return ParamGroup::no_decay;  // Birdie's forget gate (MODELS.md)
    if (leaf == "bias" || name.rfind("embeddings.", 0) == 0 ||
        (!module.empty() && owner.rfind("norm", 0) == 0))
        return ParamGroup::no_decay;
    return ParamGroup::decay;
}

AdamW::AdamW(const TrainConfig& config, const ParamStore& store)
    : config_(config), m_(store.size(), 0.0f), v_(store.size(), 0.0f) {
    for (const auto& e : store.entries())
        spans_.push_back({e.offset, e.size, param_group(e.name)});
}

double AdamW::grad_norm(const ParamStore& store) {
    const float* g = store.grad_data();
    double sum = 0;
    for (std::size_t i = 0; i < store.size(); ++i)
        sum += static_cast<double>(g[i]) * g[i];
    return std::sqrt(sum);
}

double AdamW::clip(ParamStore& store) const {
    const double total = grad_norm(store);
    const double max_norm = config_.clip_grad_norm;
    if (max_norm > 0) {
        const double coef = max_norm / (total + 1e-6);  // torch.nn.utils.clip_grad_norm_
        if (coef < 1.0) {
            float* g = store.grad_data();
            const auto c = static_cast<float>(coef);
            for (std::size_t i = 0; i < store.size(); ++i)
                g[i] *= c;
        }
    }
    return total;
}

double AdamW::update(ParamStore& store, ThreadPool& pool) {
    if (store.size() != m_.size())
        throw Error("AdamW::update: the store has " + std::to_string(store.size()) +
                    " parameters, the optimizer state " + std::to_string(m_.size()));
    const double factor = lr_factor(step_, config_);
    const double b1 = config_.betas[0], b2 = config_.betas[1];
    const auto k = static_cast<double>(step_ + 1);
    const double bc1 = 1.0 - std::pow(b1, k);
    const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, k));
    const auto fb1 = static_cast<float>(b1), fb2 = static_cast<float>(b2);
    const auto one_minus_b1 = static_cast<float>(1.0 - b1),
               one_minus_b2 = static_cast<float>(1.0 - b2);
    const auto eps = static_cast<float>(config_.eps);
    float* p = store.data();
    const float* g = store.grad_data();
    for (const Span& s : spans_) {
        const double base = s.group == ParamGroup::ssm ? config_.effective_ssm_lr() : config_.lr;
        const double lr = base * factor;
        const double wd = s.group == ParamGroup::decay ? config_.weight_decay : 0.0;
        // The scalar coefficients in double, the element updates in float, as torch computes
        // them for float32 tensors (Python floats are doubles; the tensor ops are float).
        const auto decay = static_cast<float>(1.0 - lr * wd);
        const auto step_size = static_cast<float>(lr / bc1);
        const auto denom_scale = static_cast<float>(bc2_sqrt);
        pool.parallel_for(static_cast<std::int64_t>(s.size), 4096,
                          [&](std::int64_t b, std::int64_t e) {
                              for (std::int64_t j = b; j < e; ++j) {
                                  const std::size_t i = s.offset + static_cast<std::size_t>(j);
                                  if (wd != 0.0) p[i] *= decay;
                                  m_[i] = m_[i] * fb1 + one_minus_b1 * g[i];
                                  v_[i] = v_[i] * fb2 + one_minus_b2 * g[i] * g[i];
                                  const float denom = std::sqrt(v_[i]) / denom_scale + eps;
                                  p[i] -= step_size * (m_[i] / denom);
                              }
                          });
    }
    ++step_;
    return config_.lr * factor;
}

}  // namespace routescope::train
