#!/usr/bin/env bash
# scripts/bundle.sh packs routescope-cli with its libraries: the bundle (moved elsewhere after it is
# written, and called through a symlink) runs `--version` with an empty environment (env -i), every
# library it loads comes from its lib/ except the glibc core and the NVIDIA/CUDA libraries, which
# are never bundled, and --xz writes an archive of it.
# test_bundle.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

"$src/scripts/bundle.sh" --build "$build" --out "$root/first/routescope-cli-bundle" --xz
cat "$root/first/routescope-cli-bundle/MANIFEST"
mkdir -p "$root/elsewhere" "$root/links"
mv "$root/first/routescope-cli-bundle" "$root/elsewhere/b"
b=$root/elsewhere/b
ln -s "$b/bin/routescope-cli" "$root/links/routescope-cli"

passed=0; failed=0
check() {  # check DESCRIPTION COMMAND...
    if "${@:2}" >"$root/check.log" 2>&1; then passed=$((passed+1)); echo "ok: $1"
    else failed=$((failed+1)); echo "FAILED: $1"; cat "$root/check.log"; fi
}
node_lib='^(libcuda|libcudart|libcublas|libcublasLt|libcufft|libcurand|libcusparse|libcusolver|libnvrtc|libnvJitLink|libnccl|libnvidia-|libnvToolsExt|libc|libm|libpthread|libdl|librt|ld-linux.*|libmvec|libresolv|libutil|libanl)\.so'

check "the wrapper runs --version with an empty environment (env -i), after a move" \
    bash -c "env -i '$b/bin/routescope-cli' --version | grep -q '^routescope '"
check "the wrapper runs through a symlink" \
    bash -c "env -i '$root/links/routescope-cli' --version | grep -q '^routescope '"
check "no glibc core, NVIDIA driver or CUDA library in lib/" \
    bash -c "! ls '$b/lib' | grep -E '$node_lib|^libnvidia-'"
check "lib/ is not empty (HDF5, FFTW, libstdc++, ...)" \
    bash -c "ls '$b/lib' | grep -q '^libhdf5' && ls '$b/lib' | grep -q '^libstdc++'"
loaded() {  # every library the bundled binary initialises comes from lib/ or is the node's
    env -i LD_DEBUG=files "$b/bin/routescope-cli" --version 2>"$root/ld.log" >/dev/null
    local path bad=0
    for path in $(grep -o 'calling init: .*' "$root/ld.log" | sed 's/calling init: //' | sort -u); do
        case $path in "$b"/lib/*|"$b"/libexec/*) continue ;; esac
        if basename "$path" | grep -qE "$node_lib"; then continue; fi
        case $path in /bin/*|/usr/bin/*) continue ;; esac  # the wrapper's shell
        echo "loaded from outside the bundle: $path"; bad=1
    done
    return $bad
}
check "every library but the node's is loaded from the bundle" loaded
check "--xz wrote an archive holding the wrapper" \
    bash -c "tar -tJf '$root/first/routescope-cli-bundle.tar.xz' | grep -qx 'routescope-cli-bundle/bin/routescope-cli'"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
