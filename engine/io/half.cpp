#include "engine/io/half.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define ROUTESCOPE_F16C 1
#endif

namespace routescope {
namespace {

#ifdef ROUTESCOPE_F16C
// vcvtps2ph with round-to-nearest-even: the bits half_bits gives (a NaN included: quiet, payload
// truncated), 8 values per instruction.
__attribute__((target("avx,f16c"))) void to_half_f16c(const float* x, std::size_t n,
                                                      std::uint16_t* out) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h =
            _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
    for (; i < n; ++i)
        out[i] = half_bits(x[i]);
}

__attribute__((target("avx,f16c"))) void from_half_f16c(const unsigned char* h, std::size_t n,
                                                        float* out) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(
            out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 2 * i))));
    for (; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, h + 2 * i, sizeof v);
        out[i] = half_to_float(v);
    }
}

// AVX usable (the CPU has it and the OS saves its registers) and F16C (CPUID leaf 1, ECX bit 29;
// clang's __builtin_cpu_supports does not know "f16c").
bool has_f16c() {
    static const bool yes = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) != 0 &&
               (c & bit_F16C) != 0;
    }();
    return yes;
}
#endif

}  // namespace

void to_half(const float* x, std::size_t n, std::uint16_t* out) {
#ifdef ROUTESCOPE_F16C
    if (has_f16c()) return to_half_f16c(x, n, out);
#endif
    for (std::size_t i = 0; i < n; ++i)
        out[i] = half_bits(x[i]);
}

}  // namespace routescope

namespace routescope {

void from_half(const void* halves, std::size_t n, float* out) {
    const auto* h = static_cast<const unsigned char*>(halves);
#ifdef ROUTESCOPE_F16C
    if (has_f16c()) return from_half_f16c(h, n, out);
#endif
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, h + 2 * i, sizeof v);
        out[i] = half_to_float(v);
    }
}

}  // namespace routescope
