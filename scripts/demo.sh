#!/usr/bin/env bash
# Installs, builds and runs the main job on built-in synthetic data: writes a sample activation
# dump, checks and summarises it with routescope-cli, and opens it in the workbench. Without a
# display the workbench runs offscreen and saves a screenshot instead; the script says where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=build/demo
mkdir -p "$out"
cli=build/bin/routescope-cli
dump="$out/sample.dump.h5"
[ -f "$dump" ] || "$cli" sample-dump --out "$dump"
"$cli" validate "$dump"
"$cli" inspect "$dump"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${CI:-}" != "true" ]; then
    exec build/bin/routescope "$dump"
fi
QT_QPA_PLATFORM=offscreen build/bin/routescope "$dump" --screenshot "$out/workbench.png"
echo "demo: no display, so the workbench ran offscreen."
echo "demo: outputs are in $(pwd)/$out: sample.dump.h5 (the dump) and workbench.png (the window)."
