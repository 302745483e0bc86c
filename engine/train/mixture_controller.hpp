#pragma once
// The Birdie mixture controller (TASKS.md "Objectives", the Birdie paper's reward-driven
// schedule), with a SIMPLER BANDIT in place of the paper's learned reward model
// (docs/decisions.md, "Birdie mixture: an EMA bandit instead of the learned reward model"):
//
//   every train.birdie.update_every steps each arm's loss L_new is measured on a fixed
//   validation batch of that arm; its reward is
//       reward = clip(−100·e·tanh(e·S·δ³), −1, 1),  δ = (L_new − L_old)/L_old,  S = √(L_old·L_new)
//   (positive when the loss falls); the predicted reward of an arm is the exponential moving
//   average (weight 1/2) of its rewards so far; 256 candidate mixtures are drawn from the flat
//   Dirichlet, scored by Σ_a π_a·R̂_a, and the mean of the best 16 is blended with the uniform
//   mixture by the exploration ε, which decays linearly from 0.5 at step 0 to 0.2 at train.steps:
//       π ← (1 − ε)·mean(top 16) + ε/K.
//
// The candidates come from Philox(seed ⊕ kMixtureSalt, update number), so a run's mixtures are a
// pure function of its losses and seed.
#include <cstdint>
#include <vector>

namespace routescope::train {

/// The name logged with every mixture record, so nobody mistakes it for the paper's model.
inline constexpr const char* kMixtureControllerName =
    "ema-bandit (a simpler bandit than the Birdie paper's learned reward model)";

/// clip(−100·e·tanh(e·S·δ³), −1, 1) with δ = (L_new − L_old)/L_old, S = √(L_old·L_new).
double birdie_reward(double loss_old, double loss_new);

class MixtureController {
public:
    MixtureController(int arms, std::uint64_t seed, std::int64_t total_steps);

    /// ε at `step`: 0.5 → 0.2 linearly over train.steps, 0.2 after.
    double exploration(std::int64_t step) const;
    /// The first measurement (step 0): L_old of every arm; the mixture stays uniform.
    /// A loss that is not finite is an arm not measured (its validation rows held no target): its
    /// L_old is +inf (nothing to compare with) until a measurement arrives.
    void start(const std::vector<double>& losses);
    /// A later measurement at `step`: rewards, predictions, the next mixture. An arm not measured
    /// now (a NaN loss: its rows held no target) gets no reward (measured(a) is false: reward 0,
    /// its prediction unchanged) and keeps its last measured loss: it was scored as if its loss
    /// were 0, so its weight fell for want of targets. An arm measured for the first time (L_old
    /// +inf) gets reward 0, logged as none. A loss of +inf is a measurement (reward −1).
    void update(std::int64_t step, const std::vector<double>& losses);
    /// Whether arm a's last update gave it a reward (a measurement now and before).
    bool measured(int a) const { return measured_[static_cast<std::size_t>(a)] != 0; }

    /// The arm of a row whose uniform draw is u ∈ [0, 1), drawn in proportion to the mixture's
    /// weights (which need not sum to 1: a restored mixture is any weights ≥ 0, not all 0); an
    /// arm of weight 0 is never chosen.
    int choose(double u) const;

    const std::vector<double>& mixture() const { return mixture_; }
    const std::vector<double>& rewards() const { return rewards_; }
    const std::vector<double>& predicted() const { return predicted_; }
    const std::vector<double>& losses() const { return losses_; }
    std::int64_t updates() const { return updates_; }

    /// Continues from a saved state (a resumed run; the checkpoint's /train/mixture_controller):
    /// the update count and each arm's mixture weight, last reward, predicted reward and last loss.
    /// Error when a vector does not hold one value per arm.
    void restore(std::int64_t updates, std::vector<double> mixture, std::vector<double> rewards,
                 std::vector<double> predicted, std::vector<double> losses);

private:
    int K_;
    std::uint64_t seed_;
    std::int64_t total_steps_;
    std::int64_t updates_ = 0;
    std::vector<double> mixture_, rewards_, predicted_, losses_;
    std::vector<char> measured_;
};

}  // namespace routescope::train
