"""The small harness of the Python suites that drive routescope-cli (test_analyze_edge_cases.py,
test_training_limits.py, test_train_options.py): each case a function that asserts, reported as
"ok   NAME" or "FAIL NAME: why" (CTest's FAIL_REGULAR_EXPRESSION), every command with a timeout (a
hang is a failure, not a stuck test)."""
import argparse
import os
import shutil
import subprocess
import sys


class Suite:
    def __init__(self, cli, work, preexec=None):
        self.cli, self.work = cli, work
        self.preexec = preexec  # run in each child before the command (resource limits)
        self.passed = self.failed = 0

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, *args, timeout=300, preexec=None):
        try:
            return subprocess.run([self.cli, *args], capture_output=True, text=True,
                                  timeout=timeout, preexec_fn=preexec or self.preexec)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout} s: {' '.join(args)}")

    def config(self, name, text):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def case(self, name, fn):
        try:
            fn()
            self.passed += 1
            print(f"ok   {name}")
        except AssertionError as e:
            self.failed += 1
            print(f"FAIL {name}: {e}")
        sys.stdout.flush()

    def finish(self):
        """Prints the tally and returns the script's exit code."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0

    def ok(self, r):
        assert r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()}"


def suite_from_args(preexec=None):
    """The Suite of a script run as `SCRIPT --cli routescope-cli --work DIR`, DIR made empty."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return Suite(a.cli, a.work, preexec)
