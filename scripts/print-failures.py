#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Prints what each failed test said, short, after CTest's summary (scripts/test.sh).

CTest prints a failed test's whole output where the test ends, in the middle of a long log; a
log shortened to its head and tail (as CI reports it) then loses the line that says what failed.
This prints, last, for each test CTest marked failed: its QtTest FAIL!/Loc: lines, error and
Traceback lines, and the last lines of its output without Qt's repeated warnings.
"""
import re
import sys

log = sys.argv[1] if len(sys.argv) > 1 else "build/Testing/Temporary/LastTest.log"
try:
    text = open(log, encoding="utf-8", errors="replace").read()
except OSError as e:
    print(f"print-failures: cannot read {log}: {e.strerror}")
    sys.exit(0)

blocks = re.split(r"^\d+/\d+ Testing: ", text, flags=re.M)[1:]
for block in blocks:
    name = block.split("\n", 1)[0].strip()
    # "Test Failed." (a nonzero exit, a crash, a timeout) or "Test Fail Reason:" (a FAIL line that
    # a suite's FAIL_REGULAR_EXPRESSION found, whatever its exit).
    if "\nTest Failed." not in block and "\nTest Fail Reason:" not in block:
        continue  # passed, skipped or not run
    out = block.split("<end of output>", 1)[0].split("\n")
    lines = [l for l in out if not l.startswith("QWARN ") and "propagateSizeHints" not in l]
    key = [l for l in lines
           if l.startswith(("FAIL", "   Loc:", "XPASS")) or "Traceback" in l or "error:" in l.lower()]
    reason = block.split("\nTest Fail Reason:\n", 1)[1].split("\n", 1)[0] \
        if "\nTest Fail Reason:\n" in block else ""
    print(f"== {name} failed" + (f" ({reason})" if reason else ""))
    for l in key[:40]:
        print("   " + l[:400])
    print("   -- last lines:")
    for l in lines[-25:]:
        print("   " + l[:400])
