#include "engine/ops/elementwise.hpp"

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 32768;  // elements below which threads do not pay off
}

template <class T>
void add_forward(T* out, const T* a, const T* b, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i)
            out[i] = a[i] + b[i];
    });
}

template <class T>
void add_backward(std::type_identity_t<T>* da, std::type_identity_t<T>* db, const T* dout,
                  std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        if (da) {
            for (std::int64_t i = s; i < e; ++i)
                da[i] += dout[i];
        }
        if (db) {
            for (std::int64_t i = s; i < e; ++i)
                db[i] += dout[i];
        }
    });
}

template <class T>
void mul_forward(T* out, const T* a, const T* b, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i)
            out[i] = a[i] * b[i];
    });
}

template <class T>
void mul_backward(std::type_identity_t<T>* da, std::type_identity_t<T>* db, const T* dout,
                  const T* a, const T* b, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i) {
            const T g = dout[i];
            const T ai = a[i], bi = b[i];  // read before writing: da or db may alias a or b's grad
            if (da) da[i] += g * bi;
            if (db) db[i] += g * ai;
        }
    });
}

OpCost add_cost(std::int64_t n, int bytes_per_element) {
    return {static_cast<double>(n), 3.0 * bytes_per_element * static_cast<double>(n)};
}

OpCost mul_cost(std::int64_t n, int bytes_per_element) {
    return {static_cast<double>(n), 3.0 * bytes_per_element * static_cast<double>(n)};
}

#define ROUTESCOPE_INSTANTIATE(T)                                                    \
    template void add_forward<T>(T*, const T*, const T*, std::int64_t, ThreadPool&); \
    template void add_backward<T>(T*, T*, const T*, std::int64_t, ThreadPool&);      \
    template void mul_forward<T>(T*, const T*, const T*, std::int64_t, ThreadPool&); \
    template void mul_backward<T>(T*, T*, const T*, const T*, const T*, std::int64_t, ThreadPool&);
ROUTESCOPE_INSTANTIATE(float)
ROUTESCOPE_INSTANTIATE(double)
#undef ROUTESCOPE_INSTANTIATE

}  // namespace routescope::ops
