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
        // Said now, before the last collective: the ranks leave together only once every failing
        // rank has said why. Printed by main's handler after this returned, a failing rank's
        // reason was lost when rank 0 exited first and the launcher ended the job (rank 0 says
        // "its message says why"; seen once under a loaded machine, test_mpi).
        if (!said_by_another) {
            try {
                std::rethrow_exception(error);
            } catch (...) {
                (void)exit_for_current_exception(running_command());
            }
            std::cerr << std::flush;
        }
        quiet_error_message();
        if (w.size() > 1) w.barrier();
        std::rethrow_exception(error);
    }
    if (!report.empty()) {
        if (!said_by_another) std::cerr << report << std::flush;
        if (w.size() > 1) w.barrier();
        return failed;
    }
    if (w.size() > 1 && failed >= 0) w.barrier();  // the failing ranks say why first
    if (failed >= 0)
        for (int r = 0; r < w.rank(); ++r)
            if (at(r) == 0) quiet_error_message();
    return failed;
}

}  // namespace routescope::cli
