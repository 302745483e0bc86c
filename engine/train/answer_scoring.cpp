#include "engine/train/answer_scoring.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/train/host_batch.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::train {

std::int32_t answer_row(const std::string& objective, const std::vector<std::int32_t>& sequence,
                        std::int32_t first, std::int32_t last, const data::BirdieVocabulary& vocab,
                        RowView row, std::int32_t* answer_at, data::Paradigm layout) {
    const auto n = static_cast<std::int32_t>(sequence.size());
    if (first < 1 || last < first || last >= n)
        throw Error("answer span [" + std::to_string(first) + ", " + std::to_string(last) +
                    "] does not lie inside an example of " + std::to_string(n) + " tokens");
    const bool birdie = objective == "birdie";
    if (birdie && layout != data::Paradigm::prefix_lm && layout != data::Paradigm::next_token)
        throw ConfigError(
            "--birdie-layout: a birdie checkpoint is scored in the prefix_lm or the "
            "next_token arm's layout");
    const std::int32_t length = n + (birdie ? 1 : 0);
    if (length > row.L)
        throw Error("a row of " + std::to_string(length) +
                    " tokens does not fit the model's length " + std::to_string(row.L));
    // A built-in task's vocabulary (the checkpoint's: task_split and eval check it) holds the
    // five specials first, so its [PAD] is kPadId.
    std::fill_n(row.tokens, row.L, data::kPadId);
    std::fill_n(row.labels, row.L, data::kIgnoreLabel);
    // Position of the logits that predict sequence[j], j ≥ first; and where the causal region
    // starts (everything before it is the prefix).
    std::int32_t shift = -1, causal_from = 0;
    if (birdie && layout == data::Paradigm::next_token) {
        // [next_token] [start] sequence[1..]: sequence[j] sits at j + 1, predicted from j.
        row.tokens[0] = vocab.paradigm(data::Paradigm::next_token);
        row.tokens[1] = vocab.start();
        std::copy(sequence.begin() + 1, sequence.end(), row.tokens + 2);
        shift = 0;
        causal_from = 2;
    } else if (birdie) {
        row.tokens[0] = vocab.paradigm(data::Paradigm::prefix_lm);
        std::copy(sequence.begin() + 1, sequence.begin() + first, row.tokens + 1);
        row.tokens[first] = vocab.start();
        std::copy(sequence.begin() + first, sequence.end(), row.tokens + first + 1);
        shift = 0;  // [start] at `first` predicts sequence[first]; sequence[j] sits at j + 1
        causal_from = first + 1;
    } else {
        std::copy(sequence.begin(), sequence.end(), row.tokens);
        causal_from = objective == "prefix_lm" ? first : 0;
    }
    for (std::int32_t j = first; j <= last; ++j)
        row.labels[j + shift] = sequence[static_cast<std::size_t>(j)];
    for (int t = 0; t < row.L; ++t)
        row.reset[t] =
            (t == 0 ? models::kResetNewSample : 0) | (t >= causal_from ? models::kResetCausal : 0);
    if (answer_at) *answer_at = first + shift;
    return length;
}

std::vector<ExamplePrediction> predict_answers(models::Model& model, const LabelledSet& set,
                                               const std::string& objective,
                                               const data::BirdieVocabulary& vocab,
                                               data::Paradigm layout) {
    if (!set.targets)
        throw ConfigError(set.source +
                          ": a causal checkpoint scores tasks whose answer is a token sequence, "
                          "not class labels");
    const int B = model.batch_size(), L = model.length();
    const auto n = static_cast<std::int64_t>(set.examples.size());
    std::vector<ExamplePrediction> out(static_cast<std::size_t>(n));
    HostBatch batch(B, L, data::kPadId);  // a task's [PAD] (answer_row); rows whole or unscored
    std::vector<std::int32_t> answer_at(B, -1), first_of(B, -1), last_of(B, -1);
    for (std::int64_t start = 0; start < n; start += B) {
        for (int b = 0; b < B; ++b) {
            const std::int64_t i = start + b;
            const auto [first, last] =
                i < n ? answer_span(set.examples[static_cast<std::size_t>(i)].targets)
                      : std::pair<std::int32_t, std::int32_t>{-1, -1};
            first_of[b] = first;
            last_of[b] = last;
            if (first < 1) {  // past the end, or an example without targets: an unscored row
                batch.clear_row(b);
                continue;
            }
            const auto& e = set.examples[static_cast<std::size_t>(i)];
            batch.length(b) = answer_row(objective, completed_sequence(e.tokens, e.targets), first,
                                         last, vocab, batch.row(b), &answer_at[b], layout);
        }
        model.forward(batch.view(HostBatch::Head::mlm, false, /*reset=*/true), /*training=*/false);
        const models::Model::RowReadout& readout = model.readout();  // O(rows) bytes down
        for (int b = 0; b < B && start + b < n; ++b) {
            auto& p = out[static_cast<std::size_t>(start + b)];
            if (first_of[b] < 1) continue;
            double loss = 0;
            for (std::int32_t t = answer_at[b]; t <= answer_at[b] + last_of[b] - first_of[b]; ++t) {
                const std::int32_t gold = batch.labels(b)[t];
                const auto at = static_cast<std::size_t>(b) * static_cast<std::size_t>(L) +
                                static_cast<std::size_t>(t);
                p.predicted.push_back(readout.argmax[at]);
                p.expected.push_back(gold);
                loss += readout.nll[at];
            }
            p.scored = true;
            p.correct = p.predicted == p.expected;
            p.loss = loss / static_cast<double>(p.expected.size());
        }
    }
    return out;
}

}  // namespace routescope::train
