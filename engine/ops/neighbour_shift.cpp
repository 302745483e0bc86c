#include "engine/ops/neighbour_shift.hpp"

#include <algorithm>
#include <string>

#include "engine/core/error.hpp"

namespace routescope::ops {

namespace {
void check(const std::int32_t* lengths, int B, int L, int offset, const char* where) {
    if (offset != -1 && offset != 1)
        throw Error(std::string(where) + ": offset " + std::to_string(offset) +
                    " is neither −1 (left) nor +1 (right)");
    for (int b = 0; b < B; ++b)
        if (lengths[b] < 0 || lengths[b] > L)
            throw Error(std::string(where) + ": length " + std::to_string(lengths[b]) +
                        " of sequence " + std::to_string(b) + " is outside [0, " +
                        std::to_string(L) + "]");
}

// Whether position t reads a neighbour (t + offset inside [0, length)).
inline bool has_neighbour(int t, int offset, int length) {
    const int s = t + offset;
    return s >= 0 && s < length;
}
}  // namespace

template <class T>
void neighbour_shift_forward(T* y, const T* x, const std::int32_t* lengths, int B, int L, int d,
                             int offset, ThreadPool& pool) {
    check(lengths, B, L, offset, "neighbour_shift_forward");
    pool.parallel_for(std::int64_t(B) * L, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const int b = static_cast<int>(r / L), t = static_cast<int>(r % L);
            T* out = y + r * d;
            if (has_neighbour(t, offset, lengths[b]))
                std::copy_n(x + (r + offset) * d, d, out);
            else
                std::fill(out, out + d, T(0));
        }
    });
}

template <class T>
void neighbour_shift_backward(T* dx, const T* dy, const std::int32_t* lengths, int B, int L, int d,
                              int offset, ThreadPool& pool) {
    check(lengths, B, L, offset, "neighbour_shift_backward");
    // Parallel over the rows of dx: row r receives from row r − offset only, so no two writers.
    pool.parallel_for(std::int64_t(B) * L, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const int b = static_cast<int>(r / L), t = static_cast<int>(r % L) - offset;
            if (t < 0 || t >= L || !has_neighbour(t, offset, lengths[b])) continue;
            T* out = dx + r * d;
            const T* g = dy + (r - offset) * d;
            for (int c = 0; c < d; ++c)
                out[c] += g[c];
        }
    });
}

OpCost neighbour_shift_cost(int B, int L, int d, int bytes_per_element) {
    return {0.0, 2.0 * bytes_per_element * double(B) * L * d};
}

template void neighbour_shift_forward<float>(float*, const float*, const std::int32_t*, int, int,
                                             int, int, ThreadPool&);
template void neighbour_shift_forward<double>(double*, const double*, const std::int32_t*, int, int,
                                              int, int, ThreadPool&);
template void neighbour_shift_backward<float>(float*, const float*, const std::int32_t*, int, int,
                                              int, int, ThreadPool&);
template void neighbour_shift_backward<double>(double*, const double*, const std::int32_t*, int,
                                               int, int, int, ThreadPool&);

}  // namespace routescope::ops
