#!/usr/bin/env bash
# cpack -G DEB, then dpkg -x into a temporary root: both binaries run from the unpacked tree, and
# the desktop entry, icon and AppStream metadata are where desktops look for them.
set -euo pipefail
build=$1
cpack=${2:-cpack}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cd "$build"
"$cpack" -G DEB -B "$root/out" >"$root/cpack.log" 2>&1 || { cat "$root/cpack.log"; exit 1; }
deb=$(ls "$root"/out/routescope_*.deb)
echo "built $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | grep -E "Package|Version|Depends"
dpkg -x "$deb" "$root/tree"
passed=0; failed=0
check() {  # check DESCRIPTION COMMAND...
    if "${@:2}" >"$root/check.log" 2>&1; then passed=$((passed+1)); echo "ok: $1"
    else failed=$((failed+1)); echo "FAILED: $1"; cat "$root/check.log"; fi
}
check "routescope-cli --version runs from the unpacked tree" \
    bash -c "'$root/tree/usr/bin/routescope-cli' --version | grep -q '^routescope '"
if [ -e "$root/tree/usr/bin/routescope" ]; then
    check "routescope --version runs from the unpacked tree" \
        env QT_QPA_PLATFORM=offscreen "$root/tree/usr/bin/routescope" --version
    check "desktop entry installed" test -f "$root/tree/usr/share/applications/io.routescope.Routescope.desktop"
    check "icon installed" test -f "$root/tree/usr/share/icons/hicolor/scalable/apps/io.routescope.Routescope.svg"
    check "AppStream metadata installed" test -f "$root/tree/usr/share/metainfo/io.routescope.Routescope.metainfo.xml"
fi
check "copyright installed" test -f "$root/tree/usr/share/doc/routescope/copyright"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
