#include "engine/train/stop_signal.hpp"

#include <atomic>
#include <csignal>

namespace routescope::train {

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler needs a lock-free flag");

struct sigaction g_old_int, g_old_term, g_old_hup, g_old_usr1;

extern "C" void on_stop_signal(int sig) {
    if (g_stop.exchange(true)) std::signal(sig, SIG_DFL);  // second signal: default action next
}

}  // namespace

StopSignal::StopSignal() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_old_int);
    sigaction(SIGTERM, &sa, &g_old_term);
    sigaction(SIGHUP, &sa, &g_old_hup);  // the terminal closed: save, as for Ctrl-C
    // SIGUSR1: what mpirun forwards to every rank without killing it a second later (its SIGTERM
    // is followed by SIGKILL after odls_base_sigkill_timeout, 1 s), and what Slurm sends ahead of
    // a time limit (sbatch --signal=USR1@300): stop after the step and save (docs/scaling.md).
    sigaction(SIGUSR1, &sa, &g_old_usr1);
}

StopSignal::~StopSignal() {
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
    sigaction(SIGHUP, &g_old_hup, nullptr);
    sigaction(SIGUSR1, &g_old_usr1, nullptr);
}

bool StopSignal::requested() {
    return g_stop.load();
}
void StopSignal::request() {
    g_stop.store(true);
}
void StopSignal::reset() {
    g_stop.store(false);
}

}  // namespace routescope::train
