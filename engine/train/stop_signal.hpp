#pragma once
// Ctrl-C, SIGTERM, SIGHUP and SIGUSR1 during training: the handler only raises a flag (the one
// thing a signal handler may safely do); the training loop reads it after each step, saves a
// checkpoint and returns, and the CLI exits 130 (docs/cli.md). A second signal while the first is
// being handled restores the default action, so a stuck run can still be killed with another
// Ctrl-C.
namespace routescope::train {

class StopSignal {
public:
    /// Installs the SIGINT / SIGTERM / SIGHUP / SIGUSR1 handlers; the destructor restores the
    /// previous ones.
    StopSignal();
    ~StopSignal();
    StopSignal(const StopSignal&) = delete;
    StopSignal& operator=(const StopSignal&) = delete;

    /// True once a signal arrived (or request() was called).
    static bool requested();
    /// Raises the flag as a signal would (tests; the GUI's stop button in-process).
    static void request();
    static void reset();
};

}  // namespace routescope::train
