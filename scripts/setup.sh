#!/usr/bin/env bash
# Installs what Routescope needs on Debian 12 (apt-get, as root or through sudo) and builds it with
# Ninja into build/. Idempotent: on a ready machine it checks the packages (no apt-get update) and
# runs an incremental build, which takes seconds.
#   scripts/setup.sh                 install + configure + build (build/)
#   ROUTESCOPE_BUILD_DIR=dir ROUTESCOPE_CMAKE_ARGS="-DROUTESCOPE_SANITIZE=ON" scripts/setup.sh
#   ROUTESCOPE_SKIP_BUILD=1 scripts/setup.sh     only install packages
#   ROUTESCOPE_BUILD_TARGETS="routescope_engine routescope-cli" scripts/setup.sh   only these targets
# clang, libfuzzer-14-dev (Debian 12's clang is 14) and libomp-14-dev are for the fuzz build
# (scripts/fuzz.sh, build-fuzz/; docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake ninja-build pkg-config git dpkg-dev file
    qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev
    libhdf5-dev libeigen3-dev libfftw3-dev libsentencepiece-dev sentencepiece
    libopenmpi-dev openmpi-bin
    liblapack-dev nlohmann-json3-dev libcli11-dev libmsgpack-cxx-dev libzip-dev libcsv-dev
    xvfb xauth poppler-utils librsvg2-bin fonts-dejavu-core fonts-droid-fallback fontconfig
    clang-format ccache strace procps
    python3 python3-torch python3-numpy python3-h5py python3-sentencepiece
    libopenblas0-pthread libopenblas-dev libboost-dev libssl-dev help2man
    clang libfuzzer-14-dev libomp-14-dev
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "setup: all ${#packages[@]} packages present"
fi

[ "${ROUTESCOPE_SKIP_BUILD:-0}" = "1" ] && exit 0

# nvcc is not on PATH by default; the build finds it in /usr/local/cuda/bin (CUDA backend on).
build=${ROUTESCOPE_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
    # shellcheck disable=SC2086
    cmake -S . -B "$build" -G Ninja ${ROUTESCOPE_CMAKE_ARGS:-}
fi
if [ -n "${ROUTESCOPE_BUILD_TARGETS:-}" ]; then
    # shellcheck disable=SC2086
    cmake --build "$build" -j "$(nproc)" --target ${ROUTESCOPE_BUILD_TARGETS}
    echo "setup: built ${ROUTESCOPE_BUILD_TARGETS} in $build"
else
    cmake --build "$build" -j "$(nproc)"
    echo "setup: built $build/bin/routescope and $build/bin/routescope-cli"
fi
