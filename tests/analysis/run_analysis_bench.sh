#!/bin/sh
# Analysis benchmarks, Routescope against the numpy baseline on the same dump and sample, in one
# command (docs/benchmarks.md, "## Analysis"):
#   tests/analysis/run_analysis_bench.sh BUILD_DIR [DUMP]
# Without DUMP it writes /tmp/routescope-bench.dump.h5 (5000 × 300 × 1024 float16, ≈ 3 GB) and
# deletes it afterwards. numpy runs with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset.
set -e
BUILD=${1:?usage: run_analysis_bench.sh BUILD_DIR [DUMP]}
DUMP=${2:-/tmp/routescope-bench.dump.h5}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
REF="$HERE/tests/reference/analysis/bench_reference.py"
if [ ! -f "$DUMP" ]; then
    /usr/bin/python3 "$REF" make-dump "$DUMP" 5000 300 1024
    CREATED=1
fi
ls -l "$DUMP"
echo "== anisotropy, M = 5000, d = 1024 (cold open; spectrum on, then off)"
"$BUILD/bin/bench_analysis" anisotropy "$DUMP" 0 5000 --sample-out /tmp/rs-aniso.json
"$BUILD/bin/bench_analysis" anisotropy "$DUMP" 0 5000 --no-spectrum
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$REF" anisotropy "$DUMP" /tmp/rs-aniso.json
echo "== PCA redundancy, 1000 sentences of 100-300 tokens, d = 1024"
"$BUILD/bin/bench_analysis" pca "$DUMP" 0 1000 --sample-out /tmp/rs-pca.json
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$REF" pca "$DUMP" /tmp/rs-pca.json
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 -c "import numpy; numpy.show_config()" 2>&1 | grep -iE "openblas|mkl|name" | head -5
rm -f /tmp/rs-aniso.json /tmp/rs-pca.json
if [ -n "$CREATED" ]; then rm -f "$DUMP"; fi
