#pragma once
// Per-example evaluation of a model on a LabelledSet (labelled_set.hpp): what fine-tuning's
// validation and `routescope-cli eval` report.
//
//   class examples:  prediction = argmax of the classification logits; correct = prediction ==
//                    label; loss = −log softmax at the label.
//   target examples: prediction = argmax of the MLM logits at every target position; correct =
//                    every target position right (exact match; for the one-target tasks, induction
//                    and attractors, that is accuracy); loss = mean −log softmax over targets.
//
// Summary: accuracy (or exact match, by the set's metric) = correct / scored examples; for class
// sets also macro-F1 = the unweighted mean over the label set of F1_c = 2·tp/(2·tp + fp + fn),
// with F1_c = 0 for a class that is neither a label nor a prediction (scikit-learn's
// zero_division = 0). Unlabelled examples are predicted but not scored.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/model.hpp"
#include "engine/train/labelled_set.hpp"

namespace routescope::train {

struct ExamplePrediction {
    std::int32_t prediction = -1;         ///< class id (class examples)
    std::vector<std::int32_t> predicted;  ///< ids at the target positions (targets)
    std::vector<std::int32_t> expected;   ///< target ids at those positions (targets)
    bool correct = false;
    bool scored = false;  ///< labelled (class) or has targets
    double loss = 0;      ///< of this example (0 when not scored)
};

struct SetScore {
    std::string metric;    ///< "accuracy" | "exact_match"
    double accuracy = 0;   ///< the metric's value
    double macro_f1 = -1;  ///< class sets with labels; −1 otherwise
    double loss = 0;       ///< mean over scored examples
    std::int64_t examples = 0;
    std::int64_t scored = 0;
    std::int64_t correct = 0;
};

/// Predicts every example of `set` in batches of the model's batch size (the last batch's empty
/// rows repeat an example and are dropped). Every example must fit the model's length (Error
/// otherwise). Dropout off, nothing recorded for backward.
std::vector<ExamplePrediction> predict_set(models::Model& model, const LabelledSet& set);

// The per-row argmax and NLL at the target come from Model::readout (engine/ops/row_readout.hpp).

SetScore score_set(const LabelledSet& set, const std::vector<ExamplePrediction>& predictions);

}  // namespace routescope::train
