#!/usr/bin/python3
"""Two models compared in one view stay two models in everything exported (session 31's probe):

- the usual layout run1/model.dump.h5 and run2/model.dump.h5: the legends said "model · bigs ·
  run1/run2", but the CSVs of transitions, anisotropy and gates gave both rows the `model` value
  "model", and every file was called "<view>-model-vs-model";
- names that differ after their first dot, bert.seed1.dump.h5 and bert.seed2.dump.h5: both were
  "bert" in every legend and CSV, and the files "<view>-bert-vs-bert";
- and, exported at a single column, the comparisons stay within the 180 mm a page allows (the
  gates figure was 227 mm tall);
- session 34: the kernels view named its files by the Workspace's display name
  ("kernels-bert.seed1_bigs_DIR-vs-…") and its CSV's models "A" and "B"; the array browser's
  provenance had no SHA-256 of its file (docs/user-guide.md, "Exporting figures"); an output
  folder that cannot be made was reported once per view, one line of eleven copies.

The workbench exports a project headless (`routescope --export P --out DIR`); the CSVs are read
with Python's csv module and the SVG legends with a regular expression.

    test_export_names.py --gui routescope --cli routescope-cli --work DIR
"""
import csv
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless_check  # noqa: E402

VIEWS = ("transitions", "anisotropy", "gates", "pca", "kernels")


def main():
    a, env, check = headless_check.start()

    def export(case, files, extra=()):
        folder = os.path.join(a.work, case)
        for i, f in enumerate(files):
            os.makedirs(os.path.dirname(os.path.join(folder, f)), exist_ok=True)
            r = subprocess.run([a.cli, "sample-dump", "--out", os.path.join(folder, f),
                                "--examples", "24", "--length", "16", "--d-model", "8",
                                "--layers", "2", "--seed", "1", "--state-seed", str(11 + i)],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, f"{case}: sample-dump {f} ({r.stderr.strip()[-200:]})")
        project = os.path.join(folder, "p.rsproj")
        with open(project, "w") as p:
            json.dump({"format": "routescope-project", "version": 1, "files": files,
                       "views": [{"kind": k, "inputs": files} for k in VIEWS], "current": 0}, p)
        out = os.path.join(folder, "out" + ("-" + "-".join(extra) if extra else ""))
        r = subprocess.run([a.gui, "--export", project, "--out", out, *extra],
                           capture_output=True, text=True, timeout=600, env=env)
        check(r.returncode == 0, f"{case}: export exits 0 ({r.stderr.strip()[-300:]})")
        return out

    for case, files, stems in (
            ("runs", ["run1/model.dump.h5", "run2/model.dump.h5"], ("run1", "run2")),
            ("dots", ["bert.seed1.dump.h5", "bert.seed2.dump.h5"], ("bert.seed1", "bert.seed2"))):
        out = export(case, files)
        for view in VIEWS:
            base = os.path.join(out, f"{view}-{stems[0]}-vs-{stems[1]}")
            check(os.path.exists(base + ".csv"),
                  f"{case}, {view}: the files are named by both inputs ({base}.csv; found "
                  f"{sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, view + '*.csv')))})")
            if not os.path.exists(base + ".csv"):
                continue
            with open(base + ".csv", encoding="utf-8") as f:
                models = sorted({row["model"] for row in csv.DictReader(f)})
            check(len(models) == 2 and all(any(s in m for m in models) for s in stems),
                  f"{case}, {view}: the CSV's `model` column names both inputs ({models})")
            with open(base + ".svg", encoding="utf-8") as f:
                texts = re.findall(r">([^<]*)</text>", f.read())
            for s in stems:
                check(any(s in t for t in texts),
                      f"{case}, {view}: the figure names {s}")
            if view == "gates":  # the histogram's two series are named alike ("A: u_b" was
                # beside "B: layer 1 u_b")
                check(any(t.startswith("A: layer ") for t in texts) and
                      any(t.startswith("B: layer ") for t in texts),
                      f"{case}, gates: the compared series read 'A: layer …' and 'B: layer …' "
                      f"({[t for t in texts if t.startswith(('A:', 'B:'))]})")
    # At a single column (89 mm) a figure stays within a page: secondary panels (an A − B
    # heatmap) are left out above 180 mm (docs/user-guide.md, "Print layout"). The gates compare
    # figure kept its A − B panel and was 227 mm tall. Heights read from the SVGs' declarations.
    out = export("dots", ["bert.seed1.dump.h5", "bert.seed2.dump.h5"],
                 ("--width", "single", "--font-pt", "8"))
    for svg in sorted(glob.glob(os.path.join(out, "*.svg"))):
        with open(svg, encoding="utf-8") as f:
            head = f.read(2000)
        m = re.search(r'<svg[^>]*\bheight="([0-9.]+)mm"', head)
        check(m is not None and float(m.group(1)) <= 180.0,
              f"single column, {os.path.basename(svg)}: at most 180 mm tall "
              f"({m.group(1) if m else 'no height'} mm)")
    # A name without spaces wider than a single column (session 32): titles and legends wrapped
    # only at spaces, so it stayed one line and ran off the page. Every word poppler reads on
    # each page lies within the page.
    long_names = ["avery_long_model_name_without_any_spaces_seed1_finetuned_qnli_lr3e-4.dump.h5",
                  "avery_long_model_name_without_any_spaces_seed2_finetuned_qnli_lr3e-4.dump.h5"]
    out = export("long", long_names, ("--width", "single", "--font-pt", "8"))
    pdfs = sorted(glob.glob(os.path.join(out, "*.pdf")))
    check(len(pdfs) == len(VIEWS), f"long names: one PDF per view ({len(pdfs)})")
    if shutil.which("pdftotext"):
        for pdf in pdfs:
            page = subprocess.run(["pdftotext", "-bbox", pdf, "-"], capture_output=True,
                                  text=True, timeout=60).stdout
            size = re.search(r'<page width="([0-9.]+)" height="([0-9.]+)"', page)
            width = float(size.group(1)) if size else 0
            outside = [w[4] for w in re.findall(
                r'<word xMin="([-0-9.]+)" yMin="([-0-9.]+)" xMax="([-0-9.]+)" yMax="([-0-9.]+)">'
                r'([^<]*)</word>', page)
                       if float(w[0]) < -0.5 or float(w[2]) > width + 0.5]
            check(size is not None and not outside,
                  f"long names, {os.path.basename(pdf)[:40]}…: every word within the "
                  f"{width:.0f} pt page (outside: {outside[:3]})")
            # ...and each name reads whole, line after line (a name cut at the page's edge is
            # lost to poppler: it reads only what lies on the page).
            text = unicodedata.normalize("NFKC", subprocess.run(
                ["pdftotext", pdf, "-"], capture_output=True, text=True, timeout=60).stdout)
            text = re.sub(r"\s+", "", text)
            for name in long_names:
                stem = name[:-len(".dump.h5")]
                check(stem in text, f"long names, {os.path.basename(pdf)[:40]}…: {stem[:30]}… "
                                    f"reads whole")
    else:
        print("skip: long names read back (pdftotext is not installed)")
    # A project whose integers are written as whole numbers in float form ("version": 1.0), as
    # the run configuration accepts them (docs/formats/project.md): read, not refused.
    folder = os.path.join(a.work, "dots")
    project = os.path.join(folder, "float-version.rsproj")
    with open(project, "w") as p:
        p.write('{"format": "routescope-project", "version": 1.0, "current": 0.0, '
                '"files": ["bert.seed1.dump.h5"], '
                '"views": [{"kind": "pca", "inputs": ["bert.seed1.dump.h5"]}]}')
    r = subprocess.run([a.gui, "--export", project, "--out", os.path.join(folder, "out-float")],
                       capture_output=True, text=True, timeout=600, env=env)
    check(r.returncode == 0, f"a project with \"version\": 1.0 exports ({r.stderr.strip()[-300:]})")
    # The array browser's provenance records its file with the SHA-256 sha256sum gives, as every
    # view's does (docs/user-guide.md: "NAME.provenance.json records the analysis, its input files
    # with their SHA-256").
    dump = os.path.join(folder, "bert.seed1.dump.h5")
    project = os.path.join(folder, "browser.rsproj")
    with open(project, "w") as p:
        json.dump({"format": "routescope-project", "version": 1, "files": ["bert.seed1.dump.h5"],
                   "views": [{"kind": "array_browser", "inputs": ["bert.seed1.dump.h5"]}]}, p)
    out = os.path.join(folder, "out-browser")
    r = subprocess.run([a.gui, "--export", project, "--out", out],
                       capture_output=True, text=True, timeout=600, env=env)
    check(r.returncode == 0, f"the array browser exports ({r.stderr.strip()[-300:]})")
    with open(dump, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    provenance = glob.glob(os.path.join(out, "array_browser-*.svg.provenance.json"))
    text = open(provenance[0], encoding="utf-8").read() if provenance else ""
    check(sha in text, f"the array browser's provenance holds its file's SHA-256 ({text[:200]})")
    # An output folder under a file: the reason once, not once per view (five views here).
    blocker = os.path.join(folder, "blocker")
    open(blocker, "w").close()
    r = subprocess.run([a.gui, "--export", os.path.join(folder, "p.rsproj"), "--out",
                        os.path.join(blocker, "x")],
                       capture_output=True, text=True, timeout=600, env=env)
    n = r.stderr.count("is a file, not a directory")
    check(r.returncode == 3 and n == 1,
          f"an output folder under a file: exit 3, the reason said once (exit {r.returncode}, "
          f"said {n} times)")
    saved_cell(a, env, check)
    no_ligatures(a, check)
    narrow_width(a, env, check)
    return check.finish()


def narrow_width(a, env, check):
    """Session 35: --width below the print layout's narrowest column (80 mm) ran panels off the
    page and exited 0 (only --check-layout said so). Such an export now checks its layout and
    exits 4, saying how many texts do not read; at 89 mm the same project exits 0."""
    project = os.path.join(a.work, "saved-cell", "p.rsproj")
    for width, code in (("25", 4), ("89", 0)):
        out = os.path.join(a.work, "narrow-" + width)
        r = subprocess.run([a.gui, "--export", project, "--out", out, "--width", width,
                            "--font-pt", "10"], capture_output=True, text=True, timeout=600,
                           env=env)
        said = "do not read in full at 25 mm" in r.stderr
        check(r.returncode == code and said == (code == 4),
              f"--width {width}: exit {code}{', the texts that do not fit counted' if code else ''}"
              f" (exit {r.returncode}: {r.stderr.strip()[-300:]})")


def no_ligatures(a, check):
    """Session 35: the PDFs' text layers held the ligature code points U+FB00–FB06 ("eﬀective",
    "ﬁrst"), so a figure's words could not be searched or copied. Every PDF exported above is
    read back by poppler (pdftotext): no ligature, and the words with "ff", "fi" or "fl" are
    there as letters."""
    if not shutil.which("pdftotext"):
        check(False, "pdftotext (poppler-utils, scripts/setup.sh) is installed")
        return
    pdfs = glob.glob(os.path.join(a.work, "**", "*.pdf"), recursive=True)
    ligatures, plain = set(), set()
    for pdf in pdfs:
        text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True).stdout
        ligatures |= {w for w in text.split() if any("\ufb00" <= c <= "\ufb06" for c in w)}
        plain |= {w for w in text.split() if any(p in w for p in ("ff", "fi", "fl"))}
    check(len(pdfs) >= 5 and not ligatures,
          f"{len(pdfs)} PDFs: no ligature code points in their text ({sorted(ligatures)[:5]})")
    check(bool(plain), f"words with ff/fi/fl read back as letters ({sorted(plain)[:5]})")


def saved_cell(a, env, check):
    """Session 35: a similarity view whose project saves a clicked cell ("scatter": [LA, LB])
    exports that cell's first canonical pair. Exported headless, the panel was drawn while the
    window was hidden, where the view skipped drawing it: the figure said "ρ = 0.000 on 0 + 0"
    with no points. The expected ρ and directions are `routescope-cli analyze similarity
    --scatter` on the same dumps (the analysis itself is checked against numpy in
    tests/analysis); a second view makes the export wait for more than one analysis."""
    folder = os.path.join(a.work, "saved-cell")
    os.makedirs(folder, exist_ok=True)
    files = []
    for i in (1, 2):
        f = os.path.join(folder, f"m{i}.dump.h5")
        r = subprocess.run([a.cli, "sample-dump", "--out", f, "--examples", "40", "--length", "16",
                            "--d-model", "8", "--layers", "2", "--seed", "3", "--state-seed",
                            str(i)], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"saved cell: sample-dump {f} ({r.stderr.strip()[-200:]})")
        files.append(f)
    ref = os.path.join(folder, "sim.json")
    r = subprocess.run([a.cli, "analyze", "similarity", "--dump", files[0], "--dump", files[1],
                        "--scatter", "1,2", "--permutations", "5", "--bootstrap", "5", "--out",
                        ref], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"saved cell: analyze similarity --scatter ({r.stderr[-300:]})")
    if r.returncode != 0:
        return
    want = json.load(open(ref))["results"][0]["scatter"]
    project = os.path.join(folder, "p.rsproj")
    with open(project, "w") as p:
        json.dump({"format": "routescope-project", "version": 1,
                   "views": [{"kind": "similarity", "inputs": files,
                              "settings": {"scatter": [1, 2], "permutations": 5,
                                           "bootstrap": 5}},
                             {"kind": "anisotropy", "inputs": files}]}, p)
    out = os.path.join(folder, "out")
    r = subprocess.run([a.gui, "--export", project, "--out", out], capture_output=True, text=True,
                       timeout=600, env=env)
    check(r.returncode == 0, f"saved cell: the export exits 0 ({r.stderr.strip()[-300:]})")
    svg = glob.glob(os.path.join(out, "similarity-*.svg"))
    text = open(svg[0], encoding="utf-8").read() if svg else ""
    text = " ".join(re.sub(r"<[^>]+>", " ", text).split())  # the title wraps over text elements
    m = re.search(r"ρ = ([0-9.]+) on ([0-9]+) \+ ([0-9]+)", text)
    got = (float(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
    check(got is not None and abs(got[0] - want["rho"]) < 1e-3 and
          got[1:] == (want["dims_a"], want["dims_b"]),
          f"saved cell: the exported panel says ρ = {want['rho']:.3f} on {want['dims_a']} + "
          f"{want['dims_b']} (it says {got})")


if __name__ == "__main__":
    sys.exit(main())
