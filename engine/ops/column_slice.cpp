#include "engine/ops/column_slice.hpp"

#include <algorithm>

namespace routescope::ops {

namespace {
// Rows per chunk below which the fan-out costs more than the copy (a few tens of thousands of
// elements, as the elementwise ops' grain).
std::int64_t row_grain(int count) {
    return std::max<std::int64_t>(1, 32768 / std::max(1, count));
}
}  // namespace

template <class T>
void column_slice_forward(T* y, const T* x, std::int64_t rows, int cols, int begin, int count,
                          ThreadPool& pool) {
    pool.parallel_for(rows, row_grain(count), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t r = b; r < e; ++r)
            std::copy_n(x + r * cols + begin, count, y + r * count);
    });
}

template <class T>
void column_slice_backward(T* dx, const T* dy, std::int64_t rows, int cols, int begin, int count,
                           ThreadPool& pool) {
    pool.parallel_for(rows, row_grain(count), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t r = b; r < e; ++r) {
            T* d = dx + r * cols + begin;
            const T* g = dy + r * count;
            for (int k = 0; k < count; ++k)
                d[k] += g[k];
        }
    });
}

OpCost column_slice_cost(std::int64_t rows, int count, int bytes_per_element) {
    return {0.0, 2.0 * bytes_per_element * static_cast<double>(rows) * count};
}

template void column_slice_forward<float>(float*, const float*, std::int64_t, int, int, int,
                                          ThreadPool&);
template void column_slice_forward<double>(double*, const double*, std::int64_t, int, int, int,
                                           ThreadPool&);
template void column_slice_backward<float>(float*, const float*, std::int64_t, int, int, int,
                                           ThreadPool&);
template void column_slice_backward<double>(double*, const double*, std::int64_t, int, int, int,
                                            ThreadPool&);

}  // namespace routescope::ops
