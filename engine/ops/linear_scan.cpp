#include "engine/ops/linear_scan.hpp"

#include <algorithm>
#include <array>

namespace routescope::ops {

namespace {

// Channels per work item: the carry of one item lives in a stack array, and the inner loop over
// contiguous channels vectorises. Items are (batch row, channel block) pairs, split statically.
constexpr int kBlock = 64;

struct Items {
    int blocks;
    std::int64_t count;
};

Items items(int B, int c0, int c1) {
    const int blocks = (c1 - c0 + kBlock - 1) / kBlock;
    return {blocks, std::int64_t(B) * blocks};
}

// Position of step s of a scan in `direction`, and the position the carry comes from.
int position(int s, int L, ScanDirection direction) {
    return direction == ScanDirection::forward ? s : L - 1 - s;
}

}  // namespace

template <class T>
void linear_scan_forward(T* h, const T* f, const T* x, const std::int32_t* keep, int B, int L,
                         int N, int c0, int c1, ScanDirection direction, ThreadPool& pool) {
    if (c1 <= c0 || L <= 0) return;
    const Items it = items(B, c0, c1);
    pool.parallel_for(it.count, [&](std::int64_t begin, std::int64_t end) {
        std::array<T, kBlock> carry;
        for (std::int64_t item = begin; item < end; ++item) {
            const int b = static_cast<int>(item / it.blocks);
            const int lo = c0 + static_cast<int>(item % it.blocks) * kBlock;
            const int n = std::min(kBlock, c1 - lo);
            carry.fill(T(0));
            for (int s = 0; s < L; ++s) {
                const int t = position(s, L, direction);
                const std::int64_t row = (std::int64_t(b) * L + t) * N + lo;
                const bool pass = s > 0 && (!keep || keep[std::int64_t(b) * L + t] != 0);
                const T* fr = f + row;
                const T* xr = x + row;
                T* hr = h + row;
                if (pass)
                    for (int c = 0; c < n; ++c)
                        carry[c] = fr[c] * carry[c] + xr[c];
                else
                    for (int c = 0; c < n; ++c)
                        carry[c] = xr[c];
                std::copy_n(carry.data(), n, hr);
            }
        }
    });
}

template <class T>
void linear_scan_backward(T* df, T* dx, const T* dh, const T* h, const T* f,
                          const std::int32_t* keep, int B, int L, int N, int c0, int c1,
                          ScanDirection direction, ThreadPool& pool) {
    if (c1 <= c0 || L <= 0) return;
    const Items it = items(B, c0, c1);
    pool.parallel_for(it.count, [&](std::int64_t begin, std::int64_t end) {
        // passed[c] = keep_next · f_next · g_next: what the later step (in scan order) sends back.
        std::array<T, kBlock> passed;
        for (std::int64_t item = begin; item < end; ++item) {
            const int b = static_cast<int>(item / it.blocks);
            const int lo = c0 + static_cast<int>(item % it.blocks) * kBlock;
            const int n = std::min(kBlock, c1 - lo);
            passed.fill(T(0));
            for (int s = L - 1; s >= 0; --s) {
                const int t = position(s, L, direction);
                const std::int64_t row = (std::int64_t(b) * L + t) * N + lo;
                const bool pass = s > 0 && (!keep || keep[std::int64_t(b) * L + t] != 0);
                const T* fr = f + row;
                const T* dhr = dh + row;
                T* dfr = df + row;
                T* dxr = dx + row;
                if (pass) {
                    const int prev = position(s - 1, L, direction);
                    const T* hp = h + (std::int64_t(b) * L + prev) * N + lo;
                    for (int c = 0; c < n; ++c) {
                        const T g = dhr[c] + passed[c];
                        dxr[c] += g;
                        dfr[c] += g * hp[c];
                        passed[c] = fr[c] * g;
                    }
                } else {
                    for (int c = 0; c < n; ++c) {
                        dxr[c] += dhr[c] + passed[c];
                        passed[c] = T(0);
                    }
                }
            }
        }
    });
}

OpCost linear_scan_cost(int B, int L, int channels, int bytes_per_element) {
    const double n = double(B) * L * channels;
    return {2.0 * n, 3.0 * bytes_per_element * n};  // one fma per element; read f, x, write h
}

template void linear_scan_forward<float>(float*, const float*, const float*, const std::int32_t*,
                                         int, int, int, int, int, ScanDirection, ThreadPool&);
template void linear_scan_forward<double>(double*, const double*, const double*,
                                          const std::int32_t*, int, int, int, int, int,
                                          ScanDirection, ThreadPool&);
template void linear_scan_backward<float>(float*, float*, const float*, const float*, const float*,
                                          const std::int32_t*, int, int, int, int, int,
                                          ScanDirection, ThreadPool&);
template void linear_scan_backward<double>(double*, double*, const double*, const double*,
                                           const double*, const std::int32_t*, int, int, int, int,
                                           int, ScanDirection, ThreadPool&);

}  // namespace routescope::ops
