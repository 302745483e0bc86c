#include "app/cli/rank_agreement.hpp"

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "engine/dist/communicator.hpp"

namespace routescope::cli {

int agree_on_failure(dist::Communicator& w, std::exception_ptr error, const std::string& report) {
    const int failed = dist::first_rank_with(w, error != nullptr || !report.empty());
    // 0: healthy; otherwise the digest of what the rank failed with (odd, never 0).
    std::uint64_t digest = 0;
    if (error) {
        std::string message = "unknown error";
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            message = e.what();
        } catch (...) {
        }
        digest = dist::fnv1a(message) | 1U;
    } else if (!report.empty()) {
        digest = dist::fnv1a(report) | 1U;
    }
    const auto digests = w.size() == 1 ? std::vector<std::uint64_t>{digest}
                                       : dist::gather_all<std::uint64_t>(w, digest);
    const auto at = [&](int r) { return digests[static_cast<std::size_t>(r)]; };
    const bool said_by_another = failed >= 0 && failed != w.rank() && at(failed) == digest;
    if (error) {
        if (said_by_another) quiet_error_message();
        std::rethrow_exception(error);
    }
    if (!report.empty()) {
        if (!said_by_another) std::cerr << report << std::flush;
        return failed;
    }
    if (failed >= 0)
        for (int r = 0; r < w.rank(); ++r)
            if (at(r) == 0) quiet_error_message();
    return failed;
}

}  // namespace routescope::cli
