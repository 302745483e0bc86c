#!/usr/bin/env bash
# Installs, builds and opens the workbench on the demo project (resources/demo/demo.rsproj): a tiny
# BiGS and a tiny BERT trained on the built-in induction task, their activation dumps (BiGS with
# gates) and the BiGS at initialisation, shown in every analysis view (kernels before/after
# training, gates, anisotropy, PCA, layer transitions, accuracy by length, efficiency, training
# curves), BiGS and BERT side by side where a view compares. The first run trains and dumps them
# (a few minutes on 2 cores, scripts/make_demo_project.sh); later runs reuse build/demo/.
# Without a display the workbench runs offscreen, saves a screenshot and exports every view's
# figures instead; the script says where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
out=build/demo
project="$(scripts/make_demo_project.sh --out "$out" | tail -n 1)"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${CI:-}" != "true" ]; then
    exec build/bin/routescope "$project"
fi
QT_QPA_PLATFORM=offscreen build/bin/routescope "$project" --screenshot "$out/workbench.png"
build/bin/routescope --export "$project" --out "$out/figures" > /dev/null
echo "demo: no display, so the workbench ran offscreen."
echo "demo: outputs are in $(pwd)/$out: demo.rsproj (the project; open it with"
echo "      'routescope $out/demo.rsproj' where there is a display), bigs/ and bert/ (the runs:"
echo "      checkpoint and log.jsonl), bigs-init/ (BiGS before training), bigs.dump.h5 and"
echo "      bert.dump.h5 (activation dumps), workbench.png (the window) and figures/ (every"
echo "      view as PNG, SVG, PDF and CSV with provenance JSON)."
