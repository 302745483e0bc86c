#!/usr/bin/python3
"""`routescope-cli analyze similarity` against the independent numpy reference.

    test_similarity.py ROUTESCOPE_CLI WORK_DIR

Writes the fixture dumps (tests/reference/analysis/make_similarity_dumps.py) into WORK_DIR/dumps,
runs the CLI on them and checks, printing every failure (exit 1 if any, 0 if none):

a. a vs same, rotated, noise, token and sentence vectors: every measure of every layer pair equals
   the reference (tests/reference/analysis/similarity_reference.py) recomputed from the vectors the
   result lists, within 1e-6 relative (denominator max(|ref|, 1e-3); procrustes near 0: 1e-6
   absolute); svcca dims; the gram subsample's observed values; the sample itself (real positions
   only, no repeats, every token when there are fewer than --max-vectors, every example in sentence
   mode; gram sample one vector per example).
b. closed forms: a vs same gives 1 for both CKAs, RBF CKA, SVCCA and PWCCA on the diagonal and
   procrustes 0; a vs rotated (orthogonal map + translation + isotropic scale) gives linear CKA 1
   (and the other invariant measures 1) and procrustes 0; a vs noise gives linear CKA below 3x its
   expectation under independence (tr Sx tr Sy / (N ||Sx||_F ||Sy||_F)) and permutation p-values
   > 0.01 (a p <= 0.01 that the reference's own 4000-permutation null shares is a chance extreme of
   the gram sample: noted, and at most max(3, 5%) of them allowed); a vs same has p = 1/(K+1) on the
   diagonal and the interval [1, 1]. The permutation null's mean, std and p and the bootstrap
   interval agree with the reference's own permutation null and bootstrap within Monte-Carlo error.
   The options echo of a default run holds the defaults (permutations and bootstrap 100).
c. options: --layer-a/--layer-b/--layer, --max-vectors with --seed (deterministic, seed-dependent),
   --svcca-variance, --gram-m, --measures, --csv.
d. bad input, exit 2 with a message: a vs other_examples names the differing example; --layer-b 1
   against missing_layer names the layers present; tiny vs tiny with svcca or pwcca says there are
   fewer vectors than dimensions (tiny works with --measures linear_cka,procrustes; with the
   default measures it leaves SVCCA, PWCCA and RBF CKA out with notes). Every failed run leaves no
   file behind, and an existing --out untouched (atomic write).
e. precision: Procrustes of rank-deficient layers and RBF CKA of vectors far from the origin within
   1e-6 relative of the reference; a layer against itself in [0, 1] without a note.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "reference", "analysis")
sys.path.insert(0, REFERENCE)
import similarity_reference as ref  # noqa: E402

TOL = 1e-6
K_DEFAULT = 100  # the default --permutations (docs/analyses.md)
REPORTED = {}
REF_PERM = 4000  # the reference's own permutation null
MEASURES = ref.MEASURES
NOISE_P = []  # every p-value of the independent pairs
GRAM_KEYS = ("observed", "null_mean", "null_std", "p_value", "ci_low", "ci_high")


class Checks:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
            print(f"FAIL: {what}", flush=True)
        return ok


C = Checks()


def run(cli, args, timeout=240):
    cmd = [cli, "analyze", "similarity"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s: {' '.join(cmd)}"
    return p.returncode, p.stdout, p.stderr


def matrix(value, shape, what):
    try:
        M = np.array([[np.nan if v is None else float(v) for v in row] for row in value], np.float64)
    except (TypeError, ValueError):
        C.check(False, f"{what}: not a matrix of numbers: {str(value)[:200]}")
        return None
    if not C.check(M.shape == shape, f"{what}: shape {M.shape}, expected {shape}"):
        return None
    C.check(bool(np.all(np.isfinite(M))), f"{what}: non-finite values {M.tolist()}")
    return M


def compare(name, got, want, what):
    """1e-6 relative (floor 1e-3); procrustes near 0 absolute."""
    worst = 0.0
    bad = []
    for (i, j), r in np.ndenumerate(want):
        g = got[i, j]
        if name == "procrustes" and abs(r) < 1e-3:
            err = abs(g - r)
        else:
            err = ref.relative_error(g, r)
        worst = max(worst, err)
        if not err <= TOL:
            bad.append(f"[{i},{j}] got {g!r} reference {r!r} (error {err:.2e})")
    C.check(not bad, f"{what} {name}: {len(bad)} entries off by more than {TOL}: " + "; ".join(bad[:4]))
    return worst


def load_result(path, what):
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        C.check(False, f"{what}: cannot read the result JSON {path}: {e}")
        return None
    ok = C.check(doc.get("kind") == "similarity" and isinstance(doc.get("results"), list)
                 and len(doc["results"]) == 1, f"{what}: expected {{kind: similarity, results: [one]}}, "
                 f"found kind {doc.get('kind')!r} with {len(doc.get('results') or [])} results")
    if not ok:
        return None
    res = doc["results"][0]
    missing = [k for k in ("analysis", "options", "vectors", "layers_a", "layers_b", "n", "sample",
                           "gram_sample", "measures") if k not in res]
    if not C.check(not missing, f"{what}: result lacks {missing}"):
        return None
    C.check(res["analysis"] == "similarity", f"{what}: analysis {res['analysis']!r}")
    return res


def check_sample(res, A, what, max_vectors=100000):
    s = res["sample"]
    ex = np.asarray(s.get("examples", []), np.int64)
    n = res["n"]
    if not C.check(len(ex) == n, f"{what}: sample.examples has {len(ex)} entries, n = {n}"):
        return False
    if not C.check(bool(np.all((ex >= 0) & (ex < A.S))), f"{what}: sample example out of 0..{A.S - 1}"):
        return False
    if res["vectors"] == "sentence":
        C.check("positions" not in s, f"{what}: sentence mode has sample.positions")
        C.check(sorted(ex.tolist()) == list(range(A.S)),
                f"{what}: sentence mode should compare every example once; got {len(set(ex.tolist()))} "
                f"distinct of {A.S} in {n}")
    else:
        if not C.check("positions" in s and len(s["positions"]) == n, f"{what}: sample.positions missing or "
                       f"not of length n"):
            return False
        pos = np.asarray(s["positions"], np.int64)
        real = (pos >= 0) & (pos < A.lengths[ex])
        if not real.all():
            C.check(False, f"{what}: {int((~real).sum())} sampled positions are padding or out of range "
                    f"(first: example {ex[~real][0]} position {pos[~real][0]})")
            return False
        pairs = set(zip(ex.tolist(), pos.tolist()))
        C.check(len(pairs) == n, f"{what}: {n - len(pairs)} repeated (example, position) pairs")
        total = int(A.lengths.sum())
        C.check(n == min(total, max_vectors), f"{what}: n = {n}, expected min({total} real tokens, "
                f"--max-vectors {max_vectors})")
    g = np.asarray(res["gram_sample"], np.int64)
    if not C.check(len(g) > 0 and bool(np.all((g >= 0) & (g < n))), f"{what}: gram_sample empty or not "
                   f"indices into the sample"):
        return False
    gex = ex[g]
    C.check(len(set(gex.tolist())) == len(g), f"{what}: gram_sample has {len(g) - len(set(gex.tolist()))} "
            f"vectors from an example already in it")
    return True


def reference_bootstrap(X, Y, name, seed, resamples=500):
    rng = np.random.default_rng(seed)
    f = ref.linear_cka if name == "linear_cka" else ref.rbf_cka
    out = np.empty(resamples)
    for r in range(resamples):
        b = rng.integers(0, len(X), len(X))
        out[r] = f(X[b], Y[b])
    return out


def check_default_options(res, what):
    """The options echo of a run with every option left out: the contract's defaults."""
    o = res.get("options", {})
    defaults = {"vectors": "token", "max_vectors": 100000, "seed": 0, "gram_m": 1000,  # permutations_of: K
                "bootstrap": 100, "svcca_variance": 0.99, "measures": list(MEASURES)}
    for k, v in defaults.items():
        if k in o:
            echo = o[k].split(",") if k == "measures" and isinstance(o[k], str) else o[k]
            C.check(echo == v, f"{what}: default option {k} = {o[k]!r}, the contract says {v!r}")


def check_gram(res, A, B, closed, what, gram_m=1000, gram_stats=True):
    """observed values vs the reference; null and p vs the reference's permutation null."""
    K_PERM = permutations_of(res, what)
    la, lb = res["layers_a"], res["layers_b"]
    shape = (len(la), len(lb))
    g = np.asarray(res["gram_sample"], np.int64)
    n_ex = len(set(np.asarray(res["sample"]["examples"]).tolist()))
    C.check(len(g) == min(gram_m, n_ex), f"{what}: gram_sample has {len(g)} vectors, expected "
            f"min(--gram-m {gram_m}, {n_ex} examples)")
    gram = res.get("gram")
    if not C.check(isinstance(gram, dict), f"{what}: no 'gram' object"):
        return
    if not gram_stats and gram == {}:
        print(f"NOTE: {what}: 'gram' is empty with {len(g)} gram vectors (the contract does not say what "
              f"too few examples give)", flush=True)
        return
    for name in ("linear_cka", "rbf_cka"):
        if name not in res["measures"]:
            continue
        if not C.check(name in gram and all(k in gram[name] for k in GRAM_KEYS),
                       f"{what}: gram.{name} missing or lacks one of {GRAM_KEYS}"):
            continue
        keys = GRAM_KEYS if gram_stats else ("observed",)
        M = {k: matrix(gram[name][k], shape, f"{what} gram.{name}.{k}") for k in keys}
        if any(v is None for v in M.values()):
            continue
        obs_ref = np.zeros(shape)
        for i, l in enumerate(la):
            X = A.vectors(l, res)[g]
            for j, m in enumerate(lb):
                Y = B.vectors(m, res)[g]
                if name == "linear_cka":
                    K, L = ref.linear_gram(X), ref.linear_gram(Y)
                    obs_ref[i, j] = ref.linear_cka(X, Y)
                else:
                    K, L = ref.rbf_kernel(X), ref.rbf_kernel(Y)
                    obs_ref[i, j] = ref.rbf_cka(X, Y)
                if not gram_stats:
                    continue
                null = ref.permutation_null(K, L, REF_PERM, seed=1000 + 10 * i + j)
                p_ref = (1 + np.sum(null >= obs_ref[i, j])) / (REF_PERM + 1)
                at = f"{what} gram.{name}[{i},{j}] (layers {l},{m})"
                mu, sd = null.mean(), null.std()
                C.check(abs(M["null_mean"][i, j] - mu) <= 5 * sd / math.sqrt(K_PERM) + 1e-9,
                        f"{at}: null_mean {M['null_mean'][i, j]:.5g}, reference {mu:.5g} (std {sd:.3g})")
                C.check(abs(M["null_std"][i, j] - sd) <= 0.3 * sd + 1e-9,
                        f"{at}: null_std {M['null_std'][i, j]:.5g}, reference {sd:.5g}")
                p = M["p_value"][i, j]
                k = p * (K_PERM + 1)
                C.check(abs(k - round(k)) < 1e-6 and 1 <= round(k) <= K_PERM + 1,
                        f"{at}: p_value {p} is not (1 + count) / {K_PERM + 1}")
                C.check(abs(p - p_ref) <= 4 * math.sqrt(max(p_ref * (1 - p_ref), 1e-4) / K_PERM) + 2 / K_PERM,
                        f"{at}: p_value {p:.4f}, reference {p_ref:.4f} ({REF_PERM} permutations)")
                lo, hi = M["ci_low"][i, j], M["ci_high"][i, j]
                C.check(lo <= hi + 1e-12 and -1e-9 <= lo and hi <= 1 + 1e-9,
                        f"{at}: bootstrap interval [{lo}, {hi}] not ordered inside [0, 1]")
                # the percentile interval of the bootstrap over examples (rows of the gram sample
                # drawn with replacement, the measure recomputed, RBF bandwidth included), against
                # the reference's own bootstrap: within 1.5 bootstrap std (Monte-Carlo error of a 2.5% quantile
                # from ~100 resamples of a skewed distribution)
                boot = reference_bootstrap(X, Y, name, seed=2000 + 10 * i + j)
                b_lo, b_hi = np.percentile(boot, [2.5, 97.5])
                tol = 1.5 * boot.std() + 1e-9
                C.check(abs(lo - b_lo) <= tol and abs(hi - b_hi) <= tol,
                        f"{at}: bootstrap interval [{lo:.5g}, {hi:.5g}], reference [{b_lo:.5g}, {b_hi:.5g}] "
                        f"(bootstrap std {boot.std():.3g})")
                if (i, j) in closed.get(name, ()) and math.factorial(min(len(g), 20)) > 100 * K_PERM:
                    C.check(abs(p - 1 / (K_PERM + 1)) < 1e-12,
                            f"{at}: identical representations must give p = 1/{K_PERM + 1}, got {p}")
                    C.check(lo >= 1 - TOL and hi <= 1 + TOL,
                            f"{at}: identical representations must give the interval [1, 1], got [{lo}, {hi}]")
                if closed.get("noise"):
                    NOISE_P.append(p)
                    if p <= 0.01 and p_ref <= 0.02:
                        print(f"NOTE: {at}: p_value {p:.4f} <= 0.01 for independent representations, but so is "
                              f"the reference's ({p_ref:.4f}, {REF_PERM} permutations): this gram sample is "
                              f"a chance extreme (counted below)", flush=True)
                    else:
                        C.check(p > 0.01, f"{at}: independent representations: p_value {p} <= 0.01 "
                                f"(reference p {p_ref:.4f})")
        compare(name, M["observed"], obs_ref, f"{what} gram.{name}.observed")
        if name == "rbf_cka":
            rb = matrix(res["measures"]["rbf_cka"], shape, f"{what} measures.rbf_cka")
            if rb is not None:
                C.check(bool(np.all(np.abs(rb - M["observed"]) <= 1e-12 * np.maximum(1, np.abs(rb)))),
                        f"{what}: gram.rbf_cka.observed differs from measures.rbf_cka")


def permutations_of(res, what):
    """K of the run: the default 100 (a different echo is reported once, then used)."""
    k = res.get("options", {}).get("permutations", K_DEFAULT)
    if k != K_DEFAULT and not REPORTED.get("permutations"):
        REPORTED["permutations"] = True
        C.check(False, f"{what}: options.permutations = {k}: the default is {K_DEFAULT} "
                f"(the checks below use {k})")
    return int(k)


def check_result(res, A, B, what, measures=MEASURES, variance=0.99, max_vectors=100000, gram_m=1000,
                 closed=None, layers_a=None, layers_b=None, gram_stats=True):
    closed = closed or {}
    la, lb = res["layers_a"], res["layers_b"]
    C.check(la == (layers_a if layers_a is not None else A.layers),
            f"{what}: layers_a {la}, expected {layers_a if layers_a is not None else A.layers}")
    C.check(lb == (layers_b if layers_b is not None else B.layers),
            f"{what}: layers_b {lb}, expected {layers_b if layers_b is not None else B.layers}")
    C.check(sorted(res["measures"]) == sorted(measures),
            f"{what}: measures {sorted(res['measures'])}, expected {sorted(measures)}")
    if not check_sample(res, A, what, max_vectors):
        return
    shape = (len(la), len(lb))
    got = {}
    for name in measures:
        if name in res["measures"]:
            M = matrix(res["measures"][name], shape, f"{what} measures.{name}")
            if M is not None:
                got[name] = M
    want, dims_a, dims_b, _ = ref.reference_matrices(A, B, res, variance)
    for name, M in got.items():
        compare(name, M, want[name], what)
    if "svcca" in measures:
        C.check(res.get("svcca_dims_a") == dims_a and res.get("svcca_dims_b") == dims_b,
                f"{what}: svcca dims A {res.get('svcca_dims_a')} B {res.get('svcca_dims_b')}, reference "
                f"A {dims_a} B {dims_b} (variance {variance})")
    # closed forms
    for name, cells in closed.items():
        if name in ("noise",) or name not in got:
            continue
        target = 0.0 if name == "procrustes" else 1.0
        for i, j in cells:
            C.check(abs(got[name][i, j] - target) <= TOL,
                    f"{what}: {name}[{i},{j}] = {got[name][i, j]!r}, closed form {target}")
    if closed.get("noise") and "linear_cka" in got:
        # E[biased linear CKA] of independent X, Y of n i.i.d. rows ~ tr Sx tr Sy / (n ||Sx||_F ||Sy||_F).
        # Tokens of one example are not independent (they share the example's signal), so n is taken
        # as the number of examples the sample draws from: the bound of one vector per example.
        n_eff = len(set(res["sample"]["examples"]))
        for i, l in enumerate(la):
            Xc = ref.centre(A.vectors(l, res))
            Sx = Xc.T @ Xc
            for j, m in enumerate(lb):
                Yc = ref.centre(B.vectors(m, res))
                Sy = Yc.T @ Yc
                expect = np.trace(Sx) * np.trace(Sy) / (n_eff * np.linalg.norm(Sx) * np.linalg.norm(Sy))
                C.check(got["linear_cka"][i, j] < 2 * expect,
                        f"{what}: independent representations: linear_cka[{i},{j}] = "
                        f"{got['linear_cka'][i, j]:.4f} >= 2 x its expectation under independence {expect:.4f}")
    if "linear_cka" in measures or "rbf_cka" in measures:
        check_gram(res, A, B, closed, what, gram_m, gram_stats)
    return got


def checked(res, A, B, what, **kw):
    """check_result, with an exception (a result that does not follow the contract) as a failure."""
    try:
        return check_result(res, A, B, what, **kw)
    except Exception as e:  # noqa: BLE001 - report and go on with the other checks
        import traceback
        C.check(False, f"{what}: the result could not be checked ({type(e).__name__}: {e}); "
                f"{traceback.format_exc(limit=3).strip().splitlines()[-3:]}")
        return None


def run_ok(cli, args, out, what):
    rc, so, se = run(cli, args + ["--out", out])
    if not C.check(rc == 0, f"{what}: exit {rc}, expected 0; stderr: {se.strip()[-800:]}"):
        return None
    return load_result(out, what)


def diag(n):
    return [(i, i) for i in range(n)]


def expect_failure(cli, args, workdir, name, pattern, what):
    """exit 2, stderr matching pattern, nothing written; an existing --out stays as it was."""
    d = os.path.join(workdir, "fail-" + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "R.json")
    rc, so, se = run(cli, args + ["--out", out, "--csv", os.path.join(d, "R.csv")])
    C.check(rc == 2, f"{what}: exit {rc}, expected 2; stderr: {se.strip()[-600:]}")
    C.check(re.search(pattern, so + se, re.I | re.S) is not None,
            f"{what}: message does not match /{pattern}/: {(se or so).strip()[-600:]!r}")
    C.check(os.listdir(d) == [], f"{what}: failed run left {os.listdir(d)} in the output folder")
    sentinel = "{\"previous\": true}\n"
    with open(out, "w") as fh:
        fh.write(sentinel)
    rc2, _, _ = run(cli, args + ["--out", out])
    with open(out) as fh:
        C.check(rc2 == 2 and fh.read() == sentinel, f"{what}: a failed run changed an existing --out")
    C.check(os.listdir(d) == ["R.json"], f"{what}: failed run left {os.listdir(d)} beside an existing --out")
    print(f"  {what}: exit {rc}: {(se or so).strip().splitlines()[-1] if (se or so).strip() else ''}",
          flush=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    dumps = os.path.join(work, "dumps")
    subprocess.run([sys.executable, os.path.join(REFERENCE, "make_similarity_dumps.py"), dumps], check=True)
    D = {k: os.path.join(dumps, k + ".dump.h5") for k in
         ("a", "same", "rotated", "noise", "other_examples", "missing_layer", "tiny")}

    helptext = subprocess.run([cli, "analyze", "--help"], capture_output=True, text=True)
    if "similarity" not in helptext.stdout + helptext.stderr:
        print(f"FAIL: {cli} has no 'analyze similarity' (not in `analyze --help`): the C++ analysis is not "
              f"built yet")
        return 1

    A = ref.Dump(D["a"])
    B = {k: ref.Dump(D[k]) for k in ("same", "rotated", "noise", "missing_layer", "tiny")}
    out_dir = os.path.join(work, "out")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)

    # a. and b.: every measure against the reference, closed forms, the gram statistics
    all3 = diag(3)
    closed = {
        "same": {"linear_cka": all3, "linear_cka_unbiased": all3, "rbf_cka": all3, "svcca": all3,
                 "pwcca": all3, "procrustes": all3},
        "rotated": {"linear_cka": all3, "linear_cka_unbiased": all3, "rbf_cka": all3, "svcca": all3,
                    "pwcca": all3, "procrustes": all3},
        "noise": {"noise": True},
    }
    for other in ("same", "rotated", "noise"):
        for vectors in ("token", "sentence"):
            what = f"a vs {other} ({vectors})"
            out = os.path.join(out_dir, f"{other}-{vectors}.json")
            csv = os.path.join(out_dir, f"{other}-{vectors}.csv")
            res = run_ok(cli, ["--dump", D["a"], "--dump", D[other], "--vectors", vectors, "--csv", csv],
                         out, what)
            if res is None:
                continue
            C.check(res["vectors"] == vectors, f"{what}: vectors {res['vectors']!r}")
            got = checked(res, A, B[other], what, closed=closed[other])
            if vectors == "token" and other == "same":
                check_default_options(res, what)
            C.check(os.path.isfile(csv) and len(open(csv).read().strip().splitlines()) >= 2,
                    f"{what}: --csv {csv} missing or without rows")
            C.check(sorted(os.listdir(out_dir)) == sorted(
                x for x in os.listdir(out_dir) if x.endswith(".json") or x.endswith(".csv")),
                f"{what}: stray files in the output folder: {os.listdir(out_dir)}")
            if got:
                print(f"  {what}: n = {res['n']}, gram n = {len(res['gram_sample'])}, linear_cka diag "
                      f"{[round(float(got['linear_cka'][i, min(i, got['linear_cka'].shape[1] - 1)]), 6) for i in range(3)]}",
                      flush=True)

    # c. options
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["noise"], "--layer-a", "2", "--layer-b", "0"],
                 os.path.join(out_dir, "layers.json"), "--layer-a 2 --layer-b 0")
    if res:
        checked(res, A, B["noise"], "--layer-a 2 --layer-b 0", layers_a=[2], layers_b=[0])
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["rotated"], "--layer", "1", "--vectors", "sentence"],
                 os.path.join(out_dir, "layer1.json"), "--layer 1")
    if res:
        checked(res, A, B["rotated"], "--layer 1", layers_a=[1], layers_b=[1],
                     closed={"linear_cka": [(0, 0)], "procrustes": [(0, 0)]})
    samples = []
    for seed in ("5", "5", "6"):
        what = f"--max-vectors 300 --seed {seed}"
        res = run_ok(cli, ["--dump", D["a"], "--dump", D["rotated"], "--max-vectors", "300", "--seed", seed,
                           "--measures", "linear_cka,svcca,procrustes"],
                     os.path.join(out_dir, f"max-{len(samples)}.json"), what)
        if res:
            checked(res, A, B["rotated"], what, measures=("linear_cka", "svcca", "procrustes"),
                         max_vectors=300, closed={"linear_cka": all3, "procrustes": all3})
            samples.append((res["sample"], res["gram_sample"], res["measures"]))
    if len(samples) == 3:
        C.check(samples[0] == samples[1], "--seed 5 twice: different samples or values")
        C.check(samples[0][0] != samples[2][0], "--seed 5 and --seed 6 drew the same token sample")
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["noise"], "--measures", "svcca", "--svcca-variance", "0.9"],
                 os.path.join(out_dir, "variance.json"), "--svcca-variance 0.9")
    if res:
        checked(res, A, B["noise"], "--svcca-variance 0.9", measures=("svcca",), variance=0.9)
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["same"], "--gram-m", "30", "--measures", "linear_cka,rbf_cka"],
                 os.path.join(out_dir, "gram30.json"), "--gram-m 30")
    if res:
        checked(res, A, B["same"], "--gram-m 30", measures=("linear_cka", "rbf_cka"), gram_m=30,
                     closed={"linear_cka": all3, "rbf_cka": all3})
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["missing_layer"]], os.path.join(out_dir, "missing.json"),
                 "a vs missing_layer (all layers)")
    if res:
        checked(res, A, B["missing_layer"], "a vs missing_layer", layers_b=[0, 2],
                     closed={"linear_cka": [(0, 0), (2, 1)], "procrustes": [(0, 0), (2, 1)]})
    res = run_ok(cli, ["--dump", D["tiny"], "--dump", D["tiny"], "--measures", "linear_cka,procrustes"],
                 os.path.join(out_dir, "tiny.json"), "tiny vs tiny, linear_cka,procrustes")
    if res:
        checked(res, B["tiny"], B["tiny"], "tiny vs tiny", measures=("linear_cka", "procrustes"),
                     closed={"linear_cka": diag(2), "procrustes": diag(2)}, gram_stats=False)

    # --length-bins 3: the overall result, then one per bin of input length. The bins follow the
    # documented definition (docs/analyses.md): A's example lengths sorted, cut at their 3-quantiles,
    # equal lengths kept together; each bin's sample holds exactly the real tokens of its examples,
    # and its linear CKA and Procrustes match numpy on that sample.
    binned_out = os.path.join(out_dir, "bins.json")
    rc, so, se = run(cli, ["--dump", D["a"], "--dump", D["rotated"], "--length-bins", "3", "--measures",
                           "linear_cka,procrustes", "--permutations", "0", "--bootstrap", "0",
                           "--csv", os.path.join(out_dir, "bins.csv"), "--out", binned_out])
    if C.check(rc == 0, f"--length-bins 3: exit {rc}; stderr: {se.strip()[-600:]}"):
        results = json.load(open(binned_out))["results"]
        lens = sorted(int(x) for x in A.lengths if x > 0)
        want_bins, lo = [], lens[0]
        for b in range(1, 4):
            nxt = lens[-1] + 1 if b == 3 else lens[min(len(lens) - 1, b * len(lens) // 3)]
            if nxt > lo:
                want_bins.append((lo, nxt - 1))
                lo = nxt
        C.check(len(results) == 1 + len(want_bins),
                f"--length-bins 3: {len(results)} results, expected 1 + {len(want_bins)} bins {want_bins}")
        C.check(results[0].get("length_range") is None, "--length-bins: the first result is not the overall one")
        for res, (blo, bhi) in zip(results[1:], want_bins):
            what = f"--length-bins 3, lengths {blo}-{bhi}"
            C.check(res.get("length_range") == [blo, bhi], f"{what}: length_range {res.get('length_range')}")
            ex = np.asarray(res["sample"]["examples"], np.int64)
            in_bin = [e for e in range(A.S) if blo <= A.lengths[e] <= bhi]
            C.check(sorted(set(ex.tolist())) == in_bin, f"{what}: sampled examples are not the bin's")
            C.check(res["n"] == int(sum(A.lengths[e] for e in in_bin)),
                    f"{what}: n = {res['n']}, the bin's examples hold {int(sum(A.lengths[e] for e in in_bin))}")
            want, _, _, _ = ref.reference_matrices(A, B["rotated"], res, 0.99)
            shape = (len(res["layers_a"]), len(res["layers_b"]))
            for name in ("linear_cka", "procrustes"):
                M = matrix(res["measures"][name], shape, f"{what} {name}")
                if M is not None:
                    compare(name, M, want[name], what)
        header = open(os.path.join(out_dir, "bins.csv")).readline().strip().split(",")
        C.check(header[-2:] == ["min_length", "max_length"], f"--length-bins: CSV header {header}")
        print(f"  --length-bins 3: bins {want_bins}", flush=True)

    # --scatter LA,LB: the first canonical pair of one cell, point by point, against numpy on the
    # vectors the result lists (SVCCA's reduction to 99% of the variance, then the SVD of the
    # orthonormal bases' cross product: Raghu et al. 2017); the pair's sign is free, so the
    # comparison takes the reference's sign that matches x. a vs rotated: rho = 1.
    for other, la, lb in (("rotated", 1, 1), ("noise", 2, 0), ("rotated", 0, 2)):
        what = f"--scatter {la},{lb} (a vs {other})"
        res = run_ok(cli, ["--dump", D["a"], "--dump", D[other], "--measures", "linear_cka", "--permutations", "0",
                           "--bootstrap", "0", "--scatter", f"{la},{lb}"],
                     os.path.join(out_dir, f"scatter-{other}-{la}{lb}.json"), what)
        if not res or not C.check(isinstance(res.get("scatter"), dict), f"{what}: no 'scatter' in the result"):
            continue
        s = res["scatter"]
        X = A.tokens(la, s["examples"], s["positions"])
        Y = B[other].tokens(lb, s["examples"], s["positions"])
        Ux, _, _ = np.linalg.svd(ref.centre(X), full_matrices=False)
        Uy, _, _ = np.linalg.svd(ref.centre(Y), full_matrices=False)
        kx, ky = ref.svcca_dims(X), ref.svcca_dims(Y)
        P, rho, Rt = np.linalg.svd(Ux[:, :kx].T @ Uy[:, :ky])
        n = X.shape[0]
        xr, yr = Ux[:, :kx] @ P[:, 0] * math.sqrt(n), Uy[:, :ky] @ Rt[0] * math.sqrt(n)
        x, y = np.asarray(s["x"]), np.asarray(s["y"])
        sign = 1.0 if float(x @ xr) >= 0 else -1.0
        C.check(s["layer_a"] == la and s["layer_b"] == lb and s["points"] == n == len(y),
                f"{what}: layers {s['layer_a']},{s['layer_b']}, points {s['points']}")
        C.check((s["dims_a"], s["dims_b"]) == (kx, ky), f"{what}: dims {s['dims_a']},{s['dims_b']}, numpy {kx},{ky}")
        C.check(abs(s["rho"] - rho[0]) <= TOL, f"{what}: rho {s['rho']}, numpy {rho[0]}")
        if len(rho) > 1 and rho[0] - rho[1] < 1e-6:
            # A repeated first canonical correlation (a rotation: every one is 1) leaves the first
            # pair's directions free within its eigenspace; a pair with rho = 1 still has y = x.
            if rho[0] > 1 - TOL:
                C.check(np.max(np.abs(x - y)) <= 1e-5, f"{what}: rho = 1 but y differs from x")
        else:
            C.check(np.max(np.abs(x - sign * xr)) <= 1e-5 and np.max(np.abs(y - sign * yr)) <= 1e-5,
                    f"{what}: the points differ from numpy's by {np.max(np.abs(x - sign * xr)):.2e}, "
                    f"{np.max(np.abs(y - sign * yr)):.2e}")
        C.check(abs(float(np.corrcoef(x, y)[0, 1]) - s["rho"]) <= 1e-9, f"{what}: corr(x, y) is not rho")
        C.check(x[int(np.argmax(np.abs(x)))] > 0, f"{what}: x's largest value is not positive")
        if other == "rotated" and la == lb:
            C.check(abs(s["rho"] - 1) <= TOL, f"{what}: rho {s['rho']}, not 1 for a rotation")
        print(f"  {what}: rho {s['rho']:.6f} (numpy {rho[0]:.6f}), {n} points, dims {kx},{ky}", flush=True)
    for bad, pattern in (("1", r"LA,LB"), ("7,0", r"\b7\b")):
        expect_failure(cli, ["--dump", D["a"], "--dump", D["rotated"], "--scatter", bad], work,
                       "scatter-" + bad.replace(",", "-"), pattern, f"--scatter {bad}")

    # independent representations: p uniform, so about 1% of the p-values are <= 0.01 by chance
    small = sum(p <= 0.01 for p in NOISE_P)
    C.check(len(NOISE_P) > 0 and small <= max(3, len(NOISE_P) // 20),
            f"a vs noise: {small} of {len(NOISE_P)} permutation p-values <= 0.01 (about 1% expected)")
    print(f"a vs noise: {small} of {len(NOISE_P)} permutation p-values <= 0.01", flush=True)

    # A layer without variance (every vector equal: a zeroed or constant layer) has no similarity:
    # its row of scores is null, with a note naming the layer and the dump, and so are its
    # p-values (a p-value of a score that does not exist was printed as 1/(K+1)). The other rows
    # are untouched.
    constant = os.path.join(work, "constant_layer1.dump.h5")
    shutil.copyfile(D["same"], constant)
    with h5py.File(constant, "r+") as f:
        f["layers/1/hidden"][...] = 1.5
        if "layers/1/sentence" in f:
            f["layers/1/sentence"][...] = 1.5
    what = "constant layer 1 of A"
    res = run_ok(cli, ["--dump", constant, "--dump", D["a"], "--measures", "linear_cka"],
                 os.path.join(out_dir, "constant.json"), what)
    if res is not None:
        notes = " ".join(res.get("notes", []))
        C.check("layer 1 of A" in notes and "constant_layer1.dump.h5" in notes and "no variance" in notes,
                f"{what}: no note names the layer without variance: {res.get('notes')}")
        value = res["measures"]["linear_cka"]
        C.check(all(v is None for v in value[1]), f"{what}: scores of layer 1 are {value[1]}, expected null")
        C.check(all(v is not None for i in (0, 2) for v in value[i]),
                f"{what}: the other layers' scores should stay defined: {value}")
        p = res["gram"]["linear_cka"]["p_value"]
        C.check(all(v is None for v in p[1]), f"{what}: p-values of layer 1 are {p[1]}, expected null")

    # d. bad input
    print("bad input:", flush=True)
    from make_similarity_dumps import OTHER_EXAMPLES  # noqa: E402
    expect_failure(cli, ["--dump", D["a"], "--dump", D["other_examples"]], work, "examples",
                   r"\b(" + "|".join(str(e) for e in OTHER_EXAMPLES) + r")\b",
                   "a vs other_examples (names the example that differs)")
    expect_failure(cli, ["--dump", D["a"], "--dump", D["missing_layer"], "--layer-b", "1"], work, "layer",
                   r"\b0\b.*\b2\b", "--layer-b 1 against missing_layer (names the layers 0 and 2)")
    fewer = r"^(?=.*\bfewer\b)(?=.*\bvectors?\b)(?=.*\bdimensions?\b)"  # the three words, any order
    for measures in ("svcca", "pwcca", "linear_cka,pwcca"):
        expect_failure(cli, ["--dump", D["tiny"], "--dump", D["tiny"], "--measures", measures],
                       work, "tiny-" + measures.replace(",", "-"), fewer,
                       f"tiny vs tiny --measures {measures}")
    # With the default measures, what tiny cannot give (SVCCA and PWCCA: fewer vectors than
    # dimensions; RBF CKA: 3 examples for its Gram sample) is left out with a note, the others
    # run (session 32: RBF CKA refused the whole comparison, advising a --gram-m that could not
    # help).
    res = run_ok(cli, ["--dump", D["tiny"], "--dump", D["tiny"]],
                 os.path.join(out_dir, "tiny-all.json"), "tiny vs tiny (all measures)")
    if res is not None:
        notes = " ".join(res.get("notes", []))
        C.check("SVCCA and PWCCA left out" in notes and "RBF CKA left out" in notes and
                "rbf_cka" not in res["measures"] and "linear_cka" in res["measures"],
                f"tiny vs tiny (all measures): notes {res.get('notes')}, measures "
                f"{sorted(res['measures'])}")
    expect_failure(cli, ["--dump", D["tiny"], "--dump", D["tiny"], "--measures", "rbf_cka"], work,
                   "tiny-rbf", r"(?=.*\bGram\b)(?=.*\bexamples?\b)",
                   "tiny vs tiny --measures rbf_cka (its Gram sample: 3 examples)")

    # e. precision (session 32's probe), against the reference from the same vectors:
    print("precision:", flush=True)
    from make_similarity_dumps import write_dump as write_similarity_dump  # noqa: E402
    rng = np.random.default_rng(32)
    S, L, d = 40, 10, 64
    tokens = rng.integers(5, 100, (S, L)).astype(np.int32)
    lengths = [L] * S
    def pair(name, xa, xb):
        pa, pb = (os.path.join(work, f"{name}-{k}.dump.h5") for k in "ab")
        write_similarity_dump(pa, {0: xa.reshape(S, L, d)}, tokens, lengths)
        write_similarity_dump(pb, {0: xb.reshape(S, L, d)}, tokens, lengths)
        return pa, pb
    # Procrustes of rank-2 layers: the nuclear norm summed the square roots of CᵀC's rounded
    # eigenvalues, 62 of them ~1e-8 instead of ~1e-16 (7.9e-4 relative; 2.2e-3 at N = 5).
    low = rng.standard_normal((S * L, 2)) @ rng.standard_normal((2, d))
    pa, pb = pair("rank2", low, low + 0.05 * rng.standard_normal((S * L, d)))
    res = run_ok(cli, ["--dump", pa, "--dump", pb, "--measures", "procrustes,linear_cka"],
                 os.path.join(out_dir, "rank2.json"), "rank-2 layers")
    if res is not None:
        X, Y = ref.Dump(pa).vectors(0, res), ref.Dump(pb).vectors(0, res)
        want = ref.procrustes(X, Y)
        got = res["measures"]["procrustes"][0][0]
        C.check(abs(got - want) <= 1e-6 * abs(want), f"rank-2 layers: procrustes {got} against "
                f"the reference's {want} (relative {abs(got - want) / abs(want):.2e})")
    # RBF CKA is translation-invariant: a coordinate of 1e5 beside a spread of 1e-3 (distances as
    # |x|² + |y|² − 2xᵀy cancelled to noise: 8% off).
    far = 1e-3 * rng.standard_normal((S * L, d))
    far[:, 0] += 1e5
    near = 0.5 * (far - far.mean(axis=0)) + 2e-4 * rng.standard_normal((S * L, d))
    pa, pb = pair("offset", far, near)
    res = run_ok(cli, ["--dump", pa, "--dump", pb, "--vectors", "sentence", "--measures", "rbf_cka",
                       "--permutations", "0", "--bootstrap", "0"],
                 os.path.join(out_dir, "offset.json"), "a far offset")
    if res is not None:
        g = np.asarray(res["gram_sample"], np.int64)
        X, Y = ref.Dump(pa).vectors(0, res)[g], ref.Dump(pb).vectors(0, res)[g]
        want = ref.rbf_cka(X, Y)
        got = res["gram"]["rbf_cka"]["observed"][0][0]
        C.check(abs(got - want) <= 1e-6 * abs(want), f"a far offset: rbf_cka {got} against the "
                f"reference's {want}")
    # RBF CKA's bandwidth σ² is the median squared distance (docs/analyses.md): with 30 of 40
    # sentences identical, 910 of the 1600 pairs coincide, numpy's median is 0, and
    # exp(−D/0) is undefined. A stand-in σ² = 1 gave a finite score that changed with the
    # layer's scale (A against 1000·A: 0.66); the score is null, with a note saying why.
    same = np.repeat(rng.standard_normal((1, L, d)), S, axis=0)
    same[30:] = rng.standard_normal((S - 30, L, d))
    flat = same.reshape(S * L, d)
    pa, pb = pair("repeats", flat, 1000.0 * flat)
    sent = flat.reshape(S, L, d).mean(axis=1)
    sq = ((sent[:, None, :] - sent[None, :, :]) ** 2).sum(-1)
    C.check(np.median(sq) == 0 and sq.max() > 0, "the fixture's median squared distance is 0")
    res = run_ok(cli, ["--dump", pa, "--dump", pb, "--vectors", "sentence", "--measures", "rbf_cka",
                       "--permutations", "0", "--bootstrap", "0"],
                 os.path.join(out_dir, "repeats.json"), "a median squared distance of 0")
    if res is not None:
        got = res["measures"]["rbf_cka"][0][0]
        notes = " ".join(res.get("notes") or [])
        C.check(got is None and "median squared distance" in notes and "undefined" in notes,
                f"a median squared distance of 0: rbf_cka {got} (want null), notes {notes!r}")
    # A score of 1 up to rounding is not 1.0000000000000002, nor "outside its interval".
    pa, _ = pair("self", low + rng.standard_normal((S * L, d)), low)
    res = run_ok(cli, ["--dump", pa, "--dump", pa, "--measures", "linear_cka,rbf_cka"],
                 os.path.join(out_dir, "self.json"), "a layer against itself")
    if res is not None:
        values = [res["measures"][m][0][0] for m in ("linear_cka", "rbf_cka")] + \
            [res["gram"][m][k][0][0] for m in ("linear_cka", "rbf_cka")
             for k in ("observed", "ci_low", "ci_high")]
        C.check(all(0.999999 <= v <= 1.0 for v in values) and not res.get("notes"),
                f"a layer against itself: values {values}, notes {res.get('notes')}")
    expect_failure(cli, ["--dump", D["a"], "--dump", D["same"], "--measures", "linear_cka,nonsense"], work,
                   "measure", r"nonsense", "--measures with an unknown name")
    # A measure named twice is refused naming it (its second matrix stayed null and the JSON,
    # keyed by name, kept the null; session 37), as a list option's repeat is.
    expect_failure(cli, ["--dump", D["a"], "--dump", D["same"], "--measures", "linear_cka,linear_cka"],
                   work, "measure-twice", r"linear_cka.*twice", "--measures naming a measure twice")
    # --permutations 0 --bootstrap 0: the Gram sample's observed linear CKA is part of the result
    # all the same (docs/analyses.md: gram.*.observed for linear and RBF CKA; the CSV's
    # gram_value), numpy's linear CKA of the Gram-sample rows. It was left out (session 37).
    gram_csv = os.path.join(out_dir, "gram-only.csv")
    res = run_ok(cli, ["--dump", D["a"], "--dump", D["noise"], "--layer", "1", "--measures",
                       "linear_cka,rbf_cka", "--permutations", "0", "--bootstrap", "0",
                       "--csv", gram_csv],
                 os.path.join(out_dir, "gram-only.json"), "--permutations 0 --bootstrap 0")
    if res is not None:
        g = np.asarray(res["gram_sample"], np.int64)
        X, Y = A.vectors(1, res)[g], B["noise"].vectors(1, res)[g]
        want = ref.linear_cka(X, Y)
        got = ((res.get("gram") or {}).get("linear_cka") or {}).get("observed")
        C.check(got is not None and got[0][0] is not None and abs(got[0][0] - want) <= 1e-9 * abs(want),
                f"--permutations 0 --bootstrap 0: gram.linear_cka.observed {got}, numpy {want}")
        with open(gram_csv) as fh:
            header = fh.readline().strip().split(",")
            rows = [dict(zip(header, line.strip().split(","))) for line in fh if line.strip()]
        cells = [r["gram_value"] for r in rows if r["measure"] == "linear_cka"]
        C.check(len(cells) == 1 and cells[0] != "" and abs(float(cells[0]) - want) <= 1e-9 * abs(want),
                f"--permutations 0 --bootstrap 0: the CSV's linear_cka gram_value {cells}, numpy {want}")

    print(f"{C.passed} checks passed, {len(C.failures)} failed")
    return 1 if C.failures else 0


if __name__ == "__main__":
    sys.exit(main())
