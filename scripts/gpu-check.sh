#!/usr/bin/env bash
# One call verifies the CUDA backend on a machine with a GPU (docs/engine.md, "Verifying the CUDA
# backend on a GPU"). It builds nothing: it runs what `scripts/bundle.sh --gpu-check` packed
# (dist/gpu-check.tar.xz: the CLI and the GPU test binaries with their libraries) from the
# repository root, against the node's NVIDIA driver and CUDA libraries, and writes one report.
#
#   1. device       nvidia-smi, the driver, the CUDA runtime, the CLI's --version
#   2. conformance  every op spec (tiny, odd, benchmark sizes) on CUDA against the CPU backend
#                   within the tolerance table; run-to-run determinism (test_backend_conformance)
#   2b. precision   bigs-small trained 200 steps at fp32 and at bf16-mixed on the GPU: the mean
#                   loss of the last 10 steps within 1% (issue 29); the conformance section's
#                   tf32 and bf16-mixed rows check the GEMM ops against their tolerances
#   3. parity       the engine on CUDA against the PyTorch reference (float64), every
#                   architecture: logits, loss, every gradient, 10 AdamW steps, resume
#                   (test_model_parity with ROUTESCOPE_TEST_DEVICE=cuda)
#   4. residency    a steady training step moves its batch up and the losses and the gradient
#                   norm down; an evaluation batch moves O(rows) (test_guard_backend's byte
#                   checks on cuda)
#   5. commands     train (each objective, each architecture), fine-tuning, eval, dump,
#                   experiment on --device cuda against --device cpu; resume bit-identical on
#                   the GPU; a CUDA-trained checkpoint evaluated on the CPU within 1e-4
#                   (tests/cli/guard_suite.py --device cuda)
#   6. mpi          2 ranks against 1 process, both on the device, 20 steps (test_mpi; issue 29),
#                   with the Open MPI launcher the bundle packs when its build has MPI; the
#                   commands section's 2-rank case uses it too
#   7. sanitizer    compute-sanitizer memcheck (with leak check), racecheck and initcheck over
#                   the conformance suite's tiny and odd specs, and memcheck over a short
#                   training run of each architecture
#   8. bench        routescope-cli bench ops --backend cuda
#
# Usage: scripts/gpu-check.sh [--bundle FILE] [--out DIR] [--budget SECONDS] [--only SECTION]
#                             [--device cuda|cuda-emulated]
#   --bundle   default dist/gpu-check.tar.xz
#   --out      where the report and logs go (default $OUT when set, else gpu-check-out/)
#   --budget   wall-clock seconds for all sections (default 540: one 10-minute device call);
#              a section that would start with too little left is reported "not run (budget)"
#   --only     run one section (device is always run)
#   --device   cuda-emulated: a dry run without a GPU — residency, parity and commands run on the
#              CUDA backend's code on the host; conformance, sanitizer and bench need a GPU and
#              are skipped. It checks this script's plumbing (paths, wrappers, Python).
# Writes OUT/gpu-check-report.txt (one line per section and its key results) and
# OUT/gpu-check-logs.tar.xz (every section's full output). Exit 0 when every section that ran
# passed, 3 when the CUDA engine cannot run on this machine (no section is run).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
bundle=$src/dist/gpu-check.tar.xz
out=${OUT:-$src/gpu-check-out}
budget=540
only=""
dut=cuda
while [ $# -gt 0 ]; do
    case $1 in
        --bundle) bundle=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --device) dut=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu-check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
start=$(date +%s)
mkdir -p "$out"
logs=$(mktemp -d)
report=$out/gpu-check-report.txt
: >"$report"
say() { echo "$*" | tee -a "$report"; }

[ -f "$bundle" ] || { echo "gpu-check.sh: $bundle not found; run scripts/bundle.sh --gpu-check on the build machine" >&2; exit 2; }
stage=$(mktemp -d)
tar -C "$stage" -xJf "$bundle" || { echo "gpu-check.sh: cannot unpack $bundle" >&2; exit 2; }
manifest=$stage/MANIFEST
built_src=$(sed -n 's/^source: //p' "$manifest")
built_build=$(sed -n 's/^build: //p' "$manifest")
rel=${built_build#"$built_src"/}
# The tests call the CLI and the Python references at the paths compiled into them: put the
# bundle at the build's place in this tree, and this tree at the built source path.
if [ -f "$src/$rel/CMakeCache.txt" ]; then
    # The machine that built the bundle (a dry run without a GPU): its build is used in place.
    echo "gpu-check.sh: $src/$rel is a build tree; using it in place of the bundle's copy" >&2
    cp -a "$stage/$rel/lib" "$src/$rel/" 2>/dev/null || true
    rm -rf "${src:?}/$rel/mpi"
    [ -d "$stage/$rel/mpi" ] && cp -a "$stage/$rel/mpi" "$src/$rel/"
else
    rm -rf "${src:?}/$rel"
    mkdir -p "$src/$rel"
    cp -a "$stage/$rel/." "$src/$rel/"
fi
if [ "$built_src" != "$src" ] && [ ! -e "$built_src" ]; then
    mkdir -p "$(dirname "$built_src")" && ln -s "$src" "$built_src"
fi
build=$src/$rel
cuda=${CUDA_HOME:-/usr/local/cuda}
libs=$build/lib
for d in "$cuda/lib64" "$cuda/lib" "$cuda/targets/x86_64-linux/lib"; do
    [ -d "$d" ] && libs=$libs:$d
done
# The bundle's libraries (Debian's libstdc++, ICU, OpenSSL, ...) are for our binaries only: the
# machine's Python (PyTorch) and NVIDIA's tools keep the machine's own. So our binaries run through
# wrappers that set LD_LIBRARY_PATH, and the Python our tests start runs through one that puts the
# machine's back.
ours_ld=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
wrap=$(mktemp -d)
# The references need PyTorch, NumPy and h5py: the first python3 on PATH that has them (the GPU
# machine's), else Debian's /usr/bin/python3 (a dry run on a build machine whose PATH leads to
# another interpreter); ROUTESCOPE_PYTHON chooses.
python=${ROUTESCOPE_PYTHON:-}
if [ -z "$python" ]; then
    for candidate in "$(command -v python3 || true)" /usr/bin/python3; do
        if [ -n "$candidate" ] && [ -x "$candidate" ] &&
            "$candidate" -c 'import torch, numpy, h5py' >/dev/null 2>&1; then
            python=$candidate
            break
        fi
    done
    python=${python:-$(command -v python3)}
fi
{
    echo '#!/bin/sh'
    if [ -n "${LD_LIBRARY_PATH:-}" ]; then
        echo "LD_LIBRARY_PATH='$LD_LIBRARY_PATH'; export LD_LIBRARY_PATH"
    else
        echo "unset LD_LIBRARY_PATH"
    fi
    echo "exec '$python' \"\$@\""
} >"$wrap/python"
for bin in "$build"/bin/* "$build"/tests/*; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "'$ours_ld'" "'$bin'" >"$wrap/${bin##*/}"
done
# The Open MPI launcher packed with the bundle (scripts/bundle.sh, a build with MPI): Open MPI
# finds its components, help texts and defaults through OPAL_* and PMIx's through PMIX_MCA_*, so
# the machine needs no MPI of its own. Shared memory without single-copy (no ptrace in
# containers) and TCP; root allowed; more ranks than cores allowed.
mpiexec=
if [ -x "$build/mpi/bin/mpirun" ]; then
    m=$build/mpi
    export OPAL_PREFIX=$m OPAL_EXEC_PREFIX=$m OPAL_BINDIR=$m/bin OPAL_LIBDIR=$build/lib \
        OPAL_PKGLIBDIR=$m/lib/openmpi3 OPAL_DATAROOTDIR=$m/share OPAL_DATADIR=$m/share \
        OPAL_PKGDATADIR=$m/share/openmpi OPAL_SYSCONFDIR=$m/etc \
        PMIX_MCA_mca_base_component_path=$m/lib/pmix PMIX_INSTALL_PREFIX=$m \
        OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none \
        OMPI_MCA_pml=ob1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "'$ours_ld'" "'$m/bin/mpirun'" >"$wrap/mpirun"
    chmod +x "$wrap/mpirun"
    mpiexec=$wrap/mpirun
    export ROUTESCOPE_MPIEXEC=$mpiexec  # test_mpi's launcher
fi
chmod +x "$wrap"/*
export QT_QPA_PLATFORM=offscreen
export ROUTESCOPE_PYTHON=$wrap/python
export PYTHONUNBUFFERED=1
cli=$wrap/routescope-cli
tests=$wrap
failed=0

left() { echo $((budget - ($(date +%s) - start))); }
# section NAME NEED_SECONDS CAP_SECONDS COMMAND...: runs COMMAND with a timeout of
# min(CAP, time left), logs to NAME.log, appends "NAME: STATUS (seconds)" to the report.
section() {
    local name=$1 need=$2 cap=$3
    shift 3
    if [ -n "$only" ] && [ "$only" != "$name" ]; then return 0; fi
    local l
    l=$(left)
    if [ "$l" -lt "$need" ]; then
        say "== $name: not run (budget: ${l}s left, needs ${need}s)"
        return 0
    fi
    [ "$cap" -gt "$l" ] && cap=$l
    local t0 rc status
    t0=$(date +%s)
    timeout --kill-after=10 "$cap" "$@" >"$logs/$name.log" 2>&1
    rc=$?
    case $rc in
        0) status=PASS ;;
        124|137) status="TIMEOUT after ${cap}s"; failed=1 ;;
        *) status="FAIL (exit $rc)"; failed=1 ;;
    esac
    say "== $name: $status ($(($(date +%s) - t0)) s)"
}
# Key lines of a log into the report.
keep() { grep -E "$2" "$logs/$1.log" 2>/dev/null | head -"${3:-200}" | sed 's/^/   /' >>"$report"; }

say "Routescope gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
sed 's/^/bundle /' "$manifest" | grep -v "^bundle libraries" >>"$report"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    nvidia-smi 2>/dev/null | grep -o "CUDA Version: [0-9.]*" | sed 's/^/driver /'
    (nvcc --version 2>/dev/null || "$cuda/bin/nvcc" --version 2>/dev/null) | tail -1 | sed 's/^/nvcc: /'
    "$cli" --version 2>&1 | sed 's/^/cli: /'
    echo "python: $python"
} | tee -a "$report"

gpu() { [ "$dut" = cuda ]; }
if gpu && ! "$cli" --version 2>/dev/null | grep -q "^CUDA engine: ready"; then
    say "== no section run: the CUDA engine cannot run here ($("$cli" --version 2>&1 | grep '^CUDA engine' || echo 'no CUDA line in --version'))"
    tar -C "$logs" -cJf "$out/gpu-check-logs.tar.xz" .
    exit 3
fi

gpu && section conformance 60 200 "$tests/test_backend_conformance"
keep conformance "^(FAIL|QINFO|SKIP|Totals)" 400
keep conformance "Loc:" 20

precision_check() {  # bigs-small, 200 steps, fp32 against bf16-mixed on the GPU (issue 29)
    set -o pipefail
    local t p
    t=$(mktemp -d)
    "$python" - "$t/corpus.txt" <<'PY'
import random, sys
r = random.Random(0)
words = ["w%d" % i for i in range(2000)]
weights = [1.0 / (i + 1) for i in range(2000)]  # Zipf-like word frequencies
with open(sys.argv[1], "w") as f:
    for _ in range(40000):
        f.write(" ".join(r.choices(words, weights, k=r.randint(5, 30))) + ".\n")
PY
    for p in fp32 bf16-mixed; do
        echo "### train bigs-small --precision $p, 200 steps"
        "$cli" train --config "$src/resources/configs/bigs-small.json" --out "$t/$p" \
            --device cuda --precision "$p" --set data.train="$t/corpus.txt" \
            --set tokenizer.kind=bytes --set train.steps=200 --set train.eval_every=0 \
            --set train.checkpoint_every=0 2>&1 | tail -2 || return 1
    done
    "$python" - "$t" <<'PY'
import json, sys
def last10(p):
    steps = [json.loads(l) for l in open("%s/%s/log.jsonl" % (sys.argv[1], p))]
    losses = [x["loss"] for x in steps if x.get("type") == "step"]
    assert len(losses) == 200, len(losses)
    return sum(losses[-10:]) / 10
a, b = last10("fp32"), last10("bf16-mixed")
rel = abs(b - a) / a
print("precision: bigs-small 200 steps, last-10 mean loss fp32 %.5f, bf16-mixed %.5f, "
      "relative %.3g (goal <= 0.01; identical losses would mean bf16 was not applied: %s)"
      % (a, b, rel, a == b))
sys.exit(0 if rel <= 0.01 and a != b else 1)
PY
}
if [ -z "$only" ] || [ "$only" = precision ]; then
    export -f precision_check
    export cli src python
fi
gpu && section precision 20 120 bash -c precision_check
keep precision "^(###|precision:|Error|error)"

section residency 20 90 env ROUTESCOPE_TEST_DEVICE=$dut "$tests/test_guard_backend" \
    aSteadyTrainingStepMovesItsBatchUpAndScalarsDown anEvaluationBatchMovesRowsNotLogits
keep residency "^(FAIL|PASS|Totals|   Actual|   Expected)"

section parity 60 200 env ROUTESCOPE_TEST_DEVICE=$dut "$tests/test_model_parity"
keep parity "^(FAIL|PASS|QDEBUG.*worst|Totals)" 120

section commands 60 260 "$python" "$src/tests/cli/guard_suite.py" --device "$dut" --cli "$cli" \
    ${mpiexec:+--mpiexec "$mpiexec"}
keep commands "^(PASS|FAIL|[0-9]+ passed)"

if [ -n "$mpiexec" ]; then
    section mpi 30 200 env ROUTESCOPE_TEST_DEVICE=$dut "$tests/test_mpi" twoRanksMatchOneProcessOnADevice
    keep mpi "^(FAIL|PASS|SKIP|Totals)|rel "
else
    say "== mpi: not run (the bundle has no MPI: build it with -DROUTESCOPE_MPI=ON)"
fi

sanitize() {  # the three tools over the conformance suite's small specs, then training runs
    local cs=compute-sanitizer rc=0
    command -v $cs >/dev/null || cs=$cuda/bin/compute-sanitizer
    export ROUTESCOPE_CONFORMANCE_SIZES=tiny,odd
    for tool in "memcheck --leak-check full" racecheck initcheck; do
        echo "### compute-sanitizer --tool $tool: test_backend_conformance cudaMatchesTheCpu"
        # shellcheck disable=SC2086
        $cs --tool $tool --target-processes all --error-exitcode 9 "$tests/test_backend_conformance" \
            cudaMatchesTheCpu | grep -E "ERROR SUMMARY|LEAK SUMMARY|^=========.*(Invalid|Leak|race|Uninitialized)|Totals" | head -40
        [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    done
    local t
    t=$(mktemp -d)
    for cfg in bigs-tiny stack-ssm-tiny gated-att-tiny bert-tiny gmlp-tiny birdie-tiny slstm-tiny; do
        echo "### compute-sanitizer --tool memcheck --leak-check full: train $cfg, 2 steps"
        $cs --tool memcheck --leak-check full --target-processes all --error-exitcode 9 "$cli" train \
            --config "$src/resources/configs/$cfg.json" --out "$t/$cfg" --device cuda --threads 1 \
            --set model.d_model=32 --set model.n_layers=2 --set model.max_len=32 \
            --set data.seq_len=32 --set train.batch_size=2 --set train.steps=2 \
            --set train.eval_every=0 --set train.checkpoint_every=0 2>&1 |
            grep -E "ERROR SUMMARY|LEAK SUMMARY|Invalid|error" | head -20
        [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    done
    return $rc
}
if [ -z "$only" ] || [ "$only" = sanitizer ]; then
    export -f sanitize
    export build cli src cuda tests
fi
gpu && section sanitizer 60 240 bash -c sanitize
keep sanitizer "^###|SUMMARY|Invalid|race|Uninitialized|Totals"

gpu && section bench 20 90 "$cli" bench ops --backend cuda --seconds 0.2
keep bench "." 80

say "== total: $(($(date +%s) - start)) s, $([ $failed = 0 ] && echo 'every section that ran passed' || echo 'FAILURES above')"
tar -C "$logs" -cJf "$out/gpu-check-logs.tar.xz" .
echo "gpu-check.sh: $report, $out/gpu-check-logs.tar.xz"
exit $failed
