#!/usr/bin/env bash
# Installs, builds and runs the main job on built-in synthetic data: trains a tiny BiGS with MLM on
# the built-in generated corpus (about a minute on 2 cores, cached afterwards), writes a sample
# activation dump, checks and summarises both with routescope-cli, and opens them in the workbench
# (Analysis › Kernels on the checkpoint shows its learned SSM kernels). Without a display the workbench runs
# offscreen and saves a screenshot instead; the script says where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=build/demo
mkdir -p "$out"
cli=build/bin/routescope-cli
ckpt="$out/bigs-tiny/model.ckpt.h5"
if [ ! -f "$ckpt" ]; then
    "$cli" train --config resources/configs/bigs-tiny.json --out "$out/bigs-tiny" --json | tail -n 3
fi
dump="$out/sample.dump.h5"
[ -f "$dump" ] || "$cli" sample-dump --out "$dump"
"$cli" validate "$ckpt" "$dump"
"$cli" inspect "$dump"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${CI:-}" != "true" ]; then
    exec build/bin/routescope "$ckpt" "$dump"
fi
QT_QPA_PLATFORM=offscreen build/bin/routescope "$ckpt" "$dump" --screenshot "$out/workbench.png"
echo "demo: no display, so the workbench ran offscreen."
echo "demo: outputs are in $(pwd)/$out: bigs-tiny/ (checkpoint and log.jsonl of the run),"
echo "      sample.dump.h5 (a synthetic dump) and workbench.png (the window)."
