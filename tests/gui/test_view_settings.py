#!/usr/bin/python3
"""A project's view settings are applied as written, or the view is refused (session 33's probe).

docs/formats/project.md: an omitted key keeps the view's default, and settings that cannot be
applied (a value outside the view's range, a choice it does not offer, a layer or gate the file
lacks) leave the view out of the export, which then exits 3 naming the setting. Found by a probe:

- an array_browser view naming a rank-1 dataset without its axes crashed the workbench (SIGSEGV:
  the default axes 1 and 2 read past the dataset's one axis name);
- gates "layer": 99 / "gate": "nosuch", kernels "layer": 77 and similarity "measure": "bogus" drew
  another layer, gate or measure with exit 0 (the provenance recorded "bogus"); so did anisotropy
  "layer": 99 (session 37: the dump's last layer, exit 0);
- length_accuracy "bins": 2147483647 took gigabytes, "bins": 0 with fixed-width bins drew a bin to
  infinity, kernels "length": 16777216 took minutes; the CLI bounds the same options.

The expected values come from the file (h5py) and the documented contract, not from the views.

    test_view_settings.py --gui routescope --cli routescope-cli --work DIR
"""
import csv
import glob
import json
import os
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless_check  # noqa: E402


def main():
    a, env, check = headless_check.start()
    dump = os.path.join(a.work, "s.dump.h5")
    r = subprocess.run([a.cli, "sample-dump", "--out", dump, "--examples", "16", "--length", "16",
                        "--d-model", "4", "--layers", "2"], capture_output=True, text=True)
    if not check(r.returncode == 0, "sample-dump: " + r.stderr[-300:]):
        return check.finish()

    def export(name, kind, inputs, settings):
        project = os.path.join(a.work, name + ".rsproj")
        with open(project, "w") as f:
            json.dump({"format": "routescope-project", "version": 1, "files": ["s.dump.h5"],
                       "views": [{"kind": kind, "inputs": inputs, "settings": settings}]}, f)
        out = os.path.join(a.work, name)
        p = subprocess.run([a.gui, "--export", project, "--out", out, "--timeout", "120"],
                           capture_output=True, text=True, env=env, timeout=300)
        return p, out

    # A rank-1 dataset named without its axes: one row, the dataset's values.
    p, out = export("lengths", "array_browser", ["s.dump.h5"],
                    {"file": "s.dump.h5", "dataset": "/data/lengths"})
    csvs = glob.glob(os.path.join(out, "*.csv"))
    check(p.returncode == 0 and len(csvs) == 1,
          f"an array browser on /data/lengths without axes exports (exit {p.returncode}: "
          f"{p.stderr[-300:]})")
    if csvs:
        with open(csvs[0], newline="") as f:
            rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
        values = [float(v) for r in rows for v in r if v.replace(".", "", 1).isdigit()]
        with h5py.File(dump, "r") as h:
            lengths = [float(v) for v in h["/data/lengths"][()]]
        check(all(v in values for v in lengths),
              f"its CSV holds the dataset's lengths {lengths[:4]}… (h5py)")

    # Settings the view cannot apply: exit 3, the setting named, nothing drawn in its place.
    for name, kind, inputs, settings, says in (
            ("gate-layer", "gates", ["s.dump.h5"], {"layer": 99}, "layer 99"),
            ("gate-name", "gates", ["s.dump.h5"], {"gate": "nosuch"}, "nosuch"),
            ("kernel-layer", "kernels", ["s.dump.h5"], {"layer": 77}, "settings.layer"),
            # Session 37: drawn as the last layer with exit 0 (the dump's layers: h5py, below).
            ("aniso-layer", "anisotropy", ["s.dump.h5"], {"layer": 99}, "settings.layer: 99"),
            ("measure", "similarity", ["s.dump.h5", "s.dump.h5"],
             {"measure": "bogus", "permutations": 0, "bootstrap": 0}, "settings.measure"),
            ("bins-huge", "length_accuracy", ["s.dump.h5"], {"bins": 2147483647}, "settings.bins"),
            ("bins-zero", "length_accuracy", ["s.dump.h5"], {"bins": 0, "binning": "width"},
             "settings.bins"),
            ("kernel-length", "kernels", ["s.dump.h5"], {"length": 16777216}, "settings.length")):
        p, out = export(name, kind, inputs, settings)
        pngs = glob.glob(os.path.join(out, "*.png"))
        check(p.returncode == 3 and says in p.stderr and not pngs,
              f"{kind} {json.dumps(settings)}: exit 3 naming '{says}', no figure "
              f"(exit {p.returncode}, {len(pngs)} figures: {p.stderr[-300:]})")

    # The anisotropy view's layer, one the dump has (h5py: /layers/N) drawn as asked: its CSV
    # holds that layer alone; one past the last is refused (above).
    with h5py.File(dump, "r") as h:
        layers = sorted(int(k) for k in h["/layers"].keys())
    first = layers[0]
    p, out = export("aniso-first", "anisotropy", ["s.dump.h5"], {"layer": first})
    csvs = glob.glob(os.path.join(out, "*.csv"))
    shown = set()
    if csvs:
        with open(csvs[0], newline="") as f:
            shown = {r["layer"] for r in csv.DictReader(line for line in f
                                                        if not line.startswith("#"))}
    check(p.returncode == 0 and shown == {str(first)},
          f"anisotropy {{\"layer\": {first}}} (the dump's layers {layers}, h5py) draws layer "
          f"{first} (exit {p.returncode}, layers in its CSV {sorted(shown)}: {p.stderr[-300:]})")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
