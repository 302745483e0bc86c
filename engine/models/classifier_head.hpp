#pragma once
// The classification head (MODELS.md "Heads"):
//
//   logits = out( dropout( tanh( pool_dense( pool(h) ) ) ) )        [B, n_labels]
//
// pool = mean of h over the positions < length (model.pool = "mean", the default) or h at
// position 0 ("first"). Parameters `classifier.pool` [d, d], `classifier.out` [n_labels, d].
#include "engine/models/block.hpp"

namespace routescope::models {

class ClassifierHead {
public:
    explicit ClassifierHead(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);
    Act forward(Graph& g, const Act& h, const BlockInput& in, const ops::DropoutSite& dropout);

private:
    bool first_;
    int d_;
};

}  // namespace routescope::models
