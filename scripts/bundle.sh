#!/usr/bin/env bash
# Packs routescope-cli with the shared libraries it links into a relocatable folder, for a GPU node
# that has its own NVIDIA driver and CUDA (README, "Running on a GPU node"):
#   dist/routescope-cli-bundle/
#     bin/routescope-cli       wrapper: LD_LIBRARY_PATH=<bundle>/lib, then the node's CUDA
#     libexec/routescope-cli   the binary
#     lib/                     every library ldd lists, except the NVIDIA driver and CUDA libraries
#                              (the node's own are used) and the glibc core (never mixed with the
#                              node's dynamic loader)
#     MANIFEST                 what was bundled, what was left to the node, the glibc it needs
# Usage: scripts/bundle.sh [--build DIR] [--out DIR] [--xz]
#   --build DIR  the build whose bin/routescope-cli is packed (default build/)
#   --out DIR    the bundle folder (default dist/routescope-cli-bundle; replaced)
#   --xz         also write DIR.tar.xz next to it
#
# scripts/bundle.sh --gpu-check [--build DIR]
#   packs what scripts/gpu-check.sh runs on a GPU machine, which builds nothing: the CLI and the
#   GPU test binaries of a CUDA build inside the source tree (default build-gpu/, configured with
#   -DROUTESCOPE_NATIVE=OFF -DROUTESCOPE_MPI=ON -DROUTESCOPE_GUI=OFF; docs/engine.md), in the
#   build's own layout (bin/, tests/) with lib/ beside them, as dist/gpu-check.tar.xz. The tests
#   find the CLI, the sources and the Python references at the paths compiled into them, which
#   gpu-check.sh recreates from the MANIFEST's `source:` and `build:` lines. A build configured
#   with -DROUTESCOPE_MPI=ON adds test_mpi and the Open MPI launcher (issue 29: several ranks on
#   one GPU) under mpi/: mpirun (orterun), the MCA components a single node needs (shared memory
#   and TCP; no InfiniBand, UCX, OFI or PSM ones), PMIx's, their help texts and default
#   parameters, with their libraries in lib/. gpu-check.sh points Open MPI at them (OPAL_* and
#   PMIX_MCA_* variables), so the node needs no MPI of its own.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
out=$src/dist/routescope-cli-bundle
xz=0
gpu_check=0
while [ $# -gt 0 ]; do
    case $1 in
        --gpu-check) gpu_check=1; build=$src/build-gpu; shift ;;
        --build) build=$(cd "$2" && pwd); shift 2 ;;
        --out) out=$2; shift 2 ;;
        --xz) xz=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bundle.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ "$gpu_check" = 1 ]; then
    # GPU test binaries: the op-level conformance suite, the PyTorch parity of every architecture,
    # the residency byte checks (test_guard_backend), and the host emulation as a control.
    tests=(test_backend_conformance test_model_parity test_guard_backend test_cuda_emulation)
    mpi=0
    if grep -qx "ROUTESCOPE_MPI:BOOL=ON" "$build/CMakeCache.txt" && [ -x "$build/tests/test_mpi" ]; then
        mpi=1
        tests+=(test_mpi)
    fi
    case $build/ in "$src"/*) ;; *) echo "bundle.sh: --gpu-check needs a build inside $src" >&2; exit 1 ;; esac
    rel=${build#"$src"/}
    [ -x "$build/bin/routescope-cli" ] || { echo "bundle.sh: $build/bin/routescope-cli not found (ninja -C $build routescope-cli ${tests[*]})" >&2; exit 1; }
    grep -qx "ROUTESCOPE_NATIVE:BOOL=OFF" "$build/CMakeCache.txt" ||
        echo "bundle.sh: warning: $build is not configured with -DROUTESCOPE_NATIVE=OFF" >&2
    stage=$src/dist/gpu-check
    rm -rf "$stage" "$src/dist/gpu-check.tar.xz"
    mkdir -p "$stage/$rel/bin" "$stage/$rel/tests" "$stage/$rel/lib"
    files=("$build/bin/routescope-cli")
    cp "$build/bin/routescope-cli" "$stage/$rel/bin/"
    for t in "${tests[@]}"; do
        [ -x "$build/tests/$t" ] || { echo "bundle.sh: $build/tests/$t not built" >&2; exit 1; }
        cp "$build/tests/$t" "$stage/$rel/tests/"
        files+=("$build/tests/$t")
    done
    if [ "$mpi" = 1 ]; then
        # The Open MPI runtime of this machine (Debian's openmpi-bin, libopenmpi3, libpmix2).
        ompi=/usr/lib/x86_64-linux-gnu/openmpi
        pmix=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
        orterun=$(readlink -f "$(command -v mpirun)")
        m=$stage/$rel/mpi
        mkdir -p "$m/bin" "$m/lib/openmpi3" "$m/lib/pmix" "$m/share" "$m/etc"
        cp "$orterun" "$m/bin/mpirun"
        files+=("$orterun")
        for c in "$ompi"/lib/openmpi3/mca_*.so; do
            case ${c##*/} in *_ucx*|*_uct*|*_ofi*|*_psm*|*_openib*|*_verbs*|*_portals4*|*_usnic*) continue ;; esac
            cp "$c" "$m/lib/openmpi3/"
            files+=("$c")
        done
        for c in "$pmix"/*.so; do cp "$c" "$m/lib/pmix/"; files+=("$c"); done
        cp -r /usr/share/openmpi "$m/share/openmpi"
        [ -d /usr/share/pmix ] && cp -r /usr/share/pmix "$m/share/pmix"
        cp /etc/openmpi/openmpi-mca-params.conf "$m/etc/" 2>/dev/null || true
    fi
    declare -A seen=()
    for f in "${files[@]}"; do
        while read -r soname arrow path _; do
            [ "$arrow" = "=>" ] || continue
            [ "$path" != "not" ] || { echo "bundle.sh: $soname (needed by $f) is not found by ldd" >&2; exit 1; }
            case $soname in
                libcuda.so*|libcudart.so*|libcublas*.so*|libcufft*.so*|libnvidia-*|libnvJitLink.so*) continue ;;
                libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*.so.*|libmvec.so.*) continue ;;
                libresolv.so.*|libutil.so.*|libanl.so.*) continue ;;  # glibc's too (Open MPI's deps)
            esac
            case $path in /usr/local/cuda*) continue ;; esac
            [ -n "${seen[$soname]:-}" ] && continue
            seen[$soname]=1
            cp -L "$path" "$stage/$rel/lib/$soname"
        done < <(env -u LD_LIBRARY_PATH ldd "$f")
    done
    {
        echo "source: $src"
        echo "build: $build"
        echo "commit: $(git -C "$src" rev-parse HEAD 2>/dev/null)$(git -C "$src" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
        echo "cli: $("$build/bin/routescope-cli" --version 2>/dev/null | head -1)"
        echo "libraries: ${!seen[*]}"
        [ "$mpi" = 1 ] && echo "mpi: $rel/mpi ($("$m/bin/mpirun" --version 2>/dev/null | head -1))"
    } >"$stage/MANIFEST"
    tar -C "$stage" -cJf "$src/dist/gpu-check.tar.xz" .
    echo "bundle.sh: $src/dist/gpu-check.tar.xz ($(du -h "$src/dist/gpu-check.tar.xz" | cut -f1)); carry dist/gpu-check.tar.xz and run scripts/gpu-check.sh"
    exit 0
fi

bin=$build/bin/routescope-cli
[ -x "$bin" ] || { echo "bundle.sh: $bin not found; build it first (ninja -C $build routescope-cli)" >&2; exit 1; }
if grep -qx "ROUTESCOPE_NATIVE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
    echo "bundle.sh: warning: $build is built with -march=native: the node's CPU must have every" \
         "instruction set of this one, or configure a build with -DROUTESCOPE_NATIVE=OFF (--build)" >&2
fi

# Left to the node: the NVIDIA driver and CUDA libraries, and the glibc core.
is_node_library() {  # is_node_library SONAME PATH
    case $1 in
        libcuda.so*|libcudart.so*|libcublas.so*|libcublasLt.so*|libcufft.so*|libcufftw.so*|\
        libcurand.so*|libcusparse.so*|libcusolver.so*|libnvrtc.so*|libnvJitLink.so*|libnccl.so*|\
        libnvidia-*|libnvToolsExt.so*) return 0 ;;
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*.so.*|libmvec.so.*|\
        libresolv.so.*|libutil.so.*|libanl.so.*) return 0 ;;
    esac
    case $2 in /usr/local/cuda*|*/cuda-[0-9]*/*) return 0 ;; esac
    return 1
}

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/libexec"
cp "$bin" "$out/libexec/routescope-cli"
bundled=(); left=()
# "libfoo.so.1 => /path/libfoo.so.1 (0x...)"; the vDSO and the loader's own line have no "=>".
while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then echo "bundle.sh: $soname is not found by ldd" >&2; exit 1; fi
    if is_node_library "$soname" "$path"; then left+=("$soname"); continue; fi
    cp -L "$path" "$out/lib/$soname"
    bundled+=("$soname")
done < <(env -u LD_LIBRARY_PATH ldd "$bin")

# The newest glibc symbol version anything in the bundle asks for: the node needs at least that.
glibc=$(for f in "$out/libexec/routescope-cli" "$out"/lib/*; do objdump -T "$f"; done 2>/dev/null |
        grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V | tail -1)

cat >"$out/bin/routescope-cli" <<'WRAPPER'
#!/bin/sh
# routescope-cli from a relocatable bundle (scripts/bundle.sh): the bundle's libraries first, then
# the node's CUDA ($CUDA_HOME, else /usr/local/cuda) and its driver from the system paths.
self=$0
while [ -L "$self" ]; do  # a symlink to this wrapper (ln -s <bundle>/bin/routescope-cli ~/bin)
    link=$(readlink "$self")
    case $link in /*) self=$link ;; *) self=${self%/*}/$link ;; esac
done
case $self in */*) dir=${self%/*} ;; *) dir=. ;; esac
here=$(cd "$dir/.." && pwd -P)
libs=$here/lib
cuda=${CUDA_HOME:-/usr/local/cuda}
for d in "$cuda/lib64" "$cuda/lib" "$cuda/targets/x86_64-linux/lib"; do
    [ -d "$d" ] && libs=$libs:$d
done
LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
exec "$here/libexec/routescope-cli" "$@"
WRAPPER
chmod +x "$out/bin/routescope-cli"

{
    echo "routescope-cli bundle: $("$bin" --version 2>/dev/null | head -1)"
    echo "built from: $build ($(uname -m))"
    echo "needs on the node: glibc >= ${glibc#GLIBC_}, and for the CUDA backend the NVIDIA driver and CUDA"
    echo "bundled (lib/): ${bundled[*]}"
    echo "left to the node: ${left[*]}"
} >"$out/MANIFEST"

echo "bundle.sh: $out ($(du -sh "$out" | cut -f1)): ${#bundled[@]} libraries bundled, ${#left[@]} left to the node"
if [ "$xz" = 1 ]; then
    tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
    echo "bundle.sh: $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1))"
fi
