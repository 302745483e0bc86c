#include "engine/train/mixture_controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "engine/core/error.hpp"
#include "engine/data/random_stream.hpp"

namespace routescope::train {

namespace {
constexpr std::uint64_t kMixtureSalt = 0x6D69787475726531ULL;  // "mixture1"
constexpr int kCandidates = 256;
constexpr int kTop = 16;
constexpr double kEmaWeight = 0.5;
constexpr double kExplorationStart = 0.5, kExplorationEnd = 0.2;  // TASKS.md
}  // namespace

double birdie_reward(double loss_old, double loss_new) {
    const double e = std::numbers::e;
    const double delta = (loss_new - loss_old) / loss_old;
    const double S = std::sqrt(loss_old * loss_new);
    return std::clamp(-100 * e * std::tanh(e * S * delta * delta * delta), -1.0, 1.0);
}

MixtureController::MixtureController(int arms, std::uint64_t seed, std::int64_t total_steps)
    : K_(arms),
      seed_(seed),
      total_steps_(total_steps),
      mixture_(static_cast<std::size_t>(arms), 1.0 / arms),
      rewards_(static_cast<std::size_t>(arms), 0.0),
      predicted_(static_cast<std::size_t>(arms), 0.0),
      losses_(static_cast<std::size_t>(arms), 0.0),
      measured_(static_cast<std::size_t>(arms), 0) {}

double MixtureController::exploration(std::int64_t step) const {
    const double f =
        total_steps_ > 0 ? std::clamp(double(step) / double(total_steps_), 0.0, 1.0) : 1.0;
    return kExplorationStart + (kExplorationEnd - kExplorationStart) * f;
}

void MixtureController::restore(std::int64_t updates, std::vector<double> mixture,
                                std::vector<double> rewards, std::vector<double> predicted,
                                std::vector<double> losses) {
    const auto K = static_cast<std::size_t>(K_);
    if (mixture.size() != K || rewards.size() != K || predicted.size() != K || losses.size() != K ||
        updates < 0)
        throw Error("mixture controller: the saved state is not one of " + std::to_string(K_) +
                    " arms");
    updates_ = updates;
    mixture_ = std::move(mixture);
    rewards_ = std::move(rewards);
    predicted_ = std::move(predicted);
    losses_ = std::move(losses);
}

void MixtureController::start(const std::vector<double>& losses) {
    losses_ = losses;
    for (double& l : losses_)
        if (!std::isfinite(l)) l = std::numeric_limits<double>::infinity();
}

void MixtureController::update(std::int64_t step, const std::vector<double>& losses) {
    for (int a = 0; a < K_; ++a) {
        const auto i = static_cast<std::size_t>(a);
        if (std::isnan(losses[i])) {  // no target in the arm's rows: nothing measured
            measured_[i] = 0;
            rewards_[i] = 0;
            continue;
        }
        // +inf is a measurement (an overflowing loss: reward −1). A reward that is not a number
        // (no earlier measurement, L_old = +inf) is none: 0, logged as null, prediction kept.
        rewards_[i] = birdie_reward(losses_[i], losses[i]);
        losses_[i] = losses[i];
        measured_[i] = std::isfinite(rewards_[i]);
        if (!measured_[i]) {
            rewards_[i] = 0;
            continue;
        }
        predicted_[i] = updates_ == 0 ? rewards_[i]
                                      : (1 - kEmaWeight) * predicted_[i] + kEmaWeight * rewards_[i];
    }
    ++updates_;

    // Flat-Dirichlet candidates (normalised exponentials), scored by their predicted reward.
    data::RandomStream rng(seed_ ^ kMixtureSalt, static_cast<std::uint32_t>(updates_), 0);
    std::vector<std::vector<double>> cand(kCandidates, std::vector<double>(mixture_.size()));
    std::vector<std::pair<double, int>> score(kCandidates);
    for (int c = 0; c < kCandidates; ++c) {
        double sum = 0, s = 0;
        for (auto& x : cand[static_cast<std::size_t>(c)]) {
            x = -std::log(1.0 - rng.uniform());
            sum += x;
        }
        for (int a = 0; a < K_; ++a) {
            auto& x = cand[static_cast<std::size_t>(c)][static_cast<std::size_t>(a)];
            x /= sum;
            s += x * predicted_[static_cast<std::size_t>(a)];
        }
        score[static_cast<std::size_t>(c)] = {s, c};
    }
    std::partial_sort(score.begin(), score.begin() + kTop, score.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first; });
    const double eps = exploration(step);
    std::fill(mixture_.begin(), mixture_.end(), 0.0);
    for (int t = 0; t < kTop; ++t)
        for (std::size_t a = 0; a < mixture_.size(); ++a)
            mixture_[a] +=
                cand[static_cast<std::size_t>(score[static_cast<std::size_t>(t)].second)][a] / kTop;
    for (auto& p : mixture_)
        p = (1 - eps) * p + eps / K_;
    const double total = std::accumulate(mixture_.begin(), mixture_.end(), 0.0);
    for (auto& p : mixture_)
        p /= total;  // exact sum 1 against rounding
}

int MixtureController::choose(double u) const {
    // Proportional to the weights, whatever they sum to: a restored mixture is any weights not
    // negative and not all 0 (docs/formats/checkpoint.md), and [0.5, 0, …] compared with u alone
    // gave every u ≥ 0.5 to the last arm, of weight 0. An arm of weight 0 is never chosen: past
    // the sum (rounding), the draw is the last arm of positive weight.
    // A mixture the controller computed sums to 1 within rounding: u itself, so that its draws
    // are exactly those of before (u × 0.9999999999999999 moved draws at an arm's boundary).
    const double total = std::accumulate(mixture_.begin(), mixture_.end(), 0.0);
    const double target = std::abs(total - 1.0) <= 1e-12 ? u : u * total;
    double c = 0;
    int last = -1;
    for (int a = 0; a < K_; ++a) {
        const double w = mixture_[static_cast<std::size_t>(a)];
        if (!(w > 0)) continue;
        last = a;
        c += w;
        if (target < c) return a;
    }
    return last >= 0 ? last : K_ - 1;
}

}  // namespace routescope::train
