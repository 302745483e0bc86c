#include "engine/train/set_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/train/host_batch.hpp"

namespace routescope::train {

std::vector<ExamplePrediction> predict_set(models::Model& model, const LabelledSet& set) {
    const int B = model.batch_size(), L = model.length();
    const bool types = model.config().model.type_embeddings;
    const auto n = static_cast<std::int64_t>(set.examples.size());
    std::vector<ExamplePrediction> out(static_cast<std::size_t>(n));
    HostBatch batch(B, L, set.pad);
    for (std::int64_t first = 0; first < n; first += B) {
        // Rows past the end repeat the last example (their predictions are dropped).
        for (int b = 0; b < B; ++b)
            batch.put(b, set.examples[static_cast<std::size_t>(std::min(first + b, n - 1))],
                      set.source);
        model.forward(
            batch.view(set.targets ? HostBatch::Head::mlm : HostBatch::Head::classification, types),
            /*training=*/false);
        // Per row, the argmax and the NLL at the batch's target (the example's label or
        // targets), computed where the logits live (Model::readout): O(rows) bytes down.
        const models::Model::RowReadout& r = model.readout();
        for (int b = 0; b < B && first + b < n; ++b) {
            const auto& e = set.examples[static_cast<std::size_t>(first + b)];
            auto& p = out[static_cast<std::size_t>(first + b)];
            if (!set.targets) {
                const auto row = static_cast<std::size_t>(b);
                p.prediction = r.argmax[row];
                p.scored = e.label >= 0;
                p.correct = p.scored && p.prediction == e.label;
                if (p.scored) p.loss = r.nll[row];
                continue;
            }
            double loss = 0;
            for (std::size_t t = 0; t < e.targets.size(); ++t) {
                if (e.targets[t] == data::kIgnoreLabel) continue;
                const auto row = static_cast<std::size_t>(b) * static_cast<std::size_t>(L) + t;
                p.predicted.push_back(r.argmax[row]);
                p.expected.push_back(e.targets[t]);
                loss += r.nll[row];
            }
            p.scored = !p.expected.empty();
            p.correct = p.scored && p.predicted == p.expected;
            if (p.scored) p.loss = loss / static_cast<double>(p.expected.size());
        }
    }
    return out;
}

SetScore score_set(const LabelledSet& set, const std::vector<ExamplePrediction>& predictions) {
    SetScore s;
    s.metric = set.metric == data::TaskMetric::ExactMatch ? "exact_match" : "accuracy";
    s.examples = static_cast<std::int64_t>(predictions.size());
    const std::size_t K = set.labels.size();
    std::vector<std::int64_t> tp(K), fp(K), fn(K);
    double loss = 0;
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& p = predictions[i];
        if (!p.scored) continue;
        ++s.scored;
        s.correct += p.correct ? 1 : 0;
        loss += p.loss;
        if (set.targets) continue;
        const auto gold = static_cast<std::size_t>(set.examples[i].label);
        const auto pred = static_cast<std::size_t>(p.prediction);
        if (gold == pred) {
            ++tp[gold];
        } else {
            if (pred < K) ++fp[pred];
            if (gold < K) ++fn[gold];
        }
    }
    if (s.scored > 0) {
        s.accuracy = static_cast<double>(s.correct) / static_cast<double>(s.scored);
        s.loss = loss / static_cast<double>(s.scored);
        if (!set.targets && K > 0) {
            double f1 = 0;
            for (std::size_t c = 0; c < K; ++c) {
                const auto den = 2 * tp[c] + fp[c] + fn[c];
                f1 += den > 0 ? 2.0 * static_cast<double>(tp[c]) / static_cast<double>(den) : 0.0;
            }
            s.macro_f1 = f1 / static_cast<double>(K);
        }
    }
    return s;
}

}  // namespace routescope::train
