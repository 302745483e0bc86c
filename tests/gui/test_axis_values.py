#!/usr/bin/python3
"""A chart's value axis carries values whatever the data's magnitude (session 32).

Qt Charts lays out no ticks on a range narrower than about 1e-12: the kernels of a dump whose SSM
kernels are 1e-20 (a deep, fast-decaying layer; a model trained with a tiny init) were drawn with
a y axis without a single number, so the figure could not be read. The workbench now draws such
values as multiples of 10^k and says "(×10^k)" in the axis title.

The dump is written here with h5py (docs/formats/dump.md), exported headless by the workbench
(`routescope --export`) as a PDF, and the PDF read back by poppler (`pdftotext -bbox`): the y axis
of the kernel chart must carry at least three distinct numbers, which, times the factor its title
states, lie around the kernel values numpy wrote, and span most of them.

Also: a kernels comparison of two models of different depths printed an empty quadrant ("A − B
undefined", "No data") and a dump's empty poles panel; a print leaves panels with nothing to show
out (the PDF's text read back by poppler). And the transitions of a one-layer dump are one point per curve; a line of one point draws
nothing, and its marker was a two-pixel dot. The PDF is rendered by poppler (`pdftoppm`) and the
model's colour counted in the plot.

    test_axis_values.py --gui routescope --cli routescope-cli --work DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference",
                                "analysis"))
import headless_check  # noqa: E402
from make_analysis_dumps import write_dump as write_reference_dump  # noqa: E402

SUPERSCRIPT = {"\u2070": "0", "\u00b9": "1", "\u00b2": "2", "\u00b3": "3", "\u2074": "4",
               "\u2075": "5", "\u2076": "6", "\u2077": "7", "\u2078": "8", "\u2079": "9",
               "\u207b": "-"}
S, L, D, LAYERS = 4, 16, 8, 2


def kernel(scale):
    lag = np.arange(L)
    return (np.exp(-lag / 4.0) * np.cos(lag) * scale).astype(np.float32)


def write_dump(path, scale, layers=LAYERS):
    """A BiGS-like dump (tests/reference/analysis/make_analysis_dumps.py) whose every layer's
    kernels are `kernel(scale)` forward and half of it backward."""
    rng = np.random.default_rng(0)

    def kernels(f):
        f["model"].attrs["arch"] = "bigs"
        for layer in range(1, layers + 1):
            f[f"kernels/{layer}/forward"] = kernel(scale)
            f[f"kernels/{layer}/backward"] = (0.5 * kernel(scale)).astype(np.float32)
    write_reference_dump(path, {layer: rng.standard_normal((S, L, D)) for layer in
                                range(layers + 1)}, [L] * S, extra=kernels)


def words(pdf):
    """(text, xMin, yMin, xMax, yMax) of every word poppler reads on the page."""
    out = subprocess.run(["pdftotext", "-bbox", pdf, "-"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    out = re.sub(r"<!DOCTYPE[^>]*>", "", out)
    root = ET.fromstring(out)
    found = []
    for w in root.iter():
        if w.tag.endswith("word"):
            found.append(((w.text or "").strip().replace("\u2212", "-"),
                          float(w.get("xMin")), float(w.get("yMin")),
                          float(w.get("xMax")), float(w.get("yMax"))))
    return found


def read_ppm(path):
    """The pixels of a binary PPM (P6, 8 bits) as an [h, w, 3] array."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    assert fields[0] == b"P6" and fields[3] == b"255", fields
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[pos + 1:pos + 1 + w * h * 3], np.uint8).reshape(h, w, 3)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    a, env, check = headless_check.start()
    if not shutil.which("pdftotext"):
        print("SKIP: pdftotext (poppler-utils) is not installed")
        return 0

    for scale in (1e-20, 1e-13, 3e-35, 1e-5, 1.0, 4e3):
        case = os.path.join(a.work, f"scale-{scale:g}")
        os.makedirs(case)
        write_dump(os.path.join(case, "tiny.dump.h5"), scale)
        with open(os.path.join(case, "p.rsproj"), "w") as p:
            json.dump({"format": "routescope-project", "version": 1, "files": ["tiny.dump.h5"],
                       "views": [{"kind": "kernels", "inputs": ["tiny.dump.h5"]}],
                       "current": 0}, p)
        out = os.path.join(case, "out")
        r = subprocess.run([a.gui, "--export", os.path.join(case, "p.rsproj"), "--out", out,
                            "--width", "single", "--font-pt", "8"],
                           capture_output=True, text=True, env=env, timeout=300)
        check(r.returncode == 0, f"{scale:g}: export" +
              ("" if r.returncode == 0 else f" (exit {r.returncode}: {r.stderr.strip()[-300:]})"))
        pdfs = [f for f in os.listdir(out) if f.endswith(".pdf")] if os.path.isdir(out) else []
        if len(pdfs) != 1:
            check(False, f"{scale:g}: one PDF written (found {pdfs})")
            continue
        ws = words(os.path.join(out, pdfs[0]))
        # The kernel chart lies between its title ("... effective length ...") and its x axis
        # title "lag l"; its x ticks are the lowest row of numbers there, its y ticks the numbers
        # left of the leftmost x tick.
        top = max((w[4] for w in ws if w[0] == "kernel"), default=None)
        bottom = min((w[2] for w in ws if w[0] == "lag"), default=None)
        if top is None or bottom is None:
            check(False, f"{scale:g}: the kernel chart's title and x axis title are on the page")
            continue
        band = [w for w in ws if top < w[2] and w[4] < bottom and number(w[0]) is not None]
        x_row = max((w[2] for w in band), default=0)
        x_ticks = [w for w in band if abs(w[2] - x_row) < 2]
        left = min((w[1] for w in x_ticks), default=0)
        y_ticks = sorted({number(w[0]) for w in band if abs(w[2] - x_row) >= 2 and w[3] < left})
        title = "".join(w[0] for w in ws if top < w[2] < bottom and "\u00d710" in w[0])
        m = re.search("\u00d710([\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)", title)
        power = int("".join(SUPERSCRIPT[c] for c in m.group(1))) if m else 0
        values = np.concatenate([kernel(scale), 0.5 * kernel(scale)]).astype(np.float64)
        lo, hi = values.min(), values.max()
        shown = [t * 10.0 ** power for t in y_ticks]
        check(len(shown) >= 3,
              f"{scale:g}: the y axis carries 3 values or more (reads {y_ticks}, title {title!r})")
        if len(shown) >= 2:
            span = hi - lo
            inside = all(lo - 0.5 * span <= v <= hi + 0.5 * span for v in shown)
            covers = max(shown) - min(shown) >= 0.5 * span
            check(inside and covers,
                  f"{scale:g}: the values read ({shown}) lie about the data's [{lo:g}, {hi:g}] "
                  f"and span half of it at least")
        # Values a number format writes plainly carry no factor.
        if scale >= 1e-5:
            check(power == 0, f"{scale:g}: no factor in the title (title {title!r})")
        else:
            check(power != 0, f"{scale:g}: the title states the factor (title {title!r})")
    # Two depths compared: the print has no empty panel.
    case = os.path.join(a.work, "depths")
    os.makedirs(case)
    for name, layers in (("a", 2), ("b", 6)):
        write_dump(os.path.join(case, name + ".dump.h5"), 1.0, layers)
    with open(os.path.join(case, "p.rsproj"), "w") as p:
        json.dump({"format": "routescope-project", "version": 1,
                   "files": ["a.dump.h5", "b.dump.h5"],
                   "views": [{"kind": "kernels", "inputs": ["a.dump.h5", "b.dump.h5"]}],
                   "current": 0}, p)
    out = os.path.join(case, "out")
    r = subprocess.run([a.gui, "--export", os.path.join(case, "p.rsproj"), "--out", out,
                        "--width", "double", "--font-pt", "8"],
                       capture_output=True, text=True, env=env, timeout=300)
    check(r.returncode == 0, "two depths: export")
    pdfs = glob.glob(os.path.join(out, "*.pdf"))
    text = subprocess.run(["pdftotext", pdfs[0], "-"], capture_output=True, text=True,
                          timeout=60).stdout if pdfs else ""
    check(bool(pdfs) and "No data" not in text and "undefined" not in text and
          "checkpoint only" not in text and "A: a" in text and "B: b" in text,
          f"two depths: both models printed, no empty panel ({len(text)} characters read)")

    # One layer: each curve of the transitions chart is one point, drawn as a visible mark.
    case = os.path.join(a.work, "one-layer")
    os.makedirs(case)
    r = subprocess.run([a.cli, "sample-dump", "--out", os.path.join(case, "one.dump.h5"),
                        "--examples", "20", "--length", "12", "--d-model", "8", "--layers", "1",
                        "--seed", "1"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "one layer: sample-dump")
    with open(os.path.join(case, "p.rsproj"), "w") as p:
        json.dump({"format": "routescope-project", "version": 1, "files": ["one.dump.h5"],
                   "views": [{"kind": "transitions", "inputs": ["one.dump.h5"]}], "current": 0}, p)
    out = os.path.join(case, "out")
    r = subprocess.run([a.gui, "--export", os.path.join(case, "p.rsproj"), "--out", out,
                        "--width", "single", "--font-pt", "8"],
                       capture_output=True, text=True, env=env, timeout=300)
    check(r.returncode == 0, "one layer: export")
    pdf = os.path.join(out, "transitions-one.pdf")
    if shutil.which("pdftoppm") and os.path.exists(pdf):
        subprocess.run(["pdftoppm", "-r", "150", "-singlefile", pdf, os.path.join(case, "page")],
                       check=True, timeout=60)
        image = read_ppm(os.path.join(case, "page.ppm"))
        # The plot is the upper part of the figure (title, plot, then axis title and legend); the
        # first model's colour is #0072b2.
        plot = image[: int(image.shape[0] * 0.6)].astype(int)
        blue = np.all(np.abs(plot - np.array([0, 114, 178])) <= 40, axis=2)
        check(blue.sum() >= 40, f"one layer: the two points are visible marks "
                                f"({blue.sum()} pixels of the model's colour in the plot)")
    else:
        check(False, f"one layer: {pdf} exists and pdftoppm is installed")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
