#!/usr/bin/env bash
# libFuzzer targets of every reader (fuzz/, docs/reliability.md). Builds build-fuzz/ with clang if
# needed (ROUTESCOPE_FUZZ=ON: coverage + AddressSanitizer + UndefinedBehaviorSanitizer), writes the
# seed corpora (tests/fuzz/make_seeds.cpp, tests/io/make_import_fixtures.py) and runs.
#   scripts/fuzz.sh TARGET SECONDS   fuzz one target (fuzz_dump_reader, ...) for SECONDS
#   scripts/fuzz.sh all SECONDS      every target in turn, SECONDS each
#   scripts/fuzz.sh regressions      replay tests/fuzz/regressions/<target>/* once through each target
#   scripts/fuzz.sh ci               the CI pass (scripts/test.sh): the regressions of every target,
#                                    then ROUTESCOPE_FUZZ_CI_SECONDS (30) of fuzzing for a rotating
#                                    subset of ROUTESCOPE_FUZZ_CI_TARGETS (4) targets
#   scripts/fuzz.sh list             the targets
# A run keeps what it finds: the grown corpus in build-fuzz/corpus/<target>/, a crashing input in
# build-fuzz/artifacts/<target>/ (add it to tests/fuzz/regressions/<target>/ with the fix), the log
# in build-fuzz/logs/<target>.log. The summary line of each run gives executions, cov and ft.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${ROUTESCOPE_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${ROUTESCOPE_FUZZ_JOBS:-$(nproc)}

targets=(fuzz_dump_validator fuzz_dump_reader fuzz_checkpoint fuzz_run_config fuzz_config_override
         fuzz_classification fuzz_text_corpus fuzz_wordpiece fuzz_sentencepiece fuzz_import_msgpack
         fuzz_import_safetensors fuzz_import_pytorch fuzz_import_sharded fuzz_project_file
         fuzz_inspect_entry fuzz_analyze_entry fuzz_loader_entry)

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

build_fuzz() {
    if [ ! -f "$build/build.ninja" ]; then
        cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
            -DCMAKE_BUILD_TYPE=Debug -DROUTESCOPE_FUZZ=ON -DROUTESCOPE_GUI=OFF -DROUTESCOPE_TESTS=OFF \
            -DROUTESCOPE_CUDA=OFF -DROUTESCOPE_NATIVE=OFF >/dev/null
    fi
    local started=$(date +%s)
    # A failed build stops here: fuzzing the previous build's binaries would test old code.
    if ! cmake --build "$build" --target fuzz_all -j "$jobs" >"$build/build.log" 2>&1; then
        grep -v '^\[' "$build/build.log" | tail -n 40 >&2 || true
        echo "fuzz.sh: the fuzz build failed (whole log: $build/build.log)" >&2
        exit 1
    fi
    [ -x "$build/bin/fuzz_dump_reader" ] || { echo "fuzz.sh: the fuzz build failed" >&2; exit 1; }
    echo "fuzz.sh: build-fuzz up to date ($(( $(date +%s) - started )) s)"
    seeds
}

# Seed corpora: regenerated when the generator is newer than the last run.
seeds() {
    local stamp="$build/seeds/.stamp"
    if [ -f "$stamp" ] && [ "$stamp" -nt "$build/bin/routescope-fuzz-seeds" ] \
        && [ "$stamp" -nt tests/io/make_import_fixtures.py ]; then return; fi
    rm -rf "$build/seeds"
    "$build/bin/routescope-fuzz-seeds" "$build/seeds" "$root" >/dev/null
    local fx="$build/seeds/.import-fixtures"
    if "${ROUTESCOPE_PYTHON:-/usr/bin/python3}" tests/io/make_import_fixtures.py "$fx" >/dev/null 2>&1; then
        mkdir -p "$build/seeds/fuzz_import_msgpack" "$build/seeds/fuzz_import_safetensors" \
                 "$build/seeds/fuzz_import_pytorch"
        local f n=0
        while IFS= read -r f; do
            n=$((n + 1))
            case "$f" in
                *.msgpack) cp "$f" "$build/seeds/fuzz_import_msgpack/$n.msgpack" ;;
                *.safetensors) cp "$f" "$build/seeds/fuzz_import_safetensors/$n.safetensors" ;;
                *.bin|*.pt|*.pth) cp "$f" "$build/seeds/fuzz_import_pytorch/$n.bin" ;;
            esac
        done < <(find "$fx" -type f | sort)
    else
        echo "fuzz.sh: tests/io/make_import_fixtures.py failed (/usr/bin/python3 with torch, numpy, h5py?);" \
             "the importer targets start from an empty corpus" >&2
    fi
    rm -rf "$fx"
    touch "$stamp"
}

bin_of() {
    local t=$1
    [ -x "$build/bin/$t" ] || { echo "fuzz.sh: no target $t (scripts/fuzz.sh list)" >&2; exit 2; }
    echo "$build/bin/$t"
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# fuzz TARGET SECONDS: one campaign; prints "TARGET: N s, E execs (E/s), cov C, ft F, corpus K, OK".
fuzz() {
    local t=$1 secs=$2 bin
    bin=$(bin_of "$t")
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/logs" "$build/seeds/$t"
    local extra=()
    case "$t" in
        fuzz_dump_*|fuzz_checkpoint|fuzz_*_entry) extra+=(-max_len=262144) ;;
        fuzz_import_*) extra+=(-max_len=131072) ;;
        fuzz_sentencepiece) extra+=(-max_len=524288) ;;
    esac
    local regress=()
    [ -d "tests/fuzz/regressions/$t" ] && regress=("tests/fuzz/regressions/$t")
    local log="$build/logs/$t.log" rc=0
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t/" "${extra[@]}" \
        "$build/corpus/$t" "$build/seeds/$t" "${regress[@]}" >"$log" 2>&1 || rc=$?
    local execs cov ft units
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
    units=$(find "$build/corpus/$t" -type f | wc -l)
    if [ "$rc" -eq 0 ]; then
        echo "$t: ${secs} s, ${execs:-0} execs ($(( ${execs:-0} / (secs > 0 ? secs : 1) ))/s), cov ${cov:-0}, ft ${ft:-0}, corpus $units, OK"
    else
        echo "$t: FAILED (exit $rc) after ${execs:-0} execs; log $log, input in $build/artifacts/$t/" >&2
        grep -m3 -E 'ERROR: |SUMMARY: |fuzz: |runtime error' "$log" >&2 || true
        return 1
    fi
}

# regressions [TARGET...]: every committed crash input, once, through its target.
regressions() {
    local t failed=0 n=0
    for t in "$@"; do
        local dir="tests/fuzz/regressions/$t"
        [ -d "$dir" ] || continue
        mapfile -t files < <(find "$dir" -type f ! -name 'README*' | sort)
        [ ${#files[@]} -gt 0 ] || continue
        n=$((n + ${#files[@]}))
        if ! "$(bin_of "$t")" -timeout=10 -rss_limit_mb=4096 "${files[@]}" >"$build/logs/$t.regressions.log" 2>&1; then
            echo "fuzz.sh: $t fails on a regression input ($build/logs/$t.regressions.log)" >&2
            grep -m3 -E 'ERROR: |SUMMARY: |fuzz: |runtime error|Running: ' "$build/logs/$t.regressions.log" >&2 || true
            failed=1
        fi
    done
    echo "fuzz.sh: $n regression inputs replayed"
    return $failed
}

cmd=${1:-}
case "$cmd" in
    list) printf '%s\n' "${targets[@]}" ;;
    regressions)
        build_fuzz; mkdir -p "$build/logs"
        regressions "${targets[@]}" ;;
    all)
        [ $# -eq 2 ] || usage
        build_fuzz
        failed=0
        for t in "${targets[@]}"; do fuzz "$t" "$2" || failed=1; done
        exit $failed ;;
    ci)
        started=$(date +%s)
        build_fuzz; mkdir -p "$build/logs"
        failed=0
        regressions "${targets[@]}" || failed=1
        secs=${ROUTESCOPE_FUZZ_CI_SECONDS:-30}
        count=${ROUTESCOPE_FUZZ_CI_TARGETS:-4}
        # The subset rotates with the day, so every target gets its turn within a few days of CI.
        offset=$(( ($(date +%s) / 86400 * count) % ${#targets[@]} ))
        [ -n "${ROUTESCOPE_FUZZ_CI_OFFSET:-}" ] && offset=$ROUTESCOPE_FUZZ_CI_OFFSET
        rotation=("${targets[@]}")
        offset=$(( offset % ${#rotation[@]} ))
        # A regression input that crashes again fails CI. A NEW finding of the time-limited
        # fuzzing is reported loudly with its saved input but does not fail CI unless
        # ROUTESCOPE_FUZZ_CI_FATAL=1: a random 30 s search must not block unrelated work; the
        # finding is fixed with a regression input (docs/reliability.md, "CI").
        # One campaign per core at a time (a libFuzzer campaign is one process on one core): the
        # same seconds of fuzzing per target in half the wall time on CI's 2 cores.
        lanes=${ROUTESCOPE_FUZZ_CI_LANES:-$jobs}
        pids=(); names=()
        finish() {  # waits for the oldest campaign
            local t=${names[0]}
            if ! wait "${pids[0]}"; then
                echo "fuzz.sh: NEW FINDING in $t during the CI fuzz pass (input in $build/artifacts/$t/)" >&2
                [ "${ROUTESCOPE_FUZZ_CI_FATAL:-0}" = "1" ] && failed=1
            fi
            pids=("${pids[@]:1}"); names=("${names[@]:1}")
        }
        for ((i = 0; i < count && i < ${#rotation[@]}; i++)); do
            t=${rotation[$(( (offset + i) % ${#rotation[@]} ))]}
            [ ${#pids[@]} -ge "$lanes" ] && finish
            fuzz "$t" "$secs" &
            pids+=($!); names+=("$t")
        done
        while [ ${#pids[@]} -gt 0 ]; do finish; done
        echo "fuzz.sh: CI fuzz pass in $(( $(date +%s) - started )) s"
        exit $failed ;;
    fuzz_*)
        [ $# -eq 2 ] || usage
        build_fuzz
        fuzz "$1" "$2" ;;
    *) usage ;;
esac
