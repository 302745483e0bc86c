#!/usr/bin/env bash
# Builds the Debian package (routescope_<version>_<arch>.deb) from its own portable configuration:
# no -march=native, no CUDA backend, no tests (docs/decisions.md, "Packaging"). The everyday build/
# keeps its native flags; cpack refuses to package it.
#   scripts/package.sh [BUILD_DIR] [OUT_DIR]      default build-deb/, the .deb lands in OUT_DIR
#                                                 (default BUILD_DIR)
# Needs dpkg-dev (dpkg-shlibdeps computes Depends) and help2man (man pages): scripts/setup.sh.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-deb}
out=${2:-$build}
# Absolute paths: cpack runs inside the build folder, where a relative OUT_DIR would name
# BUILD_DIR/OUT_DIR (the .deb landed in build-deb/build-deb/ and the ls below failed).
mkdir -p "$build" "$out"
build=$(cd "$build" && pwd)
out=$(cd "$out" && pwd)
cpack=${CPACK:-cpack}
# shellcheck disable=SC2086
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROUTESCOPE_NATIVE=OFF \
    -DROUTESCOPE_CUDA=OFF -DROUTESCOPE_TESTS=OFF -DROUTESCOPE_SANITIZE=OFF ${ROUTESCOPE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build"
(cd "$build" && "$cpack" -G DEB -B "$out")
ls "$out"/routescope_*.deb
