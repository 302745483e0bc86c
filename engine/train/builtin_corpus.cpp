#include "engine/train/builtin_corpus.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

#include "engine/core/error.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::train {

namespace {

constexpr std::array<std::string_view, 8> kNouns = {"dog",     "cat",    "bird",  "child",
                                                    "teacher", "farmer", "horse", "robot"};
constexpr std::array<std::string_view, 8> kPlurals = {"dogs",     "cats",    "birds",  "children",
                                                      "teachers", "farmers", "horses", "robots"};
constexpr std::array<std::string_view, 6> kVerbs = {"chase",  "see",  "like",
                                                    "follow", "help", "find"};
constexpr std::array<std::string_view, 6> kAdjectives = {"small", "old",   "happy",
                                                         "quick", "quiet", "red"};
constexpr std::array<std::string_view, 4> kPrepositions = {"near", "behind", "with", "beside"};
constexpr std::array<std::string_view, 5> kObjects = {"ball", "box", "tree", "river", "house"};
constexpr std::array<std::string_view, 12> kNumbers = {"one",  "two", "three",  "four",
                                                       "five", "six", "seven",  "eight",
                                                       "nine", "ten", "eleven", "twelve"};

template <std::size_t N>
std::string_view pick(const std::array<std::string_view, N>& words, data::RandomStream& rng) {
    return words[static_cast<std::size_t>(rng.below(N))];
}

// "the [adj] noun(s) [prep the noun(s)] verb(s) a|the [adj] object ."
std::string sentence(data::RandomStream& rng) {
    std::string s;
    const bool plural = rng.chance(0.5);
    const auto noun = static_cast<std::size_t>(rng.below(kNouns.size()));
    s += "the ";
    if (rng.chance(0.5)) (s += pick(kAdjectives, rng)) += ' ';
    s += plural ? kPlurals[noun] : kNouns[noun];
    if (rng.chance(0.4)) {
        // An attractor (Linzen et al. 2016): its number never decides the verb.
        const auto other = static_cast<std::size_t>(rng.below(kNouns.size()));
        ((s += ' ') += pick(kPrepositions, rng)) += " the ";
        s += rng.chance(0.5) ? kPlurals[other] : kNouns[other];
    }
    (s += ' ') += pick(kVerbs, rng);
    if (!plural) s += 's';
    s += rng.chance(0.5) ? " a " : " the ";
    if (rng.chance(0.3)) (s += pick(kAdjectives, rng)) += ' ';
    s += pick(kObjects, rng);
    s += " .";
    return s;
}

std::string counting(data::RandomStream& rng) {
    const auto start = static_cast<std::size_t>(rng.below(6));
    const auto n = static_cast<std::size_t>(3 + rng.below(4));
    std::string s;
    for (std::size_t i = start; i < start + n && i < kNumbers.size(); ++i) {
        if (!s.empty()) s += ' ';
        s += kNumbers[i];
    }
    return s;
}

}  // namespace

bool is_builtin_corpus(const std::string& path) {
    return path.rfind(kBuiltinCorpusPrefix, 0) == 0;
}

void write_builtin_corpus(const std::string& spec, const std::string& file, std::uint64_t seed,
                          int documents) {
    const std::string name = spec.substr(std::string_view(kBuiltinCorpusPrefix).size());
    if (name != "grammar")
        throw ConfigError("data.train: '" + spec + "' is not a built-in corpus (builtin:grammar)");
    // A temporary beside the file, renamed when complete: a full disk or a kill never leaves a
    // half-written corpus under the name a resumed run would read.
    // (".<name>.tmp-<pid>", swept by the next writer when a kill left it.)
    remove_stale_temporaries(file);
    const std::string tmp = temporary_path_for(file);
    struct Cleanup {
        const std::string& path;
        bool done = false;
        ~Cleanup() {
            if (!done) std::remove(path.c_str());
        }
    } cleanup{tmp};
    const TemporaryFileGuard guard(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
        throw RuntimeFailure(file + ": cannot write the built-in corpus: " + std::strerror(errno));
    for (int d = 0; d < documents; ++d) {
        data::RandomStream rng(seed ^ data::kTaskSalt, 0, static_cast<std::uint32_t>(d));
        std::string doc;
        const auto sentences = 1 + rng.below(3);
        for (std::uint64_t k = 0; k < sentences; ++k) {
            if (!doc.empty()) doc += ' ';
            doc += rng.chance(0.15) ? counting(rng) : sentence(rng);
        }
        out << doc << '\n';
    }
    out.close();
    if (!out)
        throw RuntimeFailure(file + ": cannot write the built-in corpus: " + std::strerror(errno));
    if (std::rename(tmp.c_str(), file.c_str()) != 0)
        throw RuntimeFailure(file + ": cannot rename the built-in corpus into place");
    cleanup.done = true;
}

}  // namespace routescope::train
