#!/usr/bin/python3
"""Running a binary in a folder of downloaded files must not load code from that folder
(session 34). The build tree's binaries had the RUNPATH
".../hdf5/serial:...:/usr/local/cuda/lib:" whose empty last entry the dynamic loader reads as the
current directory: started in a folder holding a file named like one of its libraries, a binary
loaded it, and ran its constructor, before the system's copy.

The check does not trust our reading of RUNPATH: for every shared library the binary loads from the
system's directory (ldd), a real shared object of that name whose constructor writes a marker
file is compiled with the system's C compiler into an empty folder; the binary is run there
(--version, --help). It must exit 0 (one of them loaded without the real library's symbol
versions ends the load: exit 127) and no marker may appear. Independently, readelf's
RUNPATH and RPATH may hold no empty or relative entry.

    test_library_search.py --cli routescope-cli [--gui routescope] --work DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--cli", required=True)
ap.add_argument("--gui")
ap.add_argument("--work", required=True)
a = ap.parse_args()
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


cc = shutil.which("cc") or shutil.which("gcc")
binaries = [os.path.abspath(a.cli)] + ([os.path.abspath(a.gui)] if a.gui else [])
for binary in binaries:
    name = os.path.basename(binary)
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout
    for kind, value in re.findall(r"\((RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", dyn):
        entries = value.split(":")
        bad = [e for e in entries if not e.startswith("/") and not e.startswith("$ORIGIN")]
        check(not bad, f"{name}: {kind} holds no empty or relative entry ({value!r})")
    if not cc:
        print(f"skip: {name}: no C compiler to build the planted libraries")
        continue
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    sonames = [m.group(1) for m in re.finditer(r"^\s*(\S+\.so[.\d]*) => (/lib|/usr/lib)\S*",
                                               ldd, re.M)]
    check(len(sonames) > 3, f"{name}: ldd lists the system libraries ({len(sonames)})")
    folder = os.path.join(a.work, name)
    os.makedirs(folder)
    marker = os.path.join(a.work, name + ".loaded")
    source = os.path.join(a.work, "planted.c")
    with open(source, "w") as f:
        f.write('#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {\n'
                f'  FILE* f = fopen("{marker}", "a"); if (f) {{ fputs("loaded\\n", f); '
                'fclose(f); }\n}\n')
    built = os.path.join(a.work, "planted.so")
    r = subprocess.run([cc, "-shared", "-fPIC", "-o", built, source], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"the planted library builds ({r.stderr.strip()[-200:]})")
    for soname in sonames:
        shutil.copy(built, os.path.join(folder, soname))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("LD_LIBRARY_PATH", None)
    for args in (["--version"], ["--help"]):
        r = subprocess.run([binary, *args], cwd=folder, capture_output=True, text=True,
                           timeout=120, env=env)
        # A planted library without the real one's symbol versions ends the load before its
        # constructor can run (exit 127, "symbol lookup error"): loaded all the same.
        check(r.returncode == 0, f"{name} {args[0]} in that folder: exit 0, no planted library "
                                 f"read (exit {r.returncode}: {r.stderr.strip()[-160:]})")
    check(not os.path.exists(marker),
          f"{name}: run in a folder holding libraries named like its own, it loads none of them"
          + (f" (loaded: {open(marker).read().count('loaded')} times)"
             if os.path.exists(marker) else ""))

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
