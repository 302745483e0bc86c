#!/usr/bin/env python3
"""Edge cases of `routescope-cli analyze` (and of dump, train, eval and experiment) found by
probing with hostile and degenerate inputs (session 27). The dumps are written here with h5py from docs/formats/dump.md; every expected value
is computed here with numpy from the documented definitions (docs/analyses.md), never read from
the code under test.

usage: test_analyze_edge_cases.py --cli build/bin/routescope-cli --work DIR
Prints one line per case and "N passed, N failed"; exit 1 on a failure.
"""
import csv
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

import h5py
import numpy as np


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference",
                                "analysis"))
from make_analysis_dumps import write_dump as write_reference_dump  # noqa: E402


def write_dump(path, hidden, lengths, arch="external", labels=None, predictions=None, gates=None,
               kernels=None, example_index=None):
    """The reference's dump (tests/reference/analysis/make_analysis_dumps.py) with an arch and the
    groups these cases need: gates {layer: {name: [rows, L, k]}}, kernels {layer: {name: taps}},
    example_index {layer: rows}."""
    def extra(f):
        f["model"].attrs["arch"] = arch
        for layer, rows in (example_index or {}).items():
            f[f"layers/{layer}/example_index"] = np.asarray(rows, np.int32)
        for layer, gd in (gates or {}).items():
            for name, v in gd.items():
                f[f"layers/{layer}/gates/{name}"] = np.asarray(v, np.float32)
        for layer, kd in (kernels or {}).items():
            for name, v in kd.items():
                f[f"kernels/{layer}/{name}"] = np.asarray(v, np.float32)
    write_reference_dump(path, {k: np.asarray(v) for k, v in hidden.items()}, list(lengths),
                         labels=labels, predictions=predictions, extra=extra)


def unbiased_hsic(K, L):
    """Song et al. 2012: (tr(K̃L̃) + 1ᵀK̃1·1ᵀL̃1/((n−1)(n−2)) − 2/(n−2)·1ᵀK̃L̃1) / (n(n−3))."""
    n = K.shape[0]
    K, L = K.copy(), L.copy()
    np.fill_diagonal(K, 0)
    np.fill_diagonal(L, 0)
    one = np.ones(n)
    return (np.trace(K @ L) + (one @ K @ one) * (one @ L @ one) / ((n - 1) * (n - 2))
            - 2 / (n - 2) * (one @ K @ L @ one)) / (n * (n - 3))


def main():
    t = suite_from_args()
    rng = np.random.default_rng(27)

    # ---- gates: a dump whose layers store different examples (example_index) is sampled per
    # layer, and each entry says which rows of its own layer it read.
    def gates_rows_per_layer():
        L, N = 7, 4
        lengths = [7, 1, 3, 7, 2, 5]
        hidden = {0: rng.standard_normal((6, L, 4)), 1: rng.standard_normal((3, L, 4)),
                  2: rng.standard_normal((2, L, 4))}
        f1, f2 = rng.uniform(0, 1, (3, L, N)), rng.uniform(0, 1, (2, L, N))
        p = t.path("gates.dump.h5")
        write_dump(p, hidden, lengths, arch="birdie", gates={1: {"f": f1}, 2: {"f": f2}},
                   example_index={1: [1, 3, 5], 2: [4, 0]})
        r = t.run("analyze", "gates", "--dump", p, "--out", t.path("gates.json"))
        t.ok(r)
        res = json.load(open(t.path("gates.json")))["results"][0]
        assert "rows" not in res, "a top-level sample although the layers' samples differ"
        for g in res["gates"]:
            rows, f, examples = ({1: ([0, 1, 2], f1, [1, 3, 5]), 2: ([0, 1], f2, [4, 0])}
                                 [g["layer"]])
            assert sorted(g["rows"]) == rows, f"layer {g['layer']}: rows {g['rows']}"
            values = np.concatenate([f[r, :lengths[e]] for r, e in zip(rows, examples)])
            assert g["values"] == values.size, (g["values"], values.size)
            assert abs(g["mean"] - values.mean()) < 1e-6, (g["mean"], values.mean())
    t.case("gates: each layer's own sample (example_index)", gates_rows_per_layer)

    # ---- gates: a layer that stores no example (an empty example_index, a valid dump:
    # docs/formats/dump.md allows S' = 0) is refused naming the file and the layer, as
    # anisotropy refuses it; it was the sampler's "sample size M must be at least 1 (got 0)",
    # an option gates does not take (probe M).
    def gates_layer_without_examples_names_file_and_layer():
        L, N = 6, 3
        p = t.path("gates-empty.dump.h5")
        own = np.random.default_rng(2701)  # its own draws: the shared rng's stream is unchanged
        write_dump(p, {0: own.standard_normal((4, L, 4))}, [6, 2, 4, 5], arch="birdie")
        with h5py.File(p, "r+") as f:  # layer 1: S' = 0 rows (unchunked: no chunk fits)
            f["model"].attrs["n_layers"] = 1
            f["layers/1/hidden"] = np.zeros((0, L, 4), np.float32)
            f["layers/1/gates/f"] = np.zeros((0, L, N), np.float32)
            f["layers/1/example_index"] = np.zeros(0, np.int32)
        r = t.run("validate", p)
        t.ok(r)
        anis = t.run("analyze", "anisotropy", "--dump", p, "--layer", "1",
                     "--out", t.path("ge-a.json"))
        r = t.run("analyze", "gates", "--dump", p, "--out", t.path("ge.json"))
        assert r.returncode == anis.returncode == 2, (r.returncode, anis.returncode, r.stderr)
        assert p in r.stderr and "layer 1" in r.stderr and "0 examples" in r.stderr, r.stderr
        assert "sample size" not in r.stderr, r.stderr
        assert not os.path.exists(t.path("ge.json"))
    t.case("gates: a layer storing no example names the file and the layer",
           gates_layer_without_examples_names_file_and_layer)

    # ---- similarity: a layer without variance (every vector equal: zeros, a huge constant
    # 3e38, float16's 60000) has no SVCCA or PWCCA either: its row and column are null with the
    # note naming the layer, the other pairs stand (a layer against itself is 1 for both,
    # Raghu et al. 2017, Morcos et al. 2018). SVCCA reached LAPACK with NaNs: "dgesdd did not
    # converge (info -4)", exit 3, naming neither file nor layer (probe M).
    def similarity_constant_layer_has_null_cca():
        S, L, d = 40, 8, 4
        own = np.random.default_rng(2702)  # its own draws: the shared rng's stream is unchanged
        for value, dtype in ((0.0, np.float32), (3e38, np.float32), (60000.0, np.float16)):
            p = t.path("const-%g.dump.h5" % value)
            write_dump(p, {0: own.standard_normal((S, L, d)), 1: np.zeros((S, L, d)),
                           2: own.standard_normal((S, L, d))}, [L] * S)
            with h5py.File(p, "r+") as f:
                del f["layers/1/hidden"]
                f.create_dataset("layers/1/hidden", data=np.full((S, L, d), value, dtype))
            t.ok(t.run("validate", p))
            for measures in (["--measures", "svcca"], ["--measures", "pwcca"], []):
                out = t.path("const.json")
                if os.path.exists(out):
                    os.remove(out)
                what = (value, measures)
                r = t.run("analyze", "similarity", "--dump", p, "--dump", p, *measures,
                          "--permutations", "0", "--bootstrap", "0", "--out", out)
                assert r.returncode == 0, (what, r.returncode, r.stderr)
                res = json.load(open(out))["results"][0]
                notes = " ".join(res.get("notes", []))
                assert "layer 1 of A" in notes and "no variance" in notes, (what, notes)
                names = [m for m in ("svcca", "pwcca") if m in res["measures"]]
                assert names == ([measures[1]] if measures else ["svcca", "pwcca"]), (what, names)
                for name in res["measures"]:
                    v = res["measures"][name]
                    assert all(v[1][j] is None and v[j][1] is None for j in range(3)), \
                        (what, name, v)
                for name in names:
                    v = res["measures"][name]
                    for i in (0, 2):
                        assert v[i][i] is not None and abs(v[i][i] - 1) < 1e-6, (what, name, v)
    t.case("similarity: SVCCA and PWCCA of a layer without variance are null with a note",
           similarity_constant_layer_has_null_cca)

    # ---- length-accuracy: a bin without examples has no accuracy (null, an empty CSV cell).
    def empty_bin_has_no_accuracy():
        p = t.path("la.dump.h5")
        write_dump(p, {0: rng.standard_normal((6, 10, 3))}, [2, 2, 2, 9, 9, 9],
                   labels=[1] * 6, predictions=[1, 0, 1, 1, 1, 1])
        r = t.run("analyze", "length-accuracy", "--dump", p, "--binning", "edges", "--edges",
                  "1,5,8,10", "--out", t.path("la.json"), "--csv", t.path("la.csv"))
        t.ok(r)
        bins = json.load(open(t.path("la.json")))["results"][0]["bins"]
        assert [b["a"]["count"] for b in bins] == [3, 0, 3]
        assert abs(bins[0]["a"]["accuracy"] - 2 / 3) < 1e-12
        assert bins[1]["a"]["accuracy"] is None, bins[1]["a"]
        rows = list(csv.DictReader(open(t.path("la.csv"))))
        assert rows[1]["accuracy"] == "", rows[1]
    t.case("length-accuracy: an empty bin's accuracy is null", empty_bin_has_no_accuracy)

    # ---- length-accuracy of two models: the CSV holds B's Wilson interval, MCC and macro-F1 as
    # well as A's (the figure drew B's whiskers, which no exported file held; session 35). Wilson
    # (1927) at z = Φ⁻¹(0.975), computed here.
    def compared_csv_has_b_intervals():
        pa, pb = t.path("la-a.dump.h5"), t.path("la-b.dump.h5")
        lengths, labels = [2, 3, 4, 8, 9, 9], [1, 0, 1, 1, 0, 1]
        write_dump(pa, {0: rng.standard_normal((6, 10, 3))}, lengths, labels=labels,
                   predictions=[1, 0, 1, 0, 0, 0])
        write_dump(pb, {0: rng.standard_normal((6, 10, 3))}, lengths, labels=labels,
                   predictions=[1, 1, 1, 1, 0, 1])
        r = t.run("analyze", "length-accuracy", "--dump", pa, "--dump", pb, "--binning", "edges",
                  "--edges", "1,5,10", "--out", t.path("la2.json"), "--csv", t.path("la2.csv"))
        t.ok(r)
        rows = list(csv.DictReader(open(t.path("la2.csv"))))
        z = 1.959963984540054

        def wilson(c, n):
            p = c / n
            centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
            return max(0.0, centre - half), min(1.0, centre + half)
        for row, (c, n) in zip(rows, ((2, 3), (3, 3))):  # B: 2 of 3, then 3 of 3 right
            lo, hi = wilson(c, n)
            assert abs(float(row["wilson_low_b"]) - lo) < 1e-12, row
            assert abs(float(row["wilson_high_b"]) - hi) < 1e-12, row
            assert row["mcc_b"] != "" and row["macro_f1_b"] != "", row
    t.case("length-accuracy of two models: B's interval is in the CSV", compared_csv_has_b_intervals)

    # ---- kernels of a gMLP dump: its spatial matrices W are the result, and the CSV lists their
    # entries (it held only the kernel columns' header; session 35).
    def gmlp_kernels_csv_lists_w():
        import h5py
        p = t.path("gmlp.dump.h5")
        L = 5
        write_dump(p, {0: rng.standard_normal((3, L, 4)), 1: rng.standard_normal((3, L, 4))},
                   [L] * 3, arch="gmlp")
        w = np.tril(rng.standard_normal((L, L))).astype(np.float32)
        with h5py.File(p, "a") as f:
            f["mixing/1"] = w
        r = t.run("analyze", "kernels", "--dump", p, "--out", t.path("gk.json"),
                  "--csv", t.path("gk.csv"))
        t.ok(r)
        rows = list(csv.DictReader(open(t.path("gk.csv"))))
        assert len(rows) == L * L, len(rows)
        got = np.zeros((L, L))
        for row in rows:
            assert row["layer"] == "1", row
            got[int(row["i"]), int(row["j"])] = float(row["value"])
        assert np.array_equal(got.astype(np.float32), w), (got, w)
    t.case("kernels of a gMLP dump: the CSV lists W", gmlp_kernels_csv_lists_w)

    # ---- validate agrees with the readers (session 35): a /model config nested deeper than 64
    # levels passed validate and was refused by `analyze flops`; a dump of no blocks (n_layers
    # 0, legal) got "--layers and --d-model must be positive" from flops, options not given.
    def validate_and_flops_agree_with_readers():
        import h5py
        p = t.path("deep.dump.h5")
        write_dump(p, {0: rng.standard_normal((2, 4, 3)), 1: rng.standard_normal((2, 4, 3))},
                   [4, 4])
        with h5py.File(p, "a") as f:
            f["model"].attrs["config"] = "[" * 65 + "]" * 65
        r = t.run("validate", p)
        assert r.returncode == 1 and "nested at most 64 levels" in r.stdout + r.stderr, r
        p0 = t.path("noblocks.dump.h5")
        write_dump(p0, {0: rng.standard_normal((2, 4, 3))}, [4, 4], arch="bigs")
        with h5py.File(p0, "a") as f:
            f["model"].attrs["n_layers"] = 0
            if "config" in f["model"].attrs:
                del f["model"].attrs["config"]
        r = t.run("analyze", "flops", "--dump", p0, "--out", t.path("flops0.json"))
        assert r.returncode != 0 and "n_layers = 0" in r.stderr and \
            "--layers and --d-model" not in r.stderr, r.stderr
    t.case("validate refuses what the readers refuse; flops of a dump of no blocks says so",
           validate_and_flops_agree_with_readers)

    # ---- Numbers at the edges (session 32's probe): infinite edges read back as null, -inf and
    # inf alike; --edges beside --width was silently the edges; messages wrote 1e-320 as
    # "0.000000" and 1e308 with 300 digits.
    def extreme_numbers_in_options_and_messages():
        p = t.path("la.dump.h5")
        for edges in ("-inf,5,10", "1,5,inf"):
            r = t.run("analyze", "length-accuracy", "--dump", p, "--edges", edges,
                      "--out", t.path("inf.json"))
            assert r.returncode == 2 and "finite" in r.stderr, (edges, r.returncode, r.stderr)
            assert not os.path.exists(t.path("inf.json"))
        r = t.run("analyze", "length-accuracy", "--dump", p, "--edges", "1,5,10", "--width", "2",
                  "--out", t.path("both.json"))
        assert r.returncode == 2 and "--edges" in r.stderr and "--width" in r.stderr, r.stderr
        r = t.run("analyze", "length-accuracy", "--dump", p, "--width", "1e-320",
                  "--out", t.path("w.json"))
        assert r.returncode == 2 and "1e-320" in r.stderr and "0.000000" not in r.stderr, \
            r.stderr
        r = t.run("analyze", "pca", "--dump", p, "--thresholds", "0", "--out", t.path("p.json"))
        assert r.returncode == 2 and "0.000000" not in r.stderr, r.stderr
        # model.dropout below 1 in double but 1 in float (the op's precision): refused up front,
        # exit 2 naming the key, as docs/config.md says of a value out of range.
        config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "resources", "configs", "bigs-tiny.json")
        r = t.run("train", "--config", config,
                  "--out", t.path("drop1"), "--set", "model.dropout=0.9999999999999999",
                  "--set", "train.steps=1", "--threads", "1")
        assert r.returncode == 2 and "model.dropout" in r.stderr, (r.returncode, r.stderr)
        assert not os.path.exists(t.path("drop1/model.ckpt.h5"))
    t.case("numbers at the edges: infinite edges, both binnings, messages, dropout",
           extreme_numbers_in_options_and_messages)

    # ---- anisotropy: an exactly orthogonal pair has cosine 0, not negative (session 32's probe:
    # ±1 vectors, 28% of the pairs orthogonal, gave fraction_negative 0.501 against 0.369 exact,
    # the zeros in the bin below 0). Expected values from integer dot products in numpy.
    def orthogonal_pairs_are_not_negative():
        p = t.path("pm.dump.h5")
        x = np.where(rng.random((40, 1, 8)) < 0.5, 1.0, -1.0)
        write_dump(p, {0: x}, [1] * 40)
        t.ok(t.run("analyze", "anisotropy", "--dump", p, "--layer", "0", "--bins", "4",
                   "--out", t.path("pm.json")))
        r = json.load(open(t.path("pm.json")))["results"][0]
        y = x[r["sample"]["examples"], 0]
        dots = (y @ y.T)[np.triu_indices(len(y), 1)]
        assert (dots == 0).mean() > 0.1, (dots == 0).mean()
        assert abs(r["fraction_negative"] - (dots < 0).mean()) < 1e-12, \
            (r["fraction_negative"], (dots < 0).mean())
        # Bins [-1, -0.5), [-0.5, 0), [0, 0.5), [0.5, 1]: exact cosines k/8 by numpy's rule.
        counts, _ = np.histogram(dots / 8.0, bins=4, range=(-1, 1))
        assert r["histogram"]["counts"] == counts.tolist(), (r["histogram"], counts)
        assert abs(r["median"] - np.median(dots / 8.0)) < 1e-12, (r["median"], np.median(dots))
    t.case("anisotropy: exactly orthogonal pairs are not negative", orthogonal_pairs_are_not_negative)

    # ---- Finite skips near a double's limit (session 32's probe): the r = 0 value, the mean of
    # K_f[0] + D_f and K_b[0] + D_b, is a double (it was null in the JSON, inf in the CSV); the
    # implicit attention's diagonal, their sum, is not: an error naming the file.
    def huge_skips():
        p = t.path("huge-d.dump.h5")
        kf, kb = rng.standard_normal(8), rng.standard_normal(8)
        write_dump(p, {0: rng.standard_normal((2, 8, 4)), 1: rng.standard_normal((2, 8, 4))},
                   [8, 8], arch="bigs", kernels={1: {"forward": kf, "backward": kb}})
        with h5py.File(p, "r+") as f:
            f["kernels/1"].attrs["D_forward"] = 1.7e308
            f["kernels/1"].attrs["D_backward"] = 1.7e308
        t.ok(t.run("analyze", "kernels", "--dump", p, "--layer", "1", "--radius", "3",
                   "--out", t.path("hd.json"), "--csv", t.path("hd.csv")))
        k = json.load(open(t.path("hd.json")))["results"][0]["layers"][0]
        centre = np.float64(0.5) * (np.float32(kf[0]) + 1.7e308) + \
            np.float64(0.5) * (np.float32(kb[0]) + 1.7e308)
        assert k["relative"][3] is not None and abs(k["relative"][3] / centre - 1) < 1e-12, \
            (k["relative"], centre)
        assert "inf" not in open(t.path("hd.csv")).read().lower()
        r = t.run("analyze", "implicit-attention", "--dump", p, "--layer", "1", "--example", "0",
                  "--mode", "sum", "--out", t.path("ia.json"))
        assert r.returncode == 2 and p in r.stderr and "/kernels/1" in r.stderr, \
            (r.returncode, r.stderr)
        assert not os.path.exists(t.path("ia.json"))
    t.case("kernels: finite skips near a double's limit", huge_skips)

    # ---- pca: k at p = 1 is the rank of the centred sentence (numpy's matrix_rank), not one
    # more for a rounding-noise eigenvalue.
    def pca_k_at_one_is_the_rank():
        S, L, d = 40, 12, 8
        lengths = rng.integers(2, L + 1, S)
        h = rng.standard_normal((S, L, d))
        p = t.path("pca.dump.h5")
        write_dump(p, {0: h}, lengths)
        r = t.run("analyze", "pca", "--dump", p, "--thresholds", "1.0", "--out", t.path("pca.json"))
        t.ok(r)
        res = json.load(open(t.path("pca.json")))["results"][0]["sentences"]
        for x, k in zip(res["examples"], res["k"]):
            n = int(lengths[x])
            centred = h[x, :n].astype(np.float32).astype(np.float64)
            centred = centred - centred.mean(0)
            assert k[0] == np.linalg.matrix_rank(centred), (x, n, k[0])
    t.case("pca: k(1.0) is the rank", pca_k_at_one_is_the_rank)

    # ---- similarity: a length bin of fewer than 4 vectors is skipped, the rest stands; an
    # unbiased CKA that double cannot resolve is null with a note, an ordinary one is Song's.
    def similarity_small_bin_and_unbiased():
        lengths = [3] * 10 + [5] * 2 + [7] * 18
        S, L, d = len(lengths), 8, 3
        x = rng.standard_normal((S, L, d))
        y = x @ rng.standard_normal((d, d)) + 0.5 * rng.standard_normal((S, L, d))
        pa, pb = t.path("sa.dump.h5"), t.path("sb.dump.h5")
        write_dump(pa, {1: x}, lengths)
        write_dump(pb, {1: y}, lengths)
        r = t.run("analyze", "similarity", "--dump", pa, "--dump", pb, "--vectors", "sentence",
                  "--measures", "linear_cka,linear_cka_unbiased", "--length-bins", "3",
                  "--permutations", "0", "--bootstrap", "0", "--out", t.path("sim.json"))
        t.ok(r)
        results = json.load(open(t.path("sim.json")))["results"]
        assert len(results) == 4, len(results)
        skipped = [res for res in results if "skipped" in res]
        assert len(skipped) == 1 and skipped[0]["length_range"] == [5, 6], skipped
        assert "lengths 5 to 6" in skipped[0]["skipped"], skipped[0]["skipped"]
        # the overall result: Song's unbiased CKA of the sentence vectors (masked token means)
        va = np.stack([x[s, :lengths[s]].astype(np.float32).astype(np.float64).mean(0)
                       for s in range(S)])
        vb = np.stack([y[s, :lengths[s]].astype(np.float32).astype(np.float64).mean(0)
                       for s in range(S)])
        K, Lm = va @ va.T, vb @ vb.T
        want = unbiased_hsic(K, Lm) / np.sqrt(unbiased_hsic(K, K) * unbiased_hsic(Lm, Lm))
        got = results[0]["measures"]["linear_cka_unbiased"][0][0]
        assert got is not None and abs(got - want) < 1e-6 * abs(want), (got, want)
        # two unrelated layers: an unbiased CKA near 0 is a score (Song's value), not a null
        S2 = 300
        xi, yi = rng.standard_normal((S2, 4, 5)), rng.standard_normal((S2, 4, 5))
        write_dump(t.path("ia.dump.h5"), {1: xi}, [4] * S2)
        write_dump(t.path("ib.dump.h5"), {1: yi}, [4] * S2)
        r = t.run("analyze", "similarity", "--dump", t.path("ia.dump.h5"), "--dump",
                  t.path("ib.dump.h5"), "--vectors", "sentence", "--measures",
                  "linear_cka_unbiased", "--permutations", "0", "--bootstrap", "0", "--out",
                  t.path("indep.json"))
        t.ok(r)
        ua = xi.astype(np.float32).astype(np.float64).mean(1)
        ub = yi.astype(np.float32).astype(np.float64).mean(1)
        K, Lm = ua @ ua.T, ub @ ub.T
        want = unbiased_hsic(K, Lm) / np.sqrt(unbiased_hsic(K, K) * unbiased_hsic(Lm, Lm))
        got = json.load(open(t.path("indep.json")))["results"][0]["measures"][
            "linear_cka_unbiased"][0][0]
        assert got is not None and abs(got - want) < 1e-9, (got, want)
        # one outlier of 10^12 among values of order 1: the terms cancel beyond double's digits
        x2 = x.copy()
        x2[0, 0, 0] = 1e12
        write_dump(t.path("so.dump.h5"), {1: x2}, lengths)
        r = t.run("analyze", "similarity", "--dump", t.path("so.dump.h5"), "--dump", pb,
                  "--measures", "linear_cka,linear_cka_unbiased", "--permutations", "0",
                  "--bootstrap", "0", "--out", t.path("so.json"))
        t.ok(r)
        res = json.load(open(t.path("so.json")))["results"][0]
        assert res["measures"]["linear_cka_unbiased"][0][0] is None, res["measures"]
        assert res["measures"]["linear_cka"][0][0] is not None
        assert any("linear_cka_unbiased" in n for n in res["notes"]), res["notes"]
    t.case("similarity: a small length bin is skipped; unbiased CKA null where double fails",
           similarity_small_bin_and_unbiased)

    # ---- similarity: with few examples the bootstrap's resamples repeat examples, which raises
    # CKA above the score (numpy's own bootstrap shows it); the result says so in a note that
    # counts the layer pairs whose score lies outside their interval.
    def similarity_bootstrap_above_score_is_noted():
        S, L, d = 16, 1, 64
        own = np.random.default_rng(27)  # its own draws: the margin below is this sample's
        x = own.standard_normal((S, L, d))
        y = x @ own.standard_normal((d, d)) + 2.0 * own.standard_normal((S, L, d))
        pa, pb = t.path("ba.dump.h5"), t.path("bb.dump.h5")
        write_dump(pa, {1: x}, [L] * S)
        write_dump(pb, {1: y}, [L] * S)
        r = t.run("analyze", "similarity", "--dump", pa, "--dump", pb, "--vectors", "sentence",
                  "--measures", "linear_cka", "--permutations", "0", "--bootstrap", "100",
                  "--out", t.path("boot.json"))
        t.ok(r)
        res = json.load(open(t.path("boot.json")))["results"][0]
        va = x.astype(np.float32).astype(np.float64).mean(1)
        vb = y.astype(np.float32).astype(np.float64).mean(1)

        def cka(u, v):
            u, v = u - u.mean(0), v - v.mean(0)
            return np.linalg.norm(u.T @ v) ** 2 / (np.linalg.norm(u.T @ u) * np.linalg.norm(v.T @ v))
        score = cka(va, vb)
        g = res["gram"]["linear_cka"]
        assert abs(g["observed"][0][0] - score) < 1e-9, (g["observed"], score)
        boot_rng = np.random.default_rng(5)
        resampled = [cka(va[i], vb[i]) for i in (boot_rng.integers(0, S, S) for _ in range(400))]
        assert np.percentile(resampled, 2.5) > score, "numpy's bootstrap is not above the score"
        outside = sum(1 for o, lo, hi in zip(g["observed"][0], g["ci_low"][0], g["ci_high"][0])
                      if not lo <= o <= hi)
        assert outside == 1, (g["observed"], g["ci_low"], g["ci_high"])
        assert any("outside its bootstrap interval in 1 of 1 layer pairs" in n
                   for n in res["notes"]), res["notes"]
    t.case("similarity: a bootstrap interval above its score is noted",
           similarity_bootstrap_above_score_is_noted)

    # ---- similarity at float32's extremes: vectors of order 10^38 (finite) and subnormal ones
    # (10^-40). A layer against itself has CKA 1 by definition (Kornblith et al. 2019), biased
    # and unbiased, and every bootstrap resample of it too; HSIC(X, X)·HSIC(Y, Y) overflowed
    # double at 10^38 (an unbiased CKA of 0 and an interval [0, 0]) and fell into double's
    # subnormals at 10^-40 (1.0000032).
    def similarity_at_float32_extremes():
        S, L, d = 60, 6, 4
        # |h| ≤ 3: times 10^38 stays below float32's largest, 3.4·10^38, whatever the draw.
        h = np.clip(rng.standard_normal((S, L, d)), -3, 3).astype(np.float32)
        for scale in (np.float32(1e38), np.float32(1e-40)):
            big = (h * scale).astype(np.float32)
            assert np.isfinite(big).all() and (big != 0).any()
            p = t.path("extreme.dump.h5")
            write_dump(p, {0: h, 1: big}, [L] * S)
            r = t.run("analyze", "similarity", "--dump", p, "--dump", p, "--permutations", "0",
                      "--bootstrap", "20", "--out", t.path("extreme.json"))
            t.ok(r)
            res = json.load(open(t.path("extreme.json")))["results"][0]
            for name in ("linear_cka", "linear_cka_unbiased"):
                v = res["measures"][name][1][1]
                assert v is not None and abs(v - 1) < 1e-9, (scale, name, v)
            g = res["gram"]["linear_cka"]
            for key in ("observed", "ci_low", "ci_high"):
                v = g[key][1][1]
                assert v is not None and abs(v - 1) < 1e-9, (scale, key, v)
    t.case("similarity: a layer of 1e38 or 1e-40 against itself is 1",
           similarity_at_float32_extremes)

    # ---- SVCCA keeping all the variance (--svcca-variance 1) of a rank-deficient layer: the
    # directions with variance, i.e. its rank (a constant unit and a duplicated one: rank 2 of
    # 4). A third direction of rounding noise was kept, and its meaningless canonical
    # correlation entered the mean (0.160 for 0.240 here); the scatter of the same cell kept 2.
    # Expected: Raghu et al. 2017 from the SVD, here.
    def svcca_all_variance_keeps_the_rank():
        S, L = 15, 8
        g = np.random.default_rng(77)
        lengths = [int(x) for x in g.integers(1, 9, S)]
        A = g.standard_normal((S, L, 4)).astype(np.float32)
        A[..., 3] = A[..., 0]
        A[..., 1] = 4.0
        Bh = g.standard_normal((S, L, 6)).astype(np.float32)
        pa, pb = t.path("rank2a.dump.h5"), t.path("rank2b.dump.h5")
        write_dump(pa, {0: A}, lengths)
        write_dump(pb, {0: Bh}, lengths)
        r = t.run("analyze", "similarity", "--dump", pa, "--dump", pb, "--measures", "svcca",
                  "--svcca-variance", "1.0", "--permutations", "0", "--bootstrap", "0",
                  "--out", t.path("rank2.json"))
        t.ok(r)
        res = json.load(open(t.path("rank2.json")))["results"][0]
        ex, pos = res["sample"]["examples"], res["sample"]["positions"]
        X = np.array([A[e, q] for e, q in zip(ex, pos)], np.float64)
        Y = np.array([Bh[e, q] for e, q in zip(ex, pos)], np.float64)

        def directions(Z):
            Z = Z - Z.mean(0)
            U, sv, _ = np.linalg.svd(Z, full_matrices=False)
            return U[:, : int((sv > 1e-6 * sv[0]).sum())]
        ux, uy = directions(X), directions(Y)
        assert ux.shape[1] == 2 and uy.shape[1] == 6, (ux.shape, uy.shape)
        rho = np.linalg.svd(ux.T @ uy, compute_uv=False)
        expected = float(np.mean(rho[:2]))
        assert res["svcca_dims_a"] == [2], res["svcca_dims_a"]
        got = res["measures"]["svcca"][0][0]
        assert abs(got - expected) < 1e-6 * expected, (got, expected)
    t.case("similarity: SVCCA of all the variance keeps a rank-deficient layer's rank",
           svcca_all_variance_keeps_the_rank)

    # ---- strings of a dump that are not UTF-8 (a /vocab piece: validate --quick does not read
    # them): the JSON and CSV are written with U+FFFD for each bad byte (RFC 3629; the workbench
    # shows them so), not refused as an internal error while writing.
    def vocab_piece_not_utf8_is_replaced():
        import h5py
        p = t.path("badvocab.dump.h5")
        h = np.ones((2, 4, 2))
        write_dump(p, {0: h, 1: 2 * h}, [4, 4], arch="bigs",
                   kernels={1: {"forward": 0.5 ** np.arange(4), "backward": 0.5 ** np.arange(4)}})
        with h5py.File(p, "a") as f:
            f["data/tokens"][...] = np.array([[2, 5, 6, 3], [2, 6, 6, 3]], np.int32)
            vocab = [b"[PAD]", b"[UNK]", b"[CLS]", b"[SEP]", b"[MASK]", b"bad\xff\xfeX", b"ok"]
            f.create_dataset("vocab", data=np.array(vocab, dtype=object),
                             dtype=h5py.string_dtype("utf-8"))
        out, csv_out = t.path("badvocab.json"), t.path("badvocab.csv")
        r = subprocess.run([t.cli, "analyze", "implicit-attention", "--dump", p, "--layer", "1",
                            "--example", "0", "--out", out, "--csv", csv_out],
                           capture_output=True, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stderr)
        raw = open(out, "rb").read()
        text = raw.decode("utf-8")  # raises on invalid UTF-8
        assert "bad\ufffd\ufffdX" in json.dumps(json.loads(text), ensure_ascii=False), text[:400]
        open(csv_out, "rb").read().decode("utf-8")
    t.case("a /vocab piece that is not UTF-8 is written with U+FFFD",
           vocab_piece_not_utf8_is_replaced)

    # ---- implicit-attention builds the example's n × n matrix in doubles (docs/analyses.md): a
    # valid 4 MB dump of one 65,536-token example asks for at least 8 · 65536² bytes = 32 GiB. It
    # is refused before anything is allocated, exit 2 naming the example's length and the memory
    # (it was "out of memory (std::bad_alloc)", exit 3, or the OOM killer below the limit). Run
    # under a 4 GiB RLIMIT_AS so that a regression fails fast instead of swapping.
    def long_example_implicit_attention_refused():
        import resource
        n, d = 65536, 8
        p = t.path("long-example.dump.h5")
        with h5py.File(p, "w") as f:
            f.attrs.update(format="routescope-dump", format_version=1, producer="edge-cases",
                           created="2026-01-01T00:00:00Z")
            f.create_group("model").attrs.update(arch="bigs", name="long", n_layers=1,
                                                 d_model=d)
            f["data/tokens"] = np.full((1, n), 3, np.int32)
            f["data/lengths"] = np.full(1, n, np.int32)
            rng = np.random.default_rng(0)
            for layer in (0, 1):
                f.create_dataset(f"layers/{layer}/hidden",
                                 data=rng.standard_normal((1, n, d)).astype(np.float32),
                                 chunks=(1, 8192, d))
            f["kernels/1/forward"] = (0.9 ** np.arange(n)).astype(np.float32)
            f["kernels/1/backward"] = (0.9 ** np.arange(n)).astype(np.float32)
        assert os.path.getsize(p) < 8 << 20, os.path.getsize(p)

        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))
        out = t.path("long-example.json")
        r = t.run("analyze", "implicit-attention", "--dump", p, "--layer", "1", "--out", out,
                  timeout=120, preexec=limited)
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "bad_alloc" not in r.stderr and "65536 tokens" in r.stderr, r.stderr[-400:]
        assert "ulimit -v" in r.stderr, r.stderr[-400:]
        size = re.search(r"would need about ([0-9.]+) (GiB|TiB)", r.stderr)
        assert size, r.stderr[-400:]
        need = float(size.group(1)) * (1 << (30 if size.group(2) == "GiB" else 40))
        assert need >= 8 * n * n, (need, r.stderr[-400:])
        assert not os.path.exists(out)
    t.case("implicit-attention of a 65,536-token example is refused naming its length",
           long_example_implicit_attention_refused)

    # ---- docs/cli.md: kernels from a checkpoint take about 224 bytes per position and layer,
    # refused beyond the memory the process may use (exit 2 naming --length). Under a 2 GiB
    # RLIMIT_AS (ulimit -v) 16 layers of 2^20 positions need 224 · 2^20 · 16 bytes = 3.5 GiB:
    # the limit is the process's, not the machine's (it ran into "out of memory
    # (std::bad_alloc)", exit 3), and the message names it.
    def kernels_beyond_the_process_limit():
        import resource
        run = t.path("k16-run")
        cfg = t.config("k16.json", """{"model": {"arch": "bigs", "d_model": 16, "n_layers": 16,
 "max_len": 16, "ssm": {"n_modes": 4}}, "data": {"train": "builtin:grammar", "seq_len": 16},
 "train": {"steps": 0, "eval_batches": 1, "threads": 1}}""")
        r = t.run("train", "--config", cfg, "--out", run)
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])

        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.RLIM_INFINITY))
        out = t.path("k16.json.out")
        r = t.run("analyze", "kernels", "--checkpoint", os.path.join(run, "model.ckpt.h5"),
                  "--length", "1048576", "--out", out, timeout=120, preexec=limited)
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "--length 1048576" in r.stderr and "16 layer(s)" in r.stderr, r.stderr[-400:]
        assert "the process's memory limit (ulimit -v) of 2 GiB" in r.stderr, r.stderr[-400:]
        assert not os.path.exists(out)
    t.case("analyze kernels beyond the process's ulimit -v is exit 2 naming the limit",
           kernels_beyond_the_process_limit)

    # ---- control characters from a file's names (ESC sequences, BEL, a newline) are printed
    # as \xNN by inspect, validate and analyze's errors: a hostile dump neither drives the
    # terminal nor forges a line of a report (ECMA-48: ESC, BEL, CSI are the terminal's
    # commands); inspect's output is UTF-8 for a name that is not.
    def control_characters_are_escaped():
        import h5py
        p = t.path("esc.dump.h5")
        write_dump(p, {0: np.ones((2, 4, 2))}, [4, 4])
        with h5py.File(p, "a") as f:
            f.attrs["producer"] = "x\x1b[2J\x07"
            f["model"].attrs["name"] = "m\x1b]0;pwned\x07\n  layers:    forged line"
            f["layers/\x1b[31mRED"] = np.zeros((2, 4, 2), np.float32)
        for args in (["inspect", p], ["validate", p],
                     ["analyze", "pca", "--dump", p, "--out", t.path("esc.json")]):
            r = subprocess.run([t.cli, *args], capture_output=True, timeout=120)
            out = r.stdout + r.stderr
            raw = sorted({hex(c) for c in out if c < 0x20 and c != 0x0A})
            assert not raw, (args[0], raw, out[:300])
            assert b"forged line" not in out.split(b"\n")[0] or args[0] != "inspect"
            assert not any(line.lstrip().startswith(b"layers:    forged")
                           for line in out.split(b"\n")), (args[0], out[:400])
            out.decode("utf-8")
        r = subprocess.run([t.cli, "inspect", p], capture_output=True, timeout=120)
        assert b"\\x1B]0;pwned\\x07\\x0A" in r.stdout, r.stdout[:400]
        q = t.path("latin1.dump.h5")
        write_dump(q, {0: np.ones((1, 2, 2))}, [2])
        with h5py.File(q, "a") as f:
            del f["model"].attrs["name"]
            f["model"].attrs.create("name", np.bytes_(b"bad \xff\xfe name"))
        r = subprocess.run([t.cli, "inspect", q], capture_output=True, timeout=120)
        (r.stdout + r.stderr).decode("utf-8")
        assert b"bad \\xFF\\xFE name" in r.stdout, r.stdout[:300]
    t.case("control characters from a file are printed as \\xNN", control_characters_are_escaped)

    # ---- implicit-attention: the message names the kernel dataset that is missing or short.
    def implicit_attention_names_the_kernel():
        h = rng.standard_normal((2, 6, 4))
        p = t.path("ia-back.dump.h5")
        write_dump(p, {0: h, 1: h}, [6, 4], arch="bigs", kernels={1: {"backward": np.ones(6)}})
        r = t.run("analyze", "implicit-attention", "--dump", p, "--layer", "1", "--mode",
                  "backward", "--out", t.path("ia.json"))
        assert r.returncode == 2 and "/kernels/1 holds no forward kernel" in r.stderr, r.stderr
        p = t.path("ia-short.dump.h5")
        write_dump(p, {0: h, 1: h}, [6, 4], arch="bigs",
                   kernels={1: {"forward": np.ones(3), "backward": np.ones(3)}})
        r = t.run("analyze", "implicit-attention", "--dump", p, "--layer", "1", "--out",
                  t.path("ia.json"))
        assert r.returncode == 2 and "/kernels/1/forward has 3 taps" in r.stderr, r.stderr
        assert p in r.stderr, r.stderr
    t.case("implicit-attention: missing and short kernels named", implicit_attention_names_the_kernel)

    # ---- usage errors: exit 2 before any work, nothing written.
    def usage_errors():
        p = t.path("pca.dump.h5")
        out = t.path("usage.json")
        for args, says in [
            (["anisotropy", "--dump", p, "--dump", p], "takes one --dump"),
            (["pca", "--dump", p, "--csv", out], "same file"),
            (["anisotropy", "--dump", p, "--bins", "1000000"], "--bins"),
            (["flops", "--dump", p, "--arch", "bert"], "--arch"),
            (["flops", "--state", "-3"], "--state"),
        ]:
            r = t.run("analyze", *args, "--out", out)
            assert r.returncode == 2 and says in r.stderr, (args, r.returncode, r.stderr)
            assert not os.path.exists(out), args
        r = t.run("analyze", "length-accuracy", "--dump", t.path("la.dump.h5"), "--binning", "width",
                  "--width", "1e-6", "--out", out)
        assert r.returncode == 2 and "--width" in r.stderr, r.stderr
    t.case("analyze: extra inputs, --out = --csv and absurd sizes are usage errors", usage_errors)

    # ---- an output that is a directory (or a link to one) is a usage error found before any
    # work: it was found by the final rename ("Is a directory", exit 3), after the whole analysis
    # or dump.
    def directory_outputs_are_refused_first():
        outdir = t.path("outdir")
        os.makedirs(outdir, exist_ok=True)
        link = t.path("outdir-link")
        if not os.path.islink(link):
            os.symlink(outdir, link)
        p = t.path("pca.dump.h5")
        for target in (outdir, link):
            for args, option in [
                (["analyze", "flops", "--out", target], "--out"),
                (["analyze", "pca", "--dump", p, "--out", t.path("dir.json"), "--csv", target],
                 "--csv"),
                (["sample-dump", "--out", target, "--examples", "2", "--length", "8"], "--out"),
            ]:
                r = t.run(*args)
                assert r.returncode == 2, (args, r.returncode, r.stderr)
                assert f"{option} {target}: is a directory" in r.stderr, (args, r.stderr)
                assert os.listdir(outdir) == [], (args, os.listdir(outdir))
                assert not os.path.exists(t.path("dir.json")), args
    t.case("an output that is a directory is refused before any work",
           directory_outputs_are_refused_first)

    # ---- a relative link is followed from the folder that holds it (as the kernel does), even
    # when that folder was reached through another link: home/runs -> ../real/runs holds
    # r.json -> ../results/flops.json, which is real/results/flops.json (the lexical
    # home/results/flops.json does not exist).
    def nested_links_are_followed_as_the_kernel_does():
        root = t.path("nested-links")
        os.makedirs(os.path.join(root, "real", "runs"), exist_ok=True)
        os.makedirs(os.path.join(root, "real", "results"), exist_ok=True)
        os.makedirs(os.path.join(root, "home"), exist_ok=True)
        if not os.path.islink(os.path.join(root, "home", "runs")):
            os.symlink("../real/runs", os.path.join(root, "home", "runs"))
            os.symlink("../results/flops.json", os.path.join(root, "real", "runs", "r.json"))
        out = os.path.join(root, "home", "runs", "r.json")
        t.ok(t.run("analyze", "flops", "--out", out))
        assert os.path.islink(os.path.join(root, "real", "runs", "r.json"))
        with open(os.path.join(root, "real", "results", "flops.json")) as f:
            json.load(f)
        assert os.path.realpath(out) == os.path.join(os.path.realpath(root), "real", "results",
                                                     "flops.json")
    t.case("an output's relative link inside a linked folder is followed as the kernel does",
           nested_links_are_followed_as_the_kernel_does)

    # ---- the commands that train and dump: a tiny BiGS on a tiny corpus.
    corpus = t.path("corpus.txt")
    words = "the cat dog sat ran on a mat".split()
    with open(corpus, "w") as f:
        for i in range(200):
            f.write(" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(9)) + "\n")
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resources",
                          "configs", "bigs-tiny.json")
    tiny = ["--config", config, "--set", f"data.train={corpus}", "--set", "model.d_model=32",
            "--set", "data.seq_len=32", "--set", "train.steps=3", "--threads", "1", "--json"]

    def overwrite_replaces_the_run():
        run = t.path("run")
        t.ok(t.run("train", "--out", run, *tiny))
        assert os.path.exists(os.path.join(run, "model.ckpt.h5"))
        # The new run diverges before its first checkpoint: the old model must not stay behind.
        r = t.run("train", "--out", run, "--overwrite", *tiny, "--set", "model.d_model=48",
                  "--set", "train.lr=1e30", "--set", "train.clip_grad_norm=0")
        assert r.returncode == 3, (r.returncode, r.stderr)
        assert not os.path.exists(os.path.join(run, "model.ckpt.h5")), os.listdir(run)
    t.case("train --overwrite removes the replaced run's checkpoint", overwrite_replaces_the_run)

    def resume_keeps_the_tokenizer():
        run = t.path("resume")
        t.ok(t.run("train", "--out", run, *tiny))
        ckpt = os.path.join(run, "model.ckpt.h5")
        before = open(ckpt, "rb").read()
        r = t.run("train", "--resume", run, "--set", "train.steps=6", "--set",
                  "tokenizer.kind=sentencepiece", "--json")
        assert r.returncode == 2 and "tokenizer.kind" in r.stderr, (r.returncode, r.stderr)
        assert open(ckpt, "rb").read() == before, "the refused resume rewrote the checkpoint"
    t.case("train --resume refuses a tokenizer override", resume_keeps_the_tokenizer)

    def dump_into_a_directory_is_refused_first():
        outdir = t.path("outdir")
        ckpt = os.path.join(t.path("resume"), "model.ckpt.h5")
        r = t.run("dump", "--checkpoint", ckpt, "--out", outdir, "--examples", "2")
        assert r.returncode == 2 and f"--out {outdir}: is a directory" in r.stderr, r.stderr
        assert os.listdir(outdir) == [], os.listdir(outdir)
    t.case("dump into a directory is refused before the model runs",
           dump_into_a_directory_is_refused_first)

    def dump_refuses_values_float16_cannot_hold():
        # One LayerNorm weight scaled by 10^5 (the checkpoint stays finite): activations beyond
        # float16's 65504, which a float16 dump would store as Inf.
        run = t.path("big")
        t.ok(t.run("train", "--out", run, *tiny, "--set", "train.steps=0"))
        ckpt = os.path.join(run, "model.ckpt.h5")
        with h5py.File(ckpt, "r+") as f:
            f["params/embeddings.norm.weight"][...] = f["params/embeddings.norm.weight"][...] * 1e5
        out = t.path("big.dump.h5")
        r = t.run("dump", "--checkpoint", ckpt, "--data", corpus, "--examples", "2", "--dtype",
                  "f16", "--out", out)
        assert r.returncode == 3 and "float16" in r.stderr and "/layers/" in r.stderr, r.stderr
        assert not os.path.exists(out)
        r = t.run("dump", "--checkpoint", ckpt, "--data", corpus, "--examples", "2", "--out", out)
        t.ok(r)  # float32 holds them
    t.case("dump refuses activations a float16 dump cannot hold", dump_refuses_values_float16_cannot_hold)

    def experiment_refuses_one_arch_for_all():
        r = t.run("experiment", "induction", "--out", t.path("exp"), "--steps", "3", "--set",
                  "model.arch=bigs")
        assert r.returncode == 2 and "model.arch" in r.stderr, (r.returncode, r.stderr)
    t.case("experiment refuses --set model.arch", experiment_refuses_one_arch_for_all)

    def integer_options_say_their_rule():
        r = t.run("dump", "--checkpoint", t.path("big/model.ckpt.h5"), "--data", corpus,
                  "--length", "0", "--out", t.path("len.dump.h5"))
        assert r.returncode == 2, r.returncode
        r = t.run("eval", "--checkpoint", t.path("big/model.ckpt.h5"), "--data", corpus,
                  "--batch-size", "0", "--out", t.path("e.jsonl"))
        assert r.returncode == 2 and "must be an integer of 1 or more" in r.stderr, r.stderr
    t.case("integer options say their rule", integer_options_say_their_rule)

    # ---- an evaluation's predictions (docs/formats/predictions.md, written here by hand) by
    # length from the CLI, as the workbench's view reads them: `--dump preds.jsonl` was refused
    # as "not an HDF5 file" with "--no-check skips it", which it did not (format probe, session
    # 31). Counts, accuracies and Wilson intervals from the definitions, bins [lo, hi), the last
    # [lo, hi].
    def length_accuracy_of_predictions():
        import json
        import math
        import random
        rng = random.Random(3)
        rows = []
        preds = t.path("hand.preds.jsonl")
        with open(preds, "w") as f:
            for i in range(40):
                length = rng.randint(3, 40)
                label = rng.choice(["yes", "no"])
                pred = label if rng.random() < 0.7 else ("no" if label == "yes" else "yes")
                rows.append((length, label == pred))
                f.write(json.dumps({"id": i, "length": length, "label": label,
                                    "prediction": pred, "correct": label == pred,
                                    "attributes": {}}) + "\n")
        out = t.path("hand.la.json")
        t.ok(t.run("analyze", "length-accuracy", "--predictions", preds, "--edges", "0,10,20,40",
                   "--out", out))
        bins = json.load(open(out))["results"][0]["bins"]
        edges = [0, 10, 20, 40]
        z = 1.959963984540054
        assert len(bins) == 3, bins
        for k, b in enumerate(bins):
            lo, hi = edges[k], edges[k + 1]
            inside = [c for n, c in rows if lo <= n < hi or (k == 2 and n == hi)]
            n, x = len(inside), sum(inside)
            p = x / n
            centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
            got = b["a"]
            assert got["count"] == n and got["correct"] == x, (k, got, n, x)
            assert abs(got["accuracy"] - p) < 1e-12, (k, got["accuracy"], p)
            assert abs(got["wilson_low"] - (centre - half)) < 1e-9, (k, got, centre - half)
            assert abs(got["wilson_high"] - (centre + half)) < 1e-9, (k, got, centre + half)
        r = t.run("analyze", "length-accuracy", "--dump", preds, "--out", t.path("x.json"))
        assert r.returncode == 2 and "--predictions" in r.stderr, (r.returncode, r.stderr)
        r = t.run("analyze", "anisotropy", "--predictions", preds, "--out", t.path("x.json"))
        assert r.returncode == 2 and "--predictions" in r.stderr, (r.returncode, r.stderr)
    t.case("length-accuracy of an evaluation's predictions matches the definitions",
           length_accuracy_of_predictions)

    # ---- session 34's probe of the analyses against numpy.
    # pc1_variance "in double" (docs/analyses.md): every vector equal, XᵀX of rank one, λ₁/Σλ is 1
    # to rounding in double; XᵀX accumulated in float gave 0.99999992.
    def pc1_of_a_rank_one_layer_is_one():
        v = np.random.default_rng(1).standard_normal(8).astype(np.float32)
        p = t.path("rank1.dump.h5")
        write_dump(p, {0: np.broadcast_to(v, (12, 10, 8)).copy()}, [10] * 12)
        out = t.path("rank1.json")
        t.ok(t.run("analyze", "anisotropy", "--dump", p, "--layer", "0", "--out", out))
        pc1 = json.load(open(out))["results"][0]["pc1_variance"]
        X = np.broadcast_to(v.astype(np.float64), (12, 8))
        ev = np.clip(np.linalg.eigvalsh(X.T @ X), 0, None)
        assert abs(pc1 - ev.max() / ev.sum()) < 1e-12, (pc1, ev.max() / ev.sum())
    t.case("anisotropy: pc1_variance of a rank-one layer is 1 in double",
           pc1_of_a_rank_one_layer_is_one)

    # pca --global-m 0 "leaves it out" (docs/analyses.md): no `global` entry (it wrote empty lists).
    def pca_global_m_zero_leaves_it_out():
        rng = np.random.default_rng(5)
        p = t.path("g0.dump.h5")
        write_dump(p, {0: rng.standard_normal((6, 9, 4)).astype(np.float32)}, [9, 5, 7, 9, 3, 8])
        out = t.path("g0.json")
        t.ok(t.run("analyze", "pca", "--dump", p, "--layer", "0", "--global-m", "0",
                   "--out", out))
        r = json.load(open(out))["results"][0]
        assert "global" not in r, r.get("global")
    t.case("pca: --global-m 0 leaves the global variant out", pca_global_m_zero_leaves_it_out)

    # A gate's padding is never read (docs/analyses.md: the statistics are over every real
    # position p < n), as a hidden state's is not: a NaN there stopped `analyze gates` (exit 2).
    # The mean and count recomputed in numpy over the real positions.
    def gates_ignore_their_padding():
        rng = np.random.default_rng(9)
        lengths = [6, 10, 4, 8]
        g = rng.uniform(0.05, 0.95, (4, 10, 3)).astype(np.float32)
        for i, n in enumerate(lengths):
            g[i, n:] = np.nan
        p = t.path("padnan.dump.h5")
        write_dump(p, {0: rng.standard_normal((4, 10, 5)).astype(np.float32),
                       1: rng.standard_normal((4, 10, 5)).astype(np.float32)}, lengths,
                   arch="bigs", gates={1: {"u_f": g}})
        out = t.path("padnan.json")
        r = t.run("analyze", "gates", "--dump", p, "--layer", "1", "--out", out)
        assert r.returncode == 0, r.stderr
        real = np.concatenate([g[i, :n].ravel() for i, n in enumerate(lengths)]).astype(np.float64)
        got = json.load(open(out))["results"][0]["gates"][0]
        assert got["values"] == real.size, (got["values"], real.size)
        assert abs(got["mean"] - real.mean()) < 1e-6, (got["mean"], real.mean())
        assert abs(got["std"] - real.std()) < 1e-6, (got["std"], real.std())
    t.case("gates: NaN in the padding is never read", gates_ignore_their_padding)

    # flops' non_embedding_parameters "counts the parameters the model holds" (docs/cli.md): the
    # parameters of the checkpoint's blocks, counted with h5py. gMLP left out each layer's spatial
    # W and b, S-LSTM its seven gate LayerNorms.
    def flops_count_every_block_parameter():
        configs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "resources", "configs")
        for name, prefix in (("gmlp", "layers."), ("slstm", "slstm.")):
            run = t.path("flops-" + name)
            t.ok(t.run("train", "--config", os.path.join(configs, name + "-tiny.json"), "--out",
                       run, "--set", "train.steps=1", "--set", "model.d_model=16",
                       "--set", "model.max_len=24", "--set", "data.seq_len=24",
                       "--set", "model.n_layers=2", "--threads", "1"))
            ck = os.path.join(run, "model.ckpt.h5")
            with h5py.File(ck, "r") as f:
                held = sum(f["params"][k].size for k in f["params"] if k.startswith(prefix))
            out = t.path("flops-" + name + ".json")
            t.ok(t.run("analyze", "flops", "--checkpoint", ck, "--lengths", "16", "--out", out))
            got = json.load(open(out))["results"][0]["non_embedding_parameters"]
            assert got == held, (name, got, held)
    t.case("flops: non_embedding_parameters are the blocks' parameters the checkpoint holds",
           flops_count_every_block_parameter)

    # ==== Session 37 (probe V/A2): each expected value from numpy on the documented definition.

    # anisotropy --centred on legal float32 values near FLT_MAX: x − x̄ exceeds the float range
    # (it was stored back as float: ±Inf, NaN cosines dropped, mean null, LAPACK failing
    # anonymously). docs/analyses.md, Anisotropy: the centred vectors' cosines, in double.
    def anisotropy_centred_near_float_max():
        own = np.random.default_rng(3701)
        S, D = 7, 4
        h = own.choice([-3e38, 3e38], size=(S, 1, D)).astype(np.float32)
        p = t.path("aniso-max.dump.h5")
        write_dump(p, {1: h}, [1] * S)
        out = t.path("aniso-max.json")
        t.ok(t.run("analyze", "anisotropy", "--dump", p, "--layer", "1", "--centred",
                   "--bins", "8", "--out", out))
        r = json.load(open(out))["results"][0]
        x = h[:, 0].astype(np.float64)
        x = x - x.mean(0)
        n = np.linalg.norm(x, axis=1)
        c = ((x @ x.T) / np.outer(n, n))[np.triu_indices(S, 1)]
        assert r["pairs"] == c.size and sum(r["histogram"]["counts"]) == c.size, r
        assert abs(r["mean"] - c.mean()) < 1e-6, (r["mean"], c.mean())
        assert abs(r["median"] - np.median(c)) < 1e-6, (r["median"], np.median(c))
        assert abs(r["std"] - c.std()) < 1e-6, (r["std"], c.std())
        counts, _ = np.histogram(np.clip(c, -1, 1), bins=8, range=(-1, 1))
        assert r["histogram"]["counts"] == counts.tolist(), (r["histogram"], counts)
        lam = np.linalg.eigvalsh(x.T @ x).clip(0)
        assert abs(r["pc1_variance"] - lam.max() / lam.sum()) < 1e-9, \
            (r["pc1_variance"], lam.max() / lam.sum())
    t.case("anisotropy --centred near FLT_MAX: the centred cosines in double",
           anisotropy_centred_near_float_max)

    # transitions: the masked-mean sentence vectors in double (docs/analyses.md, Layer
    # transitions: "All in double from the stored floats"); rounded to float32, the mean
    # 1 + 2^-24 of [1, 1 + 2^-23] became 1 and sentences.l2 read 2^-23 instead of 2^-24.
    def transitions_sentence_means_in_double():
        h0 = np.array([1.0, 1 + 2**-23], np.float32).reshape(1, 2, 1).repeat(3, 0)
        h1 = np.array([1 + 2**-23, 1 + 2**-23], np.float32).reshape(1, 2, 1).repeat(3, 0)
        p = t.path("trans-mean.dump.h5")
        write_dump(p, {0: h0, 1: h1}, [2, 2, 2])
        out = t.path("trans-mean.json")
        t.ok(t.run("analyze", "transitions", "--dump", p, "--out", out))
        s = json.load(open(out))["results"][0]["layers"][0]["sentences"]
        a = h0[:, :2, 0].astype(np.float64).mean(1)
        b = h1[:, :2, 0].astype(np.float64).mean(1)
        want = np.abs(b - a).mean()
        assert abs(s["l2"] - want) <= 1e-9 * want, (s["l2"], want)
        assert abs(s["relative"] - (np.abs(b - a) / np.abs(a)).mean()) <= 1e-9 * want, s
    t.case("transitions: masked-mean sentence vectors in double",
           transitions_sentence_means_in_double)

    # gates: a constant gate of a large finite value v (1e17 in float32): its data range was
    # [v − 0.5, v + 0.5], which is [v, v] in double from 2^53 ("histogram range must have hi >
    # lo", naming nothing). docs/analyses.md, Gates: [v − h, v + h], h = max(0.5, |v|·2^-20);
    # the histogram is numpy's on that range.
    def gates_constant_large_value():
        for value in (1e17, -3e38, 7.25):
            v = float(np.float32(value))
            p = t.path("gate-const.dump.h5")
            lengths = [4, 2, 3]
            write_dump(p, {0: np.zeros((3, 4, 2)), 1: np.ones((3, 4, 2))}, lengths, arch="bigs",
                       gates={1: {"u_f": np.full((3, 4, 2), v)}})
            out = t.path("gate-const.json")
            r = t.run("analyze", "gates", "--dump", p, "--bins", "5", "--out", out)
            assert r.returncode == 0, (value, r.returncode, r.stderr)
            g = json.load(open(out))["results"][0]["gates"][0]
            half = max(0.5, abs(v) * 2.0**-20)
            values = np.full(2 * sum(lengths), v)
            counts, _ = np.histogram(values, bins=5, range=(v - half, v + half))
            assert g["range"] == [v - half, v + half], (value, g["range"])
            assert g["mean"] == v and g["std"] == 0 and g["values"] == values.size, (value, g)
            assert g["histogram"] == counts.tolist(), (value, g["histogram"], counts)
    t.case("gates: a constant gate of any finite value has a histogram",
           gates_constant_large_value)

    # implicit-attention of Birdie: the reset mask cuts the carry at every sample start (bit 1),
    # in both scan directions, and out of the causal region (bit 2) in a prefix layer
    # (docs/models.md: "The left-to-right carry is cut into a position whose bit 1 is set. The
    # right-to-left carry into t is cut when t + 1 starts a sample, and in prefix layers also
    # when t or t + 1 lies in the causal region"), so that h = A (i ⊙ z) exactly. Only the
    # first bit-2 position was used: decay ran across a packed row's second sample.
    def birdie_decay_cut_at_sample_starts():
        own = np.random.default_rng(3702)
        L, N = 8, 4
        f = own.uniform(0.3, 0.95, (1, L, N))
        mask = np.array([1, 0, 0, 1, 0, 0, 2, 2])
        p = t.path("birdie-packed.dump.h5")

        def extra(fh):
            fh["data/reset_mask"] = mask.reshape(1, L).astype(np.int8)
            fh["layers/1/gates"].attrs["reverse_from"] = N // 2
        write_dump(p, {0: np.zeros((1, L, 2)), 1: np.zeros((1, L, 2))}, [L], arch="birdie",
                   gates={1: {"f": f, "i": f, "z": f, "o": f}})
        with h5py.File(p, "r+") as fh:
            extra(fh)
        t.ok(t.run("validate", p))
        ff = f[0].astype(np.float32).astype(np.float64)
        A = np.zeros((N, L, L))
        for c in range(N):
            for tt in range(L):
                for s in range(L):
                    if c < N // 2 and s <= tt:  # left to right: carries into k = s+1..t
                        if not any(mask[k] & 1 for k in range(s + 1, tt + 1)):
                            A[c, tt, s] = np.prod(ff[s + 1:tt + 1, c])
                    elif c >= N // 2 and s >= tt:  # right to left: carries into k = t..s−1
                        if not any(mask[k + 1] & 1 or (mask[k] | mask[k + 1]) & 2
                                   for k in range(tt, s)):
                            A[c, tt, s] = np.prod(ff[tt:s, c])
        for mode, want in (("forward", A[:N // 2].mean(0)), ("backward", A[N // 2:].mean(0)),
                           ("sum", A.mean(0))):
            out = t.path("birdie-packed-%s.json" % mode)
            t.ok(t.run("analyze", "implicit-attention", "--dump", p, "--layer", "1",
                       "--example", "0", "--mode", mode, "--out", out))
            got = np.array(json.load(open(out))["results"][0]["matrix"])
            assert np.abs(got - want).max() < 1e-12, (mode, np.abs(got - want).max())
        assert want[4, 0] == 0 and want[2, 3] == 0  # cut both ways at position 3's sample start
    t.case("implicit-attention of Birdie: carries cut at every sample start",
           birdie_decay_cut_at_sample_starts)

    def write_predictions(name, rows):
        p = t.path(name)
        with open(p, "w") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
        return p

    # length-accuracy --predictions: a line with "label": null is an example without a label,
    # counted in `unlabelled` and left out of everything, the edges included (docs/analyses.md);
    # the examples keep their indices in the file (the line was dropped: unlabelled 0, and the
    # examples after it listed under their predecessors' indices).
    def predictions_unlabelled_lines_counted():
        rows = [dict(id=0, length=3, label="a", prediction="a", correct=True, attributes={}),
                dict(id=1, length=40, label=None, prediction="b", correct=None, attributes={}),
                dict(id=2, length=5, label="b", prediction="b", correct=True, attributes={}),
                dict(id=3, length=9, label="b", prediction="a", correct=False, attributes={}),
                dict(id=4, length=6, label="a", prediction="a", correct=True, attributes={})]
        pa = write_predictions("null-a.jsonl", rows)
        rows_b = [dict(r, prediction="b" if r["label"] else "a") for r in rows]
        pb = write_predictions("null-b.jsonl", rows_b)
        out = t.path("null.json")
        t.ok(t.run("analyze", "length-accuracy", "--predictions", pa, "--predictions", pb,
                   "--bins", "2", "--out", out))
        res = json.load(open(out))["results"][0]
        labelled = [i for i, r in enumerate(rows) if r["label"] is not None]
        x = np.array([rows[i]["length"] for i in labelled], float)
        edges = np.unique(np.quantile(x, [0, 0.5, 1]))
        assert res["unlabelled"] == 1, res["unlabelled"]
        assert res["edges"] == edges.tolist(), (res["edges"], edges)
        assert sorted(res["overall"]["examples"]) == labelled, res["overall"]["examples"]
        for b, lo in zip(res["bins"], edges[:-1]):
            k = np.searchsorted(edges, x, "right") - 1
            k = np.minimum(k, len(edges) - 2)
            want = [labelled[j] for j in range(len(labelled)) if edges[k[j]] == lo]
            assert sorted(b["examples"]) == want, (b["examples"], want)
            for side, rr in (("a", rows), ("b", rows_b)):
                right = sum(rr[e]["prediction"] == rr[e]["label"] for e in want)
                assert b[side]["count"] == len(want) and b[side]["correct"] == right, (side, b)
    t.case("length-accuracy --predictions: null labels counted, indices kept",
           predictions_unlabelled_lines_counted)

    # length-accuracy --predictions --variable NAME: a labelled line without a numeric NAME is
    # refused naming the file, the line and the attribute (exit 2), as a dump's missing attribute
    # is; it was binned as 0. An unlabelled line needs none (it is left out).
    def predictions_variable_missing_refused():
        base = [dict(id=0, length=3, label="a", prediction="a", attributes={"dist": 5.0}),
                dict(id=1, length=4, label=None, prediction="b", attributes={}),
                dict(id=2, length=5, label="b", prediction="b", attributes={"dist": 7.0}),
                dict(id=3, length=6, label="b", prediction="a", attributes={"dist": 2.0})]
        p = write_predictions("var-ok.jsonl", base)
        out = t.path("var.json")
        t.ok(t.run("analyze", "length-accuracy", "--predictions", p, "--variable", "dist",
                   "--bins", "2", "--out", out))
        res = json.load(open(out))["results"][0]
        assert res["edges"] == np.quantile([5.0, 7.0, 2.0], [0, 0.5, 1]).tolist(), res["edges"]
        assert res["unlabelled"] == 1, res
        for bad, line, says in (({}, 3, "missing"), ({"dist": "far"}, 3, '"far"'),
                                ({"dist": None}, 3, "null")):
            rows = [dict(r) for r in base]
            rows[2] = dict(rows[2], attributes=bad)
            p = write_predictions("var-bad.jsonl", rows)
            if os.path.exists(out):
                os.remove(out)
            r = t.run("analyze", "length-accuracy", "--predictions", p, "--variable", "dist",
                      "--out", out)
            assert r.returncode == 2, (bad, r.returncode, r.stderr)
            assert f"{p}:{line}" in r.stderr and "'dist'" in r.stderr and says in r.stderr, \
                (bad, r.stderr)
            assert not os.path.exists(out), bad
    t.case("length-accuracy --predictions --variable: a missing value is refused by line",
           predictions_variable_missing_refused)

    # length-accuracy: --width is a rule given on the command line, whatever its value: 0, a
    # negative or a non-finite width is refused (exit 2), as are two rules at once (--binning
    # quantile with --width, --bins with --edges or --width); they were ignored, silently.
    # docs/analyses.md: width edges e_k = min(x) + k·w up to the first above max(x).
    def length_accuracy_width_is_given_or_not():
        p = t.path("la-width.dump.h5")
        lengths = [2, 3, 5, 8, 9, 11]
        write_dump(p, {0: rng.standard_normal((6, 12, 3))}, lengths, labels=[1, 0, 1, 1, 0, 1],
                   predictions=[1, 1, 1, 0, 0, 1])
        out = t.path("la-width.json")
        for args in (["--width", "0"], ["--width", "-3"], ["--width", "nan"],
                     ["--width", "inf"], ["--binning", "quantile", "--width", "3"],
                     ["--binning", "edges", "--width", "3"], ["--edges", "1,5,12", "--bins", "3"],
                     ["--width", "3", "--bins", "3"], ["--binning", "width", "--bins", "2"],
                     ["--binning", "width", "--width", "0"]):
            if os.path.exists(out):
                os.remove(out)
            r = t.run("analyze", "length-accuracy", "--dump", p, *args, "--out", out)
            assert r.returncode == 2, (args, r.returncode, r.stderr)
            assert not os.path.exists(out), args
        want = [2.0 + 3.0 * k for k in range(5)]  # 2, 5, 8, 11, 14: the first above 11 is 14
        for args in (["--width", "3"], ["--binning", "width", "--width", "3"]):
            t.ok(t.run("analyze", "length-accuracy", "--dump", p, *args, "--out", out))
            res = json.load(open(out))["results"][0]
            assert res["edges"] == want, (args, res["edges"])
            assert res["provenance"]["parameters"]["binning"] == "width", args
    t.case("length-accuracy: --width given is checked; two binning rules refused",
           length_accuracy_width_is_given_or_not)

    # A repeated value in /layers/<l>/example_index: two rows claim one example, which
    # docs/formats/dump.md forbids (row i belongs to example example_index[i], each example at
    # most once). validate reports it naming the dataset and both rows (exit 1); the readers
    # refuse it (anisotropy sampled it as two sentences, transitions kept the last row).
    def example_index_repeat_refused():
        own = np.random.default_rng(3703)
        p = t.path("dup-index.dump.h5")
        write_dump(p, {0: own.standard_normal((4, 3, 2)), 1: own.standard_normal((3, 3, 2))},
                   [3, 2, 3, 1], example_index={1: [2, 0, 2]})
        r = t.run("validate", p)
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        text = r.stdout + r.stderr
        assert "/layers/1/example_index" in text and "[0]" in text and "[2]" in text, text
        for kind in ("anisotropy", "transitions", "pca", "gates"):
            out = t.path("dup-%s.json" % kind)
            r = t.run("analyze", kind, "--dump", p, "--out", out)
            assert r.returncode == 2, (kind, r.returncode, r.stderr)
            assert "/layers/1/example_index" in r.stderr and "twice" in r.stderr, (kind, r.stderr)
            assert not os.path.exists(out), kind
    t.case("a repeated example_index is a format violation", example_index_repeat_refused)

    # kernel-change: a before kernel of 0 has an infinite score, null in the JSON and an empty
    # CSV cell (it was "inf" in the CSV; docs/analyses.md, Kernel change). Checkpoints of the SSM
    # parameters alone, as tests/reference/analysis/make_analysis_dumps.py writes them.
    def kernel_change_infinite_score_is_empty():
        def write(path, zero):
            with h5py.File(path, "w") as fh:
                fh.attrs.update(format="routescope-checkpoint", format_version=1,
                                producer="test_analyze_edge_cases.py",
                                created="2026-01-01T00:00:00Z")
                for direction in ("forward", "backward"):
                    base = f"params/layers.0.ssm_{direction}."
                    fh[base + "A_re"] = np.full((1, 4), -0.5, np.float32)
                    fh[base + "A_im"] = (np.pi * np.arange(4)[None, :]).astype(np.float32)
                    fh[base + "C"] = np.full((1, 4, 2), 0.0 if zero else 0.3, np.float32)
                    fh[base + "D"] = np.full(1, 0.0 if zero else 1.0, np.float32)
                    fh[base + "log_step"] = np.full(1, -2.0, np.float32)
        before, after = t.path("kc-before.ckpt.h5"), t.path("kc-after.ckpt.h5")
        write(before, True)
        write(after, False)
        out, table = t.path("kc.json"), t.path("kc.csv")
        t.ok(t.run("analyze", "kernel-change", "--checkpoint", before, "--checkpoint", after,
                   "--length", "16", "--radius", "2", "--out", out, "--csv", table))
        layers = json.load(open(out))["results"][0]["layers"]
        assert [x["change_score"] for x in layers] == [None], layers
        rows = list(csv.DictReader(open(table)))
        assert [x["change_score"] for x in rows] == [""], rows
    t.case("kernel-change: an infinite score is an empty CSV cell",
           kernel_change_infinite_score_is_empty)

    # A NaN in /kernels/<l>/D_forward_groups is named with its index; flops of an external dump
    # (no configuration) says to count the model without --dump (it asked for --arch, which is
    # refused beside --dump).
    def kernel_group_skip_and_flops_messages():
        own = np.random.default_rng(3704)
        p = t.path("groups-nan.dump.h5")
        k = own.standard_normal((2, 6))
        write_dump(p, {0: own.standard_normal((2, 6, 4)), 1: own.standard_normal((2, 6, 4))},
                   [6, 6], arch="bigs", kernels={1: {"forward": k[0], "forward_groups": k}})
        with h5py.File(p, "r+") as fh:
            fh["kernels/1"].attrs["D_forward"] = 1.0
            fh["kernels/1/D_forward_groups"] = np.array([1.0, np.nan])
        r = t.run("analyze", "kernels", "--dump", p, "--group", "1", "--out", t.path("kg.json"))
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "/kernels/1/D_forward_groups[1]" in r.stderr and "NaN" in r.stderr, r.stderr
        q = t.path("external-flops.dump.h5")
        write_dump(q, {0: own.standard_normal((2, 4, 3)), 1: own.standard_normal((2, 4, 3))},
                   [4, 4])
        r = t.run("analyze", "flops", "--dump", q, "--out", t.path("ef.json"))
        assert r.returncode == 2 and "without --dump" in r.stderr, (r.returncode, r.stderr)
    t.case("kernels' group skips named by index; flops of an external dump",
           kernel_group_skip_and_flops_messages)

    # ---- (probe Y4) every option's text is checked before any work (docs/cli.md, analyze:
    # "Usage errors are exit 2 before any work"), each message naming the option given: given
    # with a --dump that does not exist, the option's error must come first (the input check
    # would otherwise say "no such file"), and nothing is written.
    def option_errors_name_their_option_before_any_work():
        own = np.random.default_rng(4404)
        a, b = t.path("opt-a.dump.h5"), t.path("opt-b.dump.h5")
        hidden = {0: own.standard_normal((6, 5, 4)), 1: own.standard_normal((6, 5, 4))}
        write_dump(a, hidden, [5] * 6)
        write_dump(b, {k: v + own.standard_normal(v.shape) for k, v in hidden.items()}, [5] * 6)
        missing = t.path("no-such.dump.h5")
        out, table = t.path("opt.json"), t.path("opt.csv")
        for dumps in ([a, b], [a, missing]):
            given = [x for d in dumps for x in ("--dump", d)]
            for args, says in [
                (["--scatter", "a,b"], "--scatter"),
                (["--scatter", "1"], "--scatter"),
                (["--scatter", "0,1,1"], "--scatter"),
                (["--layer-a", "x"], "--layer-a"),
                (["--layer-b", "-1"], "--layer-b"),
                (["--layer-a", ""], "--layer-a"),
                (["--layer", "x"], "--layer "),
                (["--gram-m", "-5"], "--gram-m"),
                (["--permutations", "-1"], "--permutations"),
                (["--bootstrap", "-2"], "--bootstrap"),
                (["--csv", ""], "--csv"),
            ]:
                r = t.run("analyze", "similarity", *given, *args, "--out", out)
                assert r.returncode == 2, (args, r.returncode, r.stderr)
                # One line: the option's error (the similarity's notes printed first before).
                lines = [x for x in r.stderr.splitlines() if not x.startswith("Run `")]
                assert len(lines) == 1 and says in lines[0], (args, r.stderr)
                assert "no such file" not in r.stderr, (args, r.stderr)
                if "--layer" in says:
                    assert "--layer must" not in r.stderr or says == "--layer ", (args, r.stderr)
                assert not os.path.exists(out) and not os.path.exists(table), args
        # An empty --csv is an empty path, refused as --out's is (it was "no CSV", exit 0).
        r = t.run("analyze", "gates", "--dump", a, "--out", out, "--csv", "")
        assert r.returncode == 2 and "--csv: the value is empty" in r.stderr, r.stderr
        assert not os.path.exists(out)
    t.case("analyze: option errors name their option, before any work (--scatter, --layer-a, "
           "--gram-m, --csv \"\")", option_errors_name_their_option_before_any_work)

    # ---- --seed takes 0 … 2^63 − 1, as experiment --seed (docs/cli.md): -1 was read as 2^64 − 1
    # and 10^23 saturated to it, so seeds told apart drew one sample under a seed never typed.
    def analyze_seed_is_a_whole_number_in_range():
        own = np.random.default_rng(4407)
        p = t.path("seed.dump.h5")
        write_dump(p, {0: own.standard_normal((8, 5, 4))}, [5] * 8)
        out = t.path("seed.json")
        for seed in ["-1", "-5", "18446744073709551615", "18446744073709551616",
                     "99999999999999999999999", "9223372036854775808", "1.5", "0x10", ""]:
            r = t.run("analyze", "anisotropy", "--dump", p, "--out", out, "--seed", seed)
            assert r.returncode == 2 and "--seed" in r.stderr, (seed, r.returncode, r.stderr)
            assert "9223372036854775807" in r.stderr, (seed, r.stderr)
            assert not os.path.exists(out), seed
        for seed in ["0", "9223372036854775807"]:
            t.ok(t.run("analyze", "anisotropy", "--dump", p, "--out", out, "--seed", seed))
            params = json.load(open(out))["results"][0]["provenance"]["parameters"]
            assert params["seed"] == int(seed), (seed, params)
            os.remove(out)
    t.case("analyze --seed: 0 … 2^63 − 1, else exit 2", analyze_seed_is_a_whole_number_in_range)

    # ---- kernels from a checkpoint: --length is 1 … 2^20 (docs/cli.md), checked as the command
    # line is read (2147483647 grew until the OOM killer), and the layers' kernels (about 224
    # bytes per position and layer) are held against this machine's memory before any is computed.
    def kernel_length_is_bounded():
        def write(path, layers):
            with h5py.File(path, "w") as fh:
                fh.attrs.update(format="routescope-checkpoint", format_version=1,
                                producer="test_analyze_edge_cases.py",
                                created="2026-01-01T00:00:00Z")
                for i in range(layers):
                    for direction in ("forward", "backward"):
                        base = f"params/layers.{i}.ssm_{direction}."
                        fh[base + "A_re"] = np.full((1, 2), -0.5, np.float32)
                        fh[base + "A_im"] = np.zeros((1, 2), np.float32)
                        fh[base + "C"] = np.full((1, 2, 2), 0.3, np.float32)
                        fh[base + "D"] = np.ones(1, np.float32)
                        fh[base + "log_step"] = np.full(1, -2.0, np.float32)
        def limited():  # a build without the bound fails here, not by the OOM killer
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        one = t.path("len-one.ckpt.h5")
        write(one, 1)
        out = t.path("len.json")
        for kind, given in [("kernels", ["--checkpoint", one]),
                            ("kernel-change", ["--checkpoint", one, "--checkpoint", one]),
                            ("kernels", ["--checkpoint", t.path("no-such.ckpt.h5")])]:
            for length in ["2147483647", "1048577", "0", "-3", "99999999999999999999"]:
                r = t.run("analyze", kind, *given, "--length", length, "--out", out,
                          timeout=60, preexec=limited)
                assert r.returncode == 2, (kind, length, r.returncode, r.stderr)
                assert "--length" in r.stderr and "1048576" in r.stderr, (kind, length, r.stderr)
                assert not os.path.exists(out), (kind, length)
        t.ok(t.run("analyze", "kernels", "--checkpoint", one, "--length", "64", "--out", out))
        assert len(json.load(open(out))["results"][0]["layers"][0]["forward"]) == 64
        os.remove(out)
        # Enough layers that 2^20 positions each exceed this machine's memory.
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        layers = ram // (224 * 2**20) + 2
        if layers <= 3000:  # a machine of up to about 650 GiB (the file's writing stays short)
            many = t.path("len-many.ckpt.h5")
            write(many, layers)
            r = t.run("analyze", "kernels", "--checkpoint", many, "--length", "1048576",
                      "--out", out, timeout=60)
            assert r.returncode == 2, (r.returncode, r.stderr)
            assert "--length 1048576" in r.stderr and f"{layers} layer" in r.stderr, r.stderr
            assert "memory" in r.stderr or "machine" in r.stderr, r.stderr
            assert not os.path.exists(out)
            # Short kernels of the same file are computed.
            t.ok(t.run("analyze", "kernels", "--checkpoint", many, "--length", "16",
                       "--radius", "2", "--out", out))
            assert len(json.load(open(out))["results"][0]["layers"]) == layers
            os.remove(out)
    t.case("analyze kernels --length: at most 2^20 and within memory, else exit 2 before any work",
           kernel_length_is_bounded)

    # ---- docs/formats/dump.md: readers accept any filter HDF5 can decode, so a gzip dump gives
    # the same similarity as the same dump uncompressed (its time printed). Each sampled token
    # decompressed its whole [1, L, d] chunk again: 5000 vectors took ~20 s against 0.4 s (probe
    # Z8, the default --max-vectors 100000 minutes).
    def similarity_of_gzip_dump_reads_each_chunk_once():
        import time
        S, L, d = 100, 512, 256
        own = np.random.default_rng(2702)
        data = [own.standard_normal((S, L, d)).astype(np.float16) for _ in range(2)]
        paths = {}
        for name, comp in (("raw", None), ("gz", "gzip")):
            p = paths[name] = t.path(f"simgz-{name}.dump.h5")
            with h5py.File(p, "w") as f:
                f.attrs.update(format="routescope-dump", format_version=1, producer="edge",
                               created="2026-01-01T00:00:00Z")
                f.create_group("model").attrs.update(arch="bigs", name="edge", n_layers=1,
                                                     d_model=d)
                f["data/tokens"] = np.full((S, L), 3, np.int32)
                f["data/lengths"] = np.full(S, L, np.int32)
                for layer in (0, 1):
                    f.create_dataset(f"layers/{layer}/hidden", data=data[layer], chunks=(1, L, d),
                                     compression=comp, compression_opts=1 if comp else None)
        results, seconds = {}, {}
        for name, p in paths.items():
            out = t.path(f"simgz-{name}.json")
            start = time.monotonic()
            t.ok(t.run("analyze", "similarity", "--dump", p, "--dump", p, "--measures",
                       "linear_cka", "--permutations", "0", "--bootstrap", "0", "--max-vectors",
                       "5000", "--out", out, timeout=120))
            seconds[name] = time.monotonic() - start
            results[name] = json.load(open(out))["results"][0]
        assert results["gz"]["measures"] == results["raw"]["measures"], (
            results["gz"]["measures"], results["raw"]["measures"])
        # Printed, not asserted (speed is a benchmark's to measure, not a unit test's): ~2 s
        # against ~0.4 s here once each chunk is decompressed once, ~20 s before.
        print(f"   similarity of 5000 vectors: gzip {seconds['gz']:.1f} s, "
              f"uncompressed {seconds['raw']:.1f} s (not asserted)")
    t.case("similarity of a gzip dump: the same result as uncompressed (time printed)",
           similarity_of_gzip_dump_reads_each_chunk_once)

    # ---- docs/formats/dump.md: "A read that would need more than a quarter of the machine's
    # memory is refused with a message instead of being attempted" (ROUTESCOPE_READ_LIMIT_MB
    # lowers the limit, docs/decisions.md). A /mixing/<l> and one example's attention were read
    # whole without the check: a few KB of gzip can declare GBs (probe Z8).
    def whole_array_reads_respect_the_read_limit():
        env = dict(os.environ, ROUTESCOPE_READ_LIMIT_MB="1")
        n, H, L = 1024, 4, 512  # 4 MiB each, compressed to a few KB

        def header(f, arch, L, S=2):
            f.attrs.update(format="routescope-dump", format_version=1, producer="edge",
                           created="2026-01-01T00:00:00Z")
            f.create_group("model").attrs.update(arch=arch, name="edge", n_layers=1, d_model=4)
            f["data/tokens"] = np.ones((S, L), np.int32)
            f["data/lengths"] = np.full(S, L, np.int32)
            for layer in (0, 1):
                f.create_dataset(f"layers/{layer}/hidden", data=(np.ones((S, L, 4)) * np.arange(4))
                                 .astype(np.float32), chunks=(1, L, 4), compression="gzip")

        mix = t.path("limit-mix.dump.h5")
        with h5py.File(mix, "w") as f:
            header(f, "gmlp", 8)
            f.create_dataset("mixing/1", data=np.full((n, n), 1.0 / n, np.float32),
                             chunks=(256, 256), compression="gzip")
        att = t.path("limit-att.dump.h5")
        with h5py.File(att, "w") as f:
            header(f, "bert", L)
            f.create_dataset("layers/1/attention", data=np.full((2, H, L, L), 1.0 / L, np.float32),
                             chunks=(1, 1, L, L), compression="gzip")
        for p, what in ((mix, "/mixing/1"), (att, "/layers/1/attention")):
            out = p + ".json"
            r = subprocess.run([t.cli, "analyze", "implicit-attention", "--dump", p, "--layer",
                                "1", "--out", out], capture_output=True, text=True, timeout=120,
                               env=env)
            assert r.returncode == 2, (what, r.returncode, r.stderr)
            assert p in r.stderr and what in r.stderr and "limit" in r.stderr, (what, r.stderr)
            assert not os.path.exists(out), what
    t.case("a /mixing matrix or an example's attention over the read limit is refused",
           whole_array_reads_respect_the_read_limit)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
