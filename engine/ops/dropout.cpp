#include "engine/ops/dropout.hpp"

#include <string>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/philox.hpp"

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 16384;  // elements below which threads do not pay off

void check_site(const DropoutSite& site) {
    if (!(site.p >= 0.0f && site.p < 1.0f)) {
        throw Error("dropout: probability " + number_text(site.p) + " is outside [0, 1)");
    }
}

// Applies fn(i, scale_or_zero) over [s, e), drawing one Philox block per four elements.
template <class F>
void for_each_mask(const DropoutSite& site, std::int64_t s, std::int64_t e, F&& fn) {
    const float scale = 1.0f / (1.0f - site.p);
    const PhiloxKey key = {static_cast<std::uint32_t>(site.seed),
                           static_cast<std::uint32_t>(site.seed >> 32)};
    PhiloxCounter block{};
    for (std::int64_t i = s; i < e; ++i) {
        const auto u = site.offset + static_cast<std::uint64_t>(i);
        if (i == s || (u & 3u) == 0) {
            const std::uint64_t c = u >> 2;
            block = philox4x32_10({static_cast<std::uint32_t>(c),
                                   static_cast<std::uint32_t>(c >> 32), site.stream, site.step},
                                  key);
        }
        fn(i, uniform_from_bits(block[u & 3u]) >= site.p ? scale : 0.0f);
    }
}
}  // namespace

bool dropout_keeps(const DropoutSite& site, std::int64_t i) {
    return uniform_from_bits(philox_bits(site.seed, site.step, site.stream,
                                         site.offset + static_cast<std::uint64_t>(i))) >= site.p;
}

template <class T>
void dropout_forward(T* out, const T* x, std::int64_t n, const DropoutSite& site,
                     ThreadPool& pool) {
    check_site(site);
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        if (site.p == 0.0f) {
            for (std::int64_t i = s; i < e; ++i)
                out[i] = x[i];
            return;
        }
        for_each_mask(site, s, e, [&](std::int64_t i, float m) { out[i] = x[i] * T(m); });
    });
}

template <class T>
void dropout_backward(T* dx, const T* dout, std::int64_t n, const DropoutSite& site,
                      ThreadPool& pool) {
    check_site(site);
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        if (site.p == 0.0f) {
            for (std::int64_t i = s; i < e; ++i)
                dx[i] += dout[i];
            return;
        }
        for_each_mask(site, s, e, [&](std::int64_t i, float m) { dx[i] += dout[i] * T(m); });
    });
}

OpCost dropout_cost(std::int64_t n, int bytes_per_element) {
    // Philox4x32-10: 10 rounds of 2 multiplies and 4 xors per 4 elements, counted as integer ops.
    return {16.0 * static_cast<double>(n), 2.0 * bytes_per_element * static_cast<double>(n)};
}

template void dropout_forward<float>(float*, const float*, std::int64_t, const DropoutSite&,
                                     ThreadPool&);
template void dropout_forward<double>(double*, const double*, std::int64_t, const DropoutSite&,
                                      ThreadPool&);
template void dropout_backward<float>(float*, const float*, std::int64_t, const DropoutSite&,
                                      ThreadPool&);
template void dropout_backward<double>(double*, const double*, std::int64_t, const DropoutSite&,
                                       ThreadPool&);

}  // namespace routescope::ops
