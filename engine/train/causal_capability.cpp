#include "engine/train/causal_capability.hpp"

#include "engine/core/error.hpp"

namespace routescope::train {

bool is_causal_objective(const std::string& objective) {
    return objective == "clm" || objective == "prefix_lm" || objective == "birdie";
}

void check_causal_objective(const RunConfig& c) {
    const ModelConfig& m = c.model;
    const std::string head = "train.objective: '" + c.train.objective + "' predicts tokens the ";
    if (m.arch == "birdie") {
        if (m.birdie.mode == "causal" || m.birdie.mode == "prefix") return;
        throw ConfigError(
            head + "model must not read, but model.arch = birdie with model.birdie.mode = '" +
            m.birdie.mode +
            "' scans half its state right to left over the whole row; use "
            "model.birdie.mode = causal or prefix");
    }
    if (m.arch == "gmlp") {
        if (m.gmlp.causal) return;
        throw ConfigError(head +
                          "model must not read, but model.arch = gmlp with model.gmlp.causal = "
                          "false mixes every position into every other; set model.gmlp.causal = "
                          "true");
    }
    if (m.arch == "slstm")
        throw ConfigError(head +
                          "model must not read, but model.arch = slstm is bidirectional: "
                          "its right neighbours and sentence node read the whole row; use "
                          "model.arch = birdie (mode causal or prefix), gmlp with "
                          "model.gmlp.causal = true, or bigs, stack_ssm, gated_att or bert "
                          "with model.causal = true");
    if (m.causal) return;  // bigs, stack_ssm: forward SSM only; bert, gated_att: causal mask
    const std::string why = m.arch == "bert" || m.arch == "gated_att"
                                ? "its attention masks padding keys only"
                                : "its backward SSM reads the row right to left";
    throw ConfigError(head + "model must not read, but model.arch = " + m.arch +
                      " with model.causal = false is bidirectional: " + why +
                      "; set model.causal = true");
}

}  // namespace routescope::train
