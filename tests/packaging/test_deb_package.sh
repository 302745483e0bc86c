#!/usr/bin/env bash
# Builds the .deb as a release would (scripts/package.sh: its own configuration without
# -march=native and without CUDA, incremental after the first run) and checks it:
#   - the package configuration is portable, and cpack refuses the native everyday build;
#   - Depends covers every shared library that the packaged binaries link (objdump NEEDED, resolved
#     with ldd, mapped to its Debian package with dpkg -S);
#   - man pages, bash completion (which completes), MIME types (which update-mime-database takes),
#     the desktop entry (Routescope's types only), AppStream metadata and docs are where they belong;
#   - both binaries run from the unpacked tree (dpkg -x).
# test_deb_package.sh SOURCE_DIR PACKAGE_BUILD_DIR [CPACK] [EVERYDAY_BUILD_DIR]
set -euo pipefail
src=$1
pkgbuild=$2
cpack=${3:-cpack}
everyday=${4:-}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

echo "building the package in $pkgbuild"
# OUT_DIR relative to the working directory, as a user types it (it used to land inside the
# build folder and the script then failed).
(cd "$root" && CPACK=$cpack "$src/scripts/package.sh" "$pkgbuild" out) >"$root/package.log" 2>&1 ||
    { tail -50 "$root/package.log"; exit 1; }
deb=$(ls "$root"/out/routescope_*.deb)
echo "built $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | grep -E "Package|Version|Depends"
dpkg -x "$deb" "$root/tree"
t=$root/tree/usr

passed=0; failed=0
check() {  # check DESCRIPTION COMMAND...
    if "${@:2}" >"$root/check.log" 2>&1; then passed=$((passed+1)); echo "ok: $1"
    else failed=$((failed+1)); echo "FAILED: $1"; cat "$root/check.log"; fi
}

# ---------------------------------------------------------------- a portable build
check "package configuration has ROUTESCOPE_NATIVE=OFF" \
    grep -qx "ROUTESCOPE_NATIVE:BOOL=OFF" "$pkgbuild/CMakeCache.txt"
check "no -march=native in the package's compile commands" \
    bash -c "! grep -q -- '-march=native' '$pkgbuild/compile_commands.json'"
if [ -n "$everyday" ] && grep -qx "ROUTESCOPE_NATIVE:BOOL=ON" "$everyday/CMakeCache.txt" 2>/dev/null; then
    check "cpack refuses the native everyday build" \
        bash -c "cd '$everyday' && ! '$cpack' -G DEB -B '$root/refused' >'$root/refused.log' 2>&1 &&
                 grep -q 'march=native' '$root/refused.log'"
fi

# ---------------------------------------------------------------- Depends covers every library
depends=$(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' | sed 's/(.*)//; s/^ *//; s/ *$//' | grep -v '^$' | sort -u)
echo "Depends: $(echo $depends)"
metapackage_of() {  # metapackage_of PKG: the package of Depends whose own Depends lists PKG
    local d alts
    for d in $depends; do
        # No grep -q in a pipe: with pipefail its early exit fails the pipe (SIGPIPE upstream).
        alts=$(dpkg-query -W -f='${Depends}\n' "$d" 2>/dev/null | tr ',|' '\n\n' |
               sed 's/(.*)//; s/^ *//; s/ *$//') || true
        if grep -qx "$1" <<<"$alts"; then echo "$d"; return 0; fi
    done
    return 0
}
covered() {  # covered BINARY: each NEEDED library resolves and its package is in Depends
    local bin=$1 lib path pkg ok=0
    for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}'); do
        # "libfoo.so.1 => /path (0x...)", or for the loader "/lib64/ld-linux-x86-64.so.2 (0x...)"
        path=$(env -u LD_LIBRARY_PATH ldd "$bin" |
               awk -v l="$lib" '{n = $1; sub(".*/", "", n)} $1 == l {print $3; exit} n == l {print $1; exit}')
        if [ -z "$path" ] || [ ! -e "$path" ]; then echo "$lib: not found"; ok=1; continue; fi
        pkg=""
        for p in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr${path}"; do
            pkg=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$pkg" ] && break
        done
        if [ -z "$pkg" ]; then echo "$lib ($path): no Debian package owns it"; ok=1
        # A library behind update-alternatives (liblapack.so.3) may be named by its virtual package.
        elif grep -qx "$pkg" <<<"$depends"; then echo "$lib -> $pkg"
        elif grep -qx "$lib" <<<"$depends"; then echo "$lib -> $lib (virtual; $pkg provides it)"
        # A metapackage that picks one build of a library (libopenblas0: pthread, openmp or
        # serial) covers the build installed here when it lists it among its alternatives.
        elif meta=$(metapackage_of "$pkg"); [ -n "$meta" ]; then
            echo "$lib -> $meta (metapackage; $pkg is one of its alternatives)"
        else echo "$lib ($path): $pkg is not in Depends"; ok=1; fi
    done
    return $ok
}
for bin in "$t"/bin/*; do
    check "Depends covers every library $(basename "$bin") links" covered "$bin"
done

# ---------------------------------------------------------------- the binaries run
check "routescope-cli --version runs from the unpacked tree" \
    bash -c "'$t/bin/routescope-cli' --version | grep -q '^routescope '"
check "routescope-cli has no CUDA backend (the .deb is the CPU build)" \
    bash -c "'$t/bin/routescope-cli' --version | grep -q '^CUDA backend: not compiled in'"
if [ -e "$t/bin/routescope" ]; then
    check "routescope --help runs from the unpacked tree (offscreen)" \
        bash -c "QT_QPA_PLATFORM=offscreen '$t/bin/routescope' --help | grep -q -- '--export'"
    check "routescope --version runs from the unpacked tree (offscreen)" \
        env QT_QPA_PLATFORM=offscreen "$t/bin/routescope" --version
fi

# ---------------------------------------------------------------- man pages and completion
for page in routescope-cli routescope; do
    [ -e "$t/bin/$page" ] || continue
    check "man page of $page, generated from --help" \
        bash -c "zcat '$t/share/man/man1/$page.1.gz' | grep -q '^\.TH \"\?${page^^}'"
done
check "routescope-cli's man page lists the subcommands" \
    bash -c "zcat '$t/share/man/man1/routescope-cli.1.gz' | grep -q 'analyze'"
comp=$t/share/bash-completion/completions/routescope-cli
complete_words() {  # complete_words WORD... : what TAB offers after the words (the last is partial)
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _routescope_cli;
             printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$t/bin/routescope-cli" "$@"
}
check "bash completion completes subcommands" bash -c "$(declare -f complete_words); comp='$comp' t='$t'
    complete_words an | grep -qx analyze"
check "bash completion completes a subcommand's options" bash -c "$(declare -f complete_words); comp='$comp' t='$t'
    complete_words dump --check | grep -qx -- --checkpoint"

# ---------------------------------------------------------------- desktop integration
if [ -e "$t/bin/routescope" ]; then
    desktop=$t/share/applications/io.routescope.Routescope.desktop
    check "desktop entry installed" test -f "$desktop"
    check "desktop entry claims Routescope's types, not every HDF5 file" \
        bash -c "grep -q '^MimeType=.*application/x-routescope-project;' '$desktop' &&
                 ! grep -q 'application/x-hdf5' '$desktop'"
    if command -v desktop-file-validate >/dev/null; then
        check "desktop entry is valid" desktop-file-validate "$desktop"
    fi
    check "MIME types installed and well-formed" /usr/bin/python3 -c \
        "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" \
        "$t/share/mime/packages/io.routescope.Routescope.xml"
    cp -r "$t/share/mime" "$root/mime"
    # update-mime-database comes with shared-mime-info, which Qt's libqt6core6 depends on.
    check "update-mime-database maps *.rsproj, *.dump.h5 and *.ckpt.h5 to Routescope's types" \
        bash -c "update-mime-database '$root/mime' &&
                 grep -q ':application/x-routescope-project:\*\.rsproj' '$root/mime/globs2' &&
                 grep -q ':application/x-routescope-dump:\*\.dump\.h5' '$root/mime/globs2' &&
                 grep -q ':application/x-routescope-checkpoint:\*\.ckpt\.h5' '$root/mime/globs2'"
    check "icon installed" test -f "$t/share/icons/hicolor/scalable/apps/io.routescope.Routescope.svg"
    check "AppStream metadata installed" test -f "$t/share/metainfo/io.routescope.Routescope.metainfo.xml"
fi

# ---------------------------------------------------------------- documentation
for doc in copyright formats.md config.md cli.md user-guide.md formats/README.md formats/dump.md \
           formats/checkpoint.md formats/predictions.md formats/project.md; do
    check "/usr/share/doc/routescope/$doc installed" test -s "$t/share/doc/routescope/$doc"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
