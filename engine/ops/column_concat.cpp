#include "engine/ops/column_concat.hpp"

#include <algorithm>

namespace routescope::ops {

namespace {
int total(const int* cols, int K) {
    int n = 0;
    for (int k = 0; k < K; ++k)
        n += cols[k];
    return n;
}
// Rows per chunk below which the fan-out costs more than the copy (as column_slice).
std::int64_t row_grain(int width) {
    return std::max<std::int64_t>(1, 32768 / std::max(1, width));
}
}  // namespace

template <class T>
void column_concat_forward(T* y, const T* const* x, const int* cols, int K, std::int64_t rows,
                           ThreadPool& pool) {
    const int width = total(cols, K);
    pool.parallel_for(rows, row_grain(width), [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            T* out = y + r * width;
            for (int k = 0; k < K; ++k) {
                std::copy_n(x[k] + r * cols[k], cols[k], out);
                out += cols[k];
            }
        }
    });
}

template <class T>
void column_concat_backward(T* const* dx, const T* dy, const int* cols, int K, std::int64_t rows,
                            ThreadPool& pool) {
    const int width = total(cols, K);
    pool.parallel_for(rows, row_grain(width), [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const T* g = dy + r * width;
            for (int k = 0; k < K; ++k) {
                if (dx[k]) {
                    T* out = dx[k] + r * cols[k];
                    for (int j = 0; j < cols[k]; ++j)
                        out[j] += g[j];
                }
                g += cols[k];
            }
        }
    });
}

OpCost column_concat_cost(std::int64_t rows, int total_cols, int bytes_per_element) {
    return {0.0, 2.0 * bytes_per_element * double(rows) * total_cols};
}

template void column_concat_forward<float>(float*, const float* const*, const int*, int,
                                           std::int64_t, ThreadPool&);
template void column_concat_forward<double>(double*, const double* const*, const int*, int,
                                            std::int64_t, ThreadPool&);
template void column_concat_backward<float>(float* const*, const float*, const int*, int,
                                            std::int64_t, ThreadPool&);
template void column_concat_backward<double>(double* const*, const double*, const int*, int,
                                             std::int64_t, ThreadPool&);

}  // namespace routescope::ops
