#include "engine/ops/embedding.hpp"

#include <algorithm>
#include <string>

#include "engine/core/error.hpp"

namespace routescope::ops {

namespace {
void check_ids(const std::int32_t* ids, std::int64_t n, int vocab, const char* where) {
    for (std::int64_t i = 0; i < n; ++i) {
        if (ids[i] < 0 || ids[i] >= vocab) {
            throw Error(std::string(where) + ": token id " + std::to_string(ids[i]) +
                        " at position " + std::to_string(i) + " is outside the vocabulary [0, " +
                        std::to_string(vocab) + ")");
        }
    }
}
}  // namespace

template <class T>
void embedding_forward(T* out, const std::int32_t* ids, const T* table, std::int64_t n, int vocab,
                       int d, ThreadPool& pool) {
    check_ids(ids, n, vocab, "embedding_forward");
    pool.parallel_for(n, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i) {
            const T* row = table + static_cast<std::int64_t>(ids[i]) * d;
            std::copy(row, row + d, out + i * d);
        }
    });
}

template <class T>
void embedding_backward(T* dtable, const T* dout, const std::int32_t* ids, std::int64_t n,
                        int vocab, int d, ThreadPool& pool) {
    check_ids(ids, n, vocab, "embedding_backward");
    pool.parallel_for(d, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = 0; i < n; ++i) {
            T* row = dtable + static_cast<std::int64_t>(ids[i]) * d;
            const T* g = dout + i * d;
            for (std::int64_t c = s; c < e; ++c)
                row[c] += g[c];
        }
    });
}

OpCost embedding_cost(std::int64_t n, int d, int bytes_per_element) {
    return {0.0, 2.0 * bytes_per_element * static_cast<double>(n) * d + 4.0 * n};
}

template void embedding_forward<float>(float*, const std::int32_t*, const float*, std::int64_t, int,
                                       int, ThreadPool&);
template void embedding_forward<double>(double*, const std::int32_t*, const double*, std::int64_t,
                                        int, int, ThreadPool&);
template void embedding_backward<float>(float*, const float*, const std::int32_t*, std::int64_t,
                                        int, int, ThreadPool&);
template void embedding_backward<double>(double*, const double*, const std::int32_t*, std::int64_t,
                                         int, int, ThreadPool&);

}  // namespace routescope::ops
