#pragma once
// A sequence of random draws that is a pure function of (seed, step, stream) and the draw's
// index, through the engine's counter-based Philox4x32-10 (engine/core/philox.hpp). Data code
// (MLM replacement tokens, epoch shuffles, task generators) draws from streams keyed by what it
// is generating (an example's index, an epoch), so a result never depends on thread count or
// on what was generated before it.
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/core/philox.hpp"

namespace routescope::data {

/// Seeds of different data uses are separated by xor with a salt, so a training seed that also
/// drives dropout (same seed, step, stream numbers) never yields correlated data draws.
inline constexpr std::uint64_t kMlmSalt = 0x6D6C6D5F6D61736BULL;      // "mlm_mask"
inline constexpr std::uint64_t kShuffleSalt = 0x73687566666C6531ULL;  // "shuffle1"
inline constexpr std::uint64_t kTaskSalt = 0x7461736B67656E31ULL;     // "taskgen1"
/// Dropout's masks (engine/models/model.cpp). The parameters are drawn from the unsalted seed at
/// step 0, stream e (tensor e); unsalted, step 0's embedding dropout (site 0) read the very words
/// that drew embeddings.word.weight, so every activation 2i whose weight i was large was dropped.
inline constexpr std::uint64_t kDropoutSalt = 0x64726F706F757431ULL;  // "dropout1"

class RandomStream {
public:
    RandomStream(std::uint64_t seed, std::uint32_t step, std::uint32_t stream)
        : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)},
          step_(step),
          stream_(stream) {}

    /// The next 32 random bits.
    std::uint32_t bits() {
        if ((index_ & 3u) == 0) {
            const std::uint64_t c = index_ >> 2;
            block_ = philox4x32_10({static_cast<std::uint32_t>(c),
                                    static_cast<std::uint32_t>(c >> 32), stream_, step_},
                                   key_);
        }
        return block_[index_++ & 3u];
    }
    /// Uniform on [0, 1) with 53 random bits.
    double uniform() {
        const std::uint64_t hi = bits() >> 5, lo = bits() >> 6;                    // 27 + 26 bits
        return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);  // 2^-53
    }
    /// Uniform integer in [0, n), n > 0: the high half of a 64×64-bit product (Lemire's
    /// multiply-shift; the bias is below n / 2^64, far under anything measurable).
    std::uint64_t below(std::uint64_t n) {
        const std::uint64_t r = (static_cast<std::uint64_t>(bits()) << 32) | bits();
        __extension__ using u128 = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<u128>(r) * n) >> 64);
    }
    /// Uniform integer in [lo, hi] (inclusive).
    std::int64_t between(std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo + 1)));
    }
    bool chance(double p) { return uniform() < p; }
    /// Fisher–Yates shuffle.
    template <class T>
    void shuffle(std::vector<T>& v) {
        for (std::size_t i = v.size(); i > 1; --i)
            std::swap(v[i - 1], v[static_cast<std::size_t>(below(i))]);
    }

private:
    PhiloxKey key_;
    std::uint32_t step_;
    std::uint32_t stream_;
    std::uint64_t index_ = 0;
    PhiloxCounter block_{};
};

}  // namespace routescope::data
