#!/usr/bin/env bash
# Installs, builds and runs every test through CTest (build/). GUI tests run on the offscreen
# platform, so no display is needed. Tests that need a GPU report SKIPPED without one.
#   ROUTESCOPE_FUZZ_PASS=0 scripts/test.sh       skips the fuzz pass (on by default: scripts/fuzz.sh ci
#                                                builds build-fuzz/ with clang, replays every
#                                                regression input, fuzzes a rotating subset of
#                                                targets for 30 s each; docs/reliability.md)
#   ROUTESCOPE_SANITIZE_PASS=1 scripts/test.sh   then builds build-asan/ with AddressSanitizer +
#                                                UndefinedBehaviorSanitizer and runs the tests again
# The sanitizer pass is opt-in (it doubles the build); it was run clean on the whole suite
# (docs/decisions.md, "the sanitizer pass is opt-in, and verified on the whole suite").
set -euo pipefail
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
jobs=$(nproc)
started=$(date +%s)

# A checkout without build/ (CI's clean clone) configures it portable (ROUTESCOPE_NATIVE=OFF), the
# configuration scripts/package.sh gives the .deb. The tests then check the code that ships, and the
# package build inside test_deb_package finds its objects in ccache: -march=native was the only
# compile option that told the two apart, so from scratch the package compiled the application a
# second time (685 s of a 47-minute run on 2 cores; docs/decisions.md, "CI builds portable"). An
# existing build/ keeps its configuration: scripts/setup.sh alone configures it native.
native_args=""
[ -f build/build.ninja ] || native_args="-DROUTESCOPE_NATIVE=OFF"
ROUTESCOPE_CMAKE_ARGS="$native_args ${ROUTESCOPE_CMAKE_ARGS:-}" scripts/setup.sh
# build-nompi/ compiles as build/ does (native or not), so that ccache holds its objects.
grep -qx "ROUTESCOPE_NATIVE:BOOL=OFF" build/CMakeCache.txt && native_args="-DROUTESCOPE_NATIVE=OFF"
# The build without MPI and CUDA (engine/CMakeLists.txt keeps dist/mpi and backend/cuda behind
# their options): only the engine and routescope-cli, not a second full build, which CI's time
# budget has no room for. Measured on 2 cores (configure + 160 build steps, `time`): 5 min 42 s
# with ccache off; with ccache holding the other variant's objects, as it holds build/'s here,
# the same targets took 27 s (only the -D flags differ, which ccache's preprocessor mode does not
# hash).
echo "== engine and routescope-cli without MPI and CUDA (build-nompi/)"
ROUTESCOPE_BUILD_DIR=build-nompi ROUTESCOPE_CMAKE_ARGS="-DROUTESCOPE_MPI=OFF -DROUTESCOPE_CUDA=OFF $native_args" \
    ROUTESCOPE_BUILD_TARGETS="routescope_engine routescope-cli" scripts/setup.sh

echo "== tests (build/)"
# On a failure, scripts/print-failures.py repeats after the summary what each failed test said
# (its FAIL! and Loc: lines, without Qt's repeated offscreen warnings): a log cut to its head and
# tail, as CI reports it, kept neither.
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 900 || {
    status=$?
    /usr/bin/python3 scripts/print-failures.py build/Testing/Temporary/LastTest.log || true
    exit $status
}

if [ "${ROUTESCOPE_FUZZ_PASS:-1}" = "1" ]; then
    echo "== fuzz pass (build-fuzz/)"
    scripts/fuzz.sh ci
fi

if [ "${ROUTESCOPE_SANITIZE_PASS:-0}" = "1" ]; then
    echo "== tests under ASan + UBSan (build-asan/)"
    ROUTESCOPE_BUILD_DIR=build-asan \
        ROUTESCOPE_CMAKE_ARGS="-DROUTESCOPE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROUTESCOPE_CUDA=OFF" \
        scripts/setup.sh
    # Heavy benchmark-sized and Python-reference tests run once, in the normal pass. The GUI tests
    # are left out: the workbench reads files in forked children, and GCC 12's AddressSanitizer
    # allocator is not fork-safe (a child forked while another thread holds an allocator lock
    # waits on it until the loader's 60 s limit; docs/decisions.md, "the sanitizer pass").
    ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 1500 -LE "reference|slow|packaging|gui"
fi
echo "test.sh: all passed in $(( $(date +%s) - started )) s"
