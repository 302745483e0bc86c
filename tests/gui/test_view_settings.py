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
import re
import subprocess
import sys
import xml.dom.minidom
import zlib

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

    def export(name, kind, inputs, settings, files=("s.dump.h5",), view=None, **project_keys):
        project = os.path.join(a.work, name + ".rsproj")
        with open(project, "w") as f:
            json.dump(dict({"format": "routescope-project", "version": 1, "files": list(files),
                            "views": [dict({"kind": kind, "inputs": inputs, "settings": settings},
                                           **(view or {}))]}, **project_keys), f)
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
    with h5py.File(dump, "r") as h:  # the layers named below are not in the file
        check("9" not in h["/layers"] and "99" not in h["/layers"],
              "the sample dump has no layer 9 or 99 (h5py)")
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
            ("kernel-length", "kernels", ["s.dump.h5"], {"length": 16777216}, "settings.length"),
            # Session 38: whole numbers were narrowed modulo 2^32 before any check: layer
            # 4294967297 drew layer 1, permutations 4294967297 ran one permutation.
            ("aniso-wrap", "anisotropy", ["s.dump.h5"], {"layer": 4294967297},
             "settings.layer: 4294967297"),
            ("perm-wrap", "similarity", ["s.dump.h5", "s.dump.h5"],
             {"permutations": 4294967297, "bootstrap": 0}, "settings.permutations: 4294967297"),
            ("group-wrap", "kernels", ["s.dump.h5"], {"group": 4294967296}, "settings.group"),
            ("gates-wrap", "gates", ["s.dump.h5"], {"layer": 18446744073709551615},
             "settings.layer"),
            # A null or a wrong type below the top level: the setting's place, not the JSON
            # library's "[json.exception.type_error.302] type must be number, but is null".
            ("null-m", "anisotropy", ["s.dump.h5"], {"m": None}, "settings.m: null"),
            ("dumps-5", "pca", ["s.dump.h5"], {"dumps": [5]}, "settings.dumps[0]: 5"),
            ("path-5", "kernels", ["s.dump.h5"], {"a": {"path": 5}}, "settings.a.path: 5"),
            # A threshold the k(p) chart does not offer (.90 … .98): drawn as k(0.90), titled
            # k(0.95).
            ("pca-p", "pca", ["s.dump.h5"], {"p": 0.95}, "settings.p: 0.95"),
            # A scatter cell of layers the dumps lack (h5py: two layers), as
            # `analyze similarity --scatter 9,9` refuses it.
            ("scatter-9", "similarity", ["s.dump.h5", "s.dump.h5"],
             {"scatter": [9, 9], "permutations": 0, "bootstrap": 0}, "settings.scatter: layer 9"),
            # A dataset the file lacks: another dataset was shown and exported.
            ("dataset-9", "array_browser", ["s.dump.h5"],
             {"file": "s.dump.h5", "dataset": "/layers/9/hidden"},
             "settings.dataset: '/layers/9/hidden'")):
        p, out = export(name, kind, inputs, settings)
        pngs = glob.glob(os.path.join(out, "*.png"))
        check(p.returncode == 3 and says in p.stderr and not pngs and
              "json.exception" not in p.stderr,
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

    # Training "smoothing" outside its control's range 0–0.99: was drawn with 0.99 (session 38).
    run = os.path.join(a.work, "run")
    os.makedirs(run, exist_ok=True)
    with open(os.path.join(run, "log.jsonl"), "w") as f:
        f.write('{"type":"start","step":0,"steps":2,"device":"cpu","threads":1}\n')
        for step in (1, 2):
            f.write(json.dumps({"type": "step", "step": step, "loss": 5.0 - step, "lr": 0.001,
                                "grad_norm": 1.0, "tokens_per_s": 100.0,
                                "elapsed": 0.1 * step}) + "\n")
    for smoothing, ok in ((5, False), (-1, False), (0.99, True)):
        p, out = export("smooth", "training", ["run"], {"smoothing": smoothing}, files=(),
                        runs=["run"])
        pngs = glob.glob(os.path.join(out, "*.png"))
        check((p.returncode == 0 and pngs) if ok else
              (p.returncode == 3 and "settings.smoothing" in p.stderr and not pngs),
              f"training smoothing {smoothing}: {'drawn' if ok else 'refused, exit 3'} "
              f"(exit {p.returncode}: {p.stderr[-300:]})")

    # A dump without /layers (valid; `analyze anisotropy` refuses it): the Anisotropy and PCA
    # views say so and write nothing (blank figures and a CSV of one empty line, exit 0).
    bare = os.path.join(a.work, "bare.dump.h5")
    with h5py.File(dump, "r") as src, h5py.File(bare, "w") as dst:
        for key in src.keys():
            if key != "layers":
                src.copy(key, dst)
        for key, value in src.attrs.items():
            dst.attrs[key] = value
    for kind in ("anisotropy", "pca"):
        p, out = export("bare-" + kind, kind, ["bare.dump.h5"], {}, files=("bare.dump.h5",))
        written = glob.glob(os.path.join(out, "*"))
        check(p.returncode == 3 and "no layers" in p.stderr and not written,
              f"{kind} of a dump without /layers: exit 3, 'no layers', nothing written "
              f"(exit {p.returncode}, {len(written)} files: {p.stderr[-300:]})")

    # Chart limits no axis can draw (session 38): x [-1e308, 1e308] (a span past the largest
    # double) hung the export in Qt Charts' label code; x [1, 1 + 1e-15] wrote a PDF whose path
    # coordinates were garbage (the data ~1e15 plot widths away). Either is refused or dropped:
    # the export ends, and every PDF it writes has well-formed path operands (read with zlib,
    # as a PDF reader does). A deep zoom within reach (x 1.5–1.5001) is drawn and recorded.
    def pdf_path_numbers_ok(path):
        data = open(path, "rb").read()
        for m in re.finditer(rb"stream\r?\n(.*?)endstream", data, re.S):
            try:
                text = zlib.decompress(m.group(1))
            except zlib.error:
                continue
            for line in text.split(b"\n"):
                if line.endswith(b" l") or line.endswith(b" m"):
                    if not all(re.fullmatch(rb"-?\d+(\.\d*)?|-?\.\d+", t)
                               for t in line.split()[:-1]):
                        return False
        return True

    for name, x, zoomed in (("huge", [-1e308, 1e308], False), ("overflow", [0, 1.7e308], False),
                            ("narrow", [1, 1.000000000000001], False),
                            ("deep", [1.5, 1.5001], True)):
        try:
            p, out = export("limits-" + name, "transitions", ["s.dump.h5"], {},
                            view={"charts": [{"limits": {"x": x, "y": [0, 1]}}]})
        except subprocess.TimeoutExpired:
            check(False, f"chart limits x {x}: the export hung")
            continue
        pdfs = glob.glob(os.path.join(out, "*.pdf"))
        zoom = None
        for prov in glob.glob(os.path.join(out, "*.pdf.provenance.json")):
            zoom = json.load(open(prov)).get("zoom")
        # Limits no axis can draw are refused when the project is read, naming their place.
        named = zoomed or (p.returncode == 2 and "charts[0].limits.x cannot be drawn" in p.stderr)
        check(all(pdf_path_numbers_ok(f) for f in pdfs) and (bool(pdfs) == (p.returncode == 0))
              and (zoom is not None) == zoomed and named,
              f"chart limits x {x}: exit {p.returncode}, {len(pdfs)} PDF(s) with well-formed "
              f"paths, zoom {'recorded' if zoomed else 'not drawn'} ({zoom}; {p.stderr[-300:]})")

    # A model name with control characters (a rename, a file name): the SVG stays well-formed
    # XML (Python's parser), the BEL and ESC replaced.
    p, out = export("control-name", "transitions", ["s.dump.h5"], {},
                    names={"s.dump.h5": "model\u0007A\u001bB"})
    svgs = glob.glob(os.path.join(out, "*.svg"))
    parsed = []
    for f in svgs:
        try:
            xml.dom.minidom.parse(f)
            parsed.append(f)
        except Exception as e:  # noqa: BLE001 (any parse error fails the check)
            print("     ", f, e)
    text = open(svgs[0], encoding="utf-8").read() if svgs else ""
    check(p.returncode == 0 and svgs and parsed == svgs and "model\ufffdA\ufffdB" in text,
          f"a name with BEL and ESC: the SVG parses as XML and shows them as U+FFFD "
          f"(exit {p.returncode}, {len(parsed)}/{len(svgs)} parsed: {p.stderr[-300:]})")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
