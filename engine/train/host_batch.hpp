#pragma once
// A batch's host arrays (models::HostBatch, engine/models/host_batch.hpp) as the training side
// fills them: a labelled example into a row (fine-tuning, predict_set), and a row as the objective
// row builders write it (objective_rows.hpp).
#include <cstdint>
#include <string>

#include "engine/core/error.hpp"
#include "engine/models/host_batch.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/objective_rows.hpp"

namespace routescope::train {

class HostBatch : public models::HostBatch {
public:
    using models::HostBatch::HostBatch;

    /// Row b ← a labelled example (tokens, segments, targets, class label ≥ 0 or 0); its length.
    /// Error naming `source` when the example does not fit L.
    std::int32_t put(int b, const LabelledExample& e, const std::string& source) {
        const auto n = static_cast<int>(e.tokens.size());
        if (n > L_ || n < 1)
            throw Error(source + ": an example of " + std::to_string(n) +
                        " tokens does not fit the model's length " + std::to_string(L_));
        clear_row(b);
        const auto off = offset(b);
        std::copy(e.tokens.begin(), e.tokens.end(),
                  tokens_.begin() + static_cast<std::ptrdiff_t>(off));
        std::copy(e.types.begin(), e.types.end(), types_.begin() + off);
        if (!e.targets.empty())
            std::copy(e.targets.begin(), e.targets.end(), labels_.begin() + off);
        lengths_[std::size_t(b)] = n;
        classes_[std::size_t(b)] = std::max(0, e.label);
        return n;
    }

    /// Row b as the objective row builders write it (objective_rows.hpp).
    RowView row(int b) {
        const auto off = offset(b);
        return {tokens_.data() + off, labels_.data() + off, reset_.data() + off, L_};
    }
};

}  // namespace routescope::train
