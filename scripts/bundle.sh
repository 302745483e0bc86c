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
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
out=$src/dist/routescope-cli-bundle
xz=0
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --xz) xz=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bundle.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
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
