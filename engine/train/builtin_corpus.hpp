#pragma once
// A built-in text corpus for trying a run with no data at hand: `data.train = "builtin:grammar"`.
// Documents are sentences of a small English-like grammar with subject–verb agreement ("the small
// dogs near the cat chase a ball .") and a few counting lines ("two three four five"), generated
// from the run's seed: enough structure that MLM loss falls well below the unigram entropy within
// a few hundred steps, which is what the example configs and the demo need. It is written once to
// a text file in the run directory and then read like any other corpus (TASKS.md, one document
// per line), so a checkpoint's data position means the same thing as for a user corpus.
#include <cstdint>
#include <string>

namespace routescope::train {

inline constexpr const char* kBuiltinCorpusPrefix = "builtin:";

/// True for "builtin:<name>".
bool is_builtin_corpus(const std::string& path);

/// Writes the documents of corpus "builtin:<name>" (only "grammar" exists) to `file`, one per
/// line, from `seed`; `documents` lines. ConfigError for an unknown name, IoError when `file`
/// cannot be written.
void write_builtin_corpus(const std::string& spec, const std::string& file, std::uint64_t seed,
                          int documents = 4000);

}  // namespace routescope::train
