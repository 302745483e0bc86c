#include "engine/ops/row_readout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace routescope::ops {

void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                 std::int64_t width, std::int32_t* argmax, double* nll, ThreadPool& pool) {
    pool.parallel_for(rows, 16, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
            const float* row = logits + r * width;
            // The first maximum, a NaN never the maximum (a row of NaN predicts 0): as
            // std::max_element where the row holds no NaN, and as the CUDA backend's row
            // reduction (engine/backend/cuda/flat.hpp) on every row.
            std::int64_t best = -1;
            for (std::int64_t i = 0; i < width; ++i)
                if (!std::isnan(row[i]) && (best < 0 || row[i] > row[best])) best = i;
            const float* top = row + (best < 0 ? 0 : best);
            argmax[r] = static_cast<std::int32_t>(top - row);
            if (!targets || !nll) continue;
            const std::int32_t k = targets[r];
            if (k < 0 || k >= width) {
                nll[r] = std::numeric_limits<double>::quiet_NaN();
                continue;
            }
            const float mx = *top;
            double sum = 0;
            for (std::int64_t i = 0; i < width; ++i)
                sum += std::exp(static_cast<double>(row[i]) - mx);
            nll[r] = std::log(sum) + mx - row[k];
        }
    });
}

}  // namespace routescope::ops
