#pragma once
// The product entry-point targets (fuzz_inspect_entry, fuzz_analyze_entry, fuzz_loader_entry):
// each runs the code a command or the workbench's loader runs on a user's file, the contained
// check in a forked child included. A crash of that child (libhdf5's own crashes on corrupt
// metadata, issue 25) is a verdict the product handles, not a finding; only a crash of this
// process is. Verdicts are counted and printed ("verdicts: ...") every 1000 inputs and at exit,
// for the campaign tables of docs/reliability.md.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/io/validation.hpp"

namespace routescope::fuzz {

struct Verdicts {
    std::atomic<long> inputs{0}, crashed{0}, timed_out{0}, threw{0}, unreadable{0}, invalid{0},
        valid{0}, opened{0};
    const char* name = "";
    void print() const {
        std::fprintf(stderr,
                     "verdicts[%s]: inputs %ld, child crashed %ld, child timed out %ld, child "
                     "threw %ld, unreadable %ld, invalid %ld, valid %ld, opened in-process %ld\n",
                     name, inputs.load(), crashed.load(), timed_out.load(), threw.load(),
                     unreadable.load(), invalid.load(), valid.load(), opened.load());
    }
    void count(const ValidationReport& r) {
        ++inputs;
        const std::string found = r.violations.empty() ? "" : r.violations.front().found;
        if (r.crashed) {
            if (found.find("did not finish") != std::string::npos)
                ++timed_out;
            else if (found.find("error while reading") != std::string::npos)
                ++threw;
            else
                ++crashed;
        } else if (!r.readable) {
            ++unreadable;
        } else if (!r.ok()) {
            ++invalid;
        } else {
            ++valid;
        }
        if (inputs % 1000 == 0) print();
    }
};

inline Verdicts& verdicts(const char* name) {
    static Verdicts v;
    static const bool once = [&] {
        v.name = name;
        std::atexit([] { verdicts("").print(); });
        return true;
    }();
    (void)once;
    return v;
}

/// The child's time limit in the targets: the product's own are 60 s (GUI) and 120 s (CLI); a
/// campaign stops a hung child after 5 s (ROUTESCOPE_FUZZ_CHILD_TIMEOUT_S overrides).
inline double child_timeout() {
    const char* s = std::getenv("ROUTESCOPE_FUZZ_CHILD_TIMEOUT_S");
    return s ? std::atof(s) : 5.0;
}

}  // namespace routescope::fuzz
