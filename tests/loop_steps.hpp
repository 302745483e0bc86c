#pragma once
// Model tests that train do it through the training loop's own step
// (engine/train/training_loop.hpp: zero, forward, backward, clip, AdamW, frozen parameters,
// logging), not a step of their own: n updates of `model` under `config` on the batches `objective`
// makes, optionally continuing from a /train state. The run stops after its n-th update (--until),
// so the learning-rate schedule is train.steps' whatever n is. The loop's log and final checkpoint
// go to `dir`.
#include <QDir>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/byte_tokenizer.hpp"
#include "engine/train/training_loop.hpp"

namespace loop_steps {

struct Run {
    std::vector<double> losses, norms;  ///< per update: the step record's loss and grad_norm
    std::vector<float> m, v;            ///< the optimizer's moments afterwards
    std::int64_t step = 0;              ///< its update count afterwards
};

inline Run run(routescope::models::Model& model, const routescope::RunConfig& config,
               routescope::train::Objective& objective, int n, const std::string& dir,
               const routescope::TrainState* resume = nullptr) {
    using namespace routescope;
    const std::int64_t target = (resume ? resume->step : 0) + n;
    RunConfig c = config;
    c.train.steps = std::max(c.train.steps, target);
    c.train.batch_size = model.batch_size();
    c.train.eval_every = 0;
    c.train.checkpoint_every = 0;
    QDir().mkpath(QString::fromStdString(dir));
    Run out;
    train::LoopOptions o;
    o.out_dir = dir;
    o.until = target;
    o.on_record = [&out](const nlohmann::ordered_json& r) {
        if (r.value("type", "") != "step") return;
        out.losses.push_back(r["loss"].get<double>());
        out.norms.push_back(r["grad_norm"].get<double>());
    };
    const data::ByteTokenizer tokenizer;
    train::TrainingLoop loop(c, model, tokenizer, objective.training_examples(), o, resume, dir);
    loop.run(objective);
    out.m = loop.optimizer().m();
    out.v = loop.optimizer().v();
    out.step = loop.optimizer().step();
    return out;
}

}  // namespace loop_steps
