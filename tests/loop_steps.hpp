#pragma once
// Model tests that train do it through the training loop's own step
// (engine/train/training_loop.hpp: zero, forward, backward, clip, AdamW, frozen parameters,
// logging), not a step of their own: n updates of `model` under `config` on the batches `objective`
// makes, the step losses returned. The loop's log and final checkpoint go to `dir`.
#include <QDir>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/byte_tokenizer.hpp"
#include "engine/train/training_loop.hpp"

namespace loop_steps {

inline std::vector<double> run(routescope::models::Model& model,
                               const routescope::RunConfig& config,
                               routescope::train::Objective& objective, int n,
                               const std::string& dir) {
    using namespace routescope;
    RunConfig c = config;
    c.train.steps = n;
    c.train.batch_size = model.batch_size();
    c.train.eval_every = 0;
    c.train.checkpoint_every = 0;
    QDir().mkpath(QString::fromStdString(dir));
    std::vector<double> losses;
    train::LoopOptions o;
    o.out_dir = dir;
    o.on_record = [&losses](const nlohmann::ordered_json& r) {
        if (r.value("type", "") == "step") losses.push_back(r["loss"].get<double>());
    };
    const data::ByteTokenizer tokenizer;
    train::TrainingLoop loop(c, model, tokenizer, objective.training_examples(), o);
    loop.run(objective);
    return losses;
}

}  // namespace loop_steps
