"""What the headless-export tests share (test_export_names.py, test_axis_values.py): their
arguments (--gui, --cli, --work), a fresh work folder, the offscreen environment, and the tally of
checks ("ok   …" / "FAIL …", which CTest's FAIL_REGULAR_EXPRESSION reads)."""
import argparse
import os
import shutil


class Checks:
    def __init__(self):
        self.failures = []

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)
        return ok

    def finish(self):
        print(f"{len(self.failures)} failed")
        return 1 if self.failures else 0


def start():
    """(arguments, environment for the workbench, checks)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--gui", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return a, dict(os.environ, QT_QPA_PLATFORM="offscreen"), Checks()
