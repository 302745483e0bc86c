#!/usr/bin/env bash
# Benchmark of the workbench issue's "opening a 4 GB dump shows its structure in ≤ 1 s": writes a
# synthetic dump of about 4 GB (routescope-cli sample-dump: S=2300, L=512, d=128, layers 0..2 with
# two gates each) to /tmp, opens it in the workbench's main window offscreen (build/bin/
# bench_open_dump), prints the JSON line with the times, and deletes the dump.
#
#   scripts/bench_open_dump.sh [BUILD_DIR] [EXAMPLES]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
examples="${2:-2300}"
cmake --build "$build" --target bench_open_dump routescope-cli > /dev/null
dump="$(mktemp -d /tmp/routescope-bench.XXXXXX)/big.dump.h5"
trap 'rm -rf "$(dirname "$dump")"' EXIT
echo "writing $dump…" >&2
start=$(date +%s)
"$build/bin/routescope-cli" sample-dump --out "$dump" --examples "$examples" --length 512 \
    --d-model 128 --layers 2 > /dev/null
echo "wrote $(du -h "$dump" | cut -f1) in $(( $(date +%s) - start )) s" >&2
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
sync
QT_QPA_PLATFORM=offscreen "$build/bin/bench_open_dump" "$dump"
