#pragma once
// The float32 values a float16 conversion is tested on (test_dump_writer against numpy, and
// test_backend_conformance: the CUDA backend's Backend::to_half against the CPU's): every binary16
// value, its neighbours one float ulp away, the exact midpoints between consecutive halves (ties:
// to even) and one float ulp either side of them, the overflow edge (65504, 65520), the subnormal
// range and below, random normals over 60 binades, ±0, ±inf, a quiet NaN of each sign.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

inline std::vector<float> half_test_values() {
    std::vector<float> x;
    auto as_float = [](std::uint32_t u) {
        float f;
        std::memcpy(&f, &u, sizeof f);
        return f;
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (std::uint32_t h = 0; h < 0x7C00u; ++h) {
        // the half h as a float: (1 + m/1024) · 2^(e − 15), or m · 2^-24 for e = 0
        const int e = static_cast<int>(h >> 10), m = static_cast<int>(h & 0x3FFu);
        const float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
                               : std::ldexp(1.0f + m / 1024.0f, e - 15);
        const float up = std::nextafter(v, inf), down = std::nextafter(v, -inf);
        for (float s : {1.0f, -1.0f})
            for (float w : {v, up, down})
                x.push_back(s * w);
    }
    for (std::uint32_t h = 0; h + 1 < 0x7C00u; ++h) {  // midpoints: exact in float
        const int e0 = static_cast<int>(h >> 10), m0 = static_cast<int>(h & 0x3FFu);
        const int e1 = static_cast<int>((h + 1) >> 10), m1 = static_cast<int>((h + 1) & 0x3FFu);
        const double a = e0 == 0 ? std::ldexp(m0, -24) : std::ldexp(1.0 + m0 / 1024.0, e0 - 15);
        const double b = e1 == 0 ? std::ldexp(m1, -24) : std::ldexp(1.0 + m1 / 1024.0, e1 - 15);
        const float mid = static_cast<float>((a + b) / 2);
        for (float s : {1.0f, -1.0f})
            for (float w : {mid, std::nextafter(mid, inf), std::nextafter(mid, -inf)})
                x.push_back(s * w);
    }
    for (float v : {65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e10f, 3e38f, 2.9802322e-8f,
                    2.9802326e-8f, 5.9604645e-8f, 1e-30f, 1.4e-45f, 0.0f, -0.0f, inf, -inf,
                    0.124983f, std::nextafter(65520.0f, 0.0f)})
        x.push_back(v), x.push_back(-v);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    for (int i = 0; i < 200000; ++i)
        x.push_back(normal(rng) * std::exp2(static_cast<float>(i % 60 - 40)));
    x.push_back(as_float(0x7FC00000u));  // quiet NaN, both signs
    x.push_back(as_float(0xFFC00000u));
    return x;
}
