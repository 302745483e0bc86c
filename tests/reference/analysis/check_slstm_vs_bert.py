#!/usr/bin/python3
"""Checks DIR/results.json of `routescope-cli experiment slstm-vs-bert` against numpy.

    check_slstm_vs_bert.py DIR

Every number of the table is recomputed from the files the experiment left, with h5py and numpy
(reference_analysis.py's anisotropy and pca, the same independent references the analysis tests
use) and with the PyTorch reference's checkpoint reader; from Routescope's own analysis results it
takes only the random sample indices it wrote out (rows and tokens), and checks those are a valid
sample (distinct rows, every row when there are at most M, tokens inside the sequence):
  - every dump holds the same held-out text (/data/tokens, /data/lengths) and the model of their row
    (arch, n_layers, d_model); layers 0..n_layers are all in the table with depth ℓ / n_layers;
  - per layer, token and sentence vectors: m, pairs, mean, median, std, fraction < 0, mean norm,
    PC1 variance, isotropy score; the sentence vectors are S-LSTM's node g (g⁰ = the masked mean
    of the embeddings) and BERT's masked mean of h;
  - per layer, PCA: the number of sequences and mean k(p) at p = .90 … .98 over every sequence,
    and the global k(p);
  - parameters: the sum of the checkpoint's parameter sizes; the validation loss: the log's
    evaluation of the dumped checkpoint (the best step's when train kept a best.ckpt.h5, else the
    final step's);
  - matched loss: the third row (when there is one) is the model that ends lower, at the kept
    checkpoint whose validation loss is nearest the other's final loss, chosen again from the logs.
Prints one JSON line; exit 0 when everything matches, 1 listing the mismatches.
"""
import json
import math
import os
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import reference_analysis as ref  # noqa: E402
from routescope_ref import checkpoint as ref_checkpoint  # noqa: E402

THRESHOLDS = [0.90, 0.92, 0.94, 0.96, 0.98]
M_DEFAULT = 5000


def close(a, b, tol=1e-5):
    """Floats within tol (relative above 1); integers, strings and None exactly."""
    if isinstance(b, float) and isinstance(a, (int, float)):
        return abs(a - b) <= tol * max(1.0, abs(b))
    return a == b


def main():
    out = sys.argv[1]
    problems, compared = [], 0

    def expect(name, got, want, tol=1e-5):
        nonlocal compared
        compared += 1
        if isinstance(want, list):
            ok = isinstance(got, list) and len(got) == len(want) and \
                all(close(g, w, tol) for g, w in zip(got, want))
        else:
            ok = close(got, want, tol)
        if not ok:
            problems.append(f"{name}: results.json {got!r}, numpy {want!r}")

    with open(os.path.join(out, "results.json")) as fh:
        results = json.load(fh)
    expect("thresholds", results["thresholds"], THRESHOLDS)
    models = results["models"]
    expect("models", [m["arch"] for m in models[:2]], ["slstm", "bert"])
    dumps = [h5py.File(os.path.join(out, m["dump"]), "r") for m in models]
    for f in dumps[1:]:
        if not np.array_equal(dumps[0]["data/tokens"][()], f["data/tokens"][()]) or \
                not np.array_equal(dumps[0]["data/lengths"][()], f["data/lengths"][()]):
            problems.append("the dumps do not hold the same held-out text")
        compared += 1

    # Matched loss, chosen again from the logs: the target is the higher of the two final
    # validation losses; the other model is taken at its evaluated step (each one's weights kept as
    # step-N.ckpt.h5) whose loss is nearest the target, the earliest on a tie; no third row when
    # that is its final step.
    def log_evals(m):
        evals = {}
        with open(os.path.join(out, os.path.dirname(m["config"]), "log.jsonl")) as fh:
            for line in fh:
                j = json.loads(line)
                if j.get("type") == "eval":
                    evals[j["step"]] = j
        return evals
    finals = [log_evals(m) for m in models[:2]]
    final_loss = [e[max(e)]["loss"] for e in finals]
    worse = 0 if final_loss[0] >= final_loss[1] else 1
    better = 1 - worse
    target = final_loss[worse]
    nearest = min(sorted(finals[better]), key=lambda s: abs(finals[better][s]["loss"] - target))
    ml = results["matched_loss"]
    expect("matched target model", ml["target_model"], models[worse]["label"])
    expect("matched target loss", ml["target_loss"], target, 1e-12)
    if nearest == max(finals[better]):
        expect("models (no matched row)", len(models), 2)
    else:
        expect("models (with the matched row)", len(models), 3)
        expect("matched status", ml["status"], "matched")
        expect("matched step", ml["step"], nearest)
        expect("matched loss", ml["loss"], finals[better][nearest]["loss"], 1e-12)
        if len(models) == 3:
            m = models[2]
            expect("matched row arch", m["arch"], models[better]["arch"])
            expect("matched row step", m["matched"]["step"], nearest)
            expect("matched row checkpoint", os.path.basename(m["checkpoint"]),
                   f"step-{nearest}.ckpt.h5")

    for m, f in zip(models, dumps):
        label = m["label"]
        n_layers = m["n_layers"]
        lengths = f["data/lengths"][()]
        S = len(lengths)
        for key, want in (("arch", m["arch"]), ("n_layers", n_layers), ("d_model", m["d_model"])):
            got = f["model"].attrs[key]
            got = got.decode() if isinstance(got, bytes) else got
            expect(f"{label} dump /model {key}", want, got if isinstance(got, str) else int(got))

        ck = ref_checkpoint.read(os.path.join(out, m["checkpoint"]))
        expect(f"{label} parameters", m["parameters"], int(sum(v.size for v in ck["params"].values())))
        evals, best, last = {}, -1, 0
        with open(os.path.join(out, os.path.dirname(m["config"]), "log.jsonl")) as fh:
            for line in fh:
                j = json.loads(line)
                if j.get("type") == "eval":
                    evals[j["step"]] = j
                if j.get("type") == "best":
                    best = j["step"]
                if j.get("type") == "step":
                    last = j["step"]
        # The dumped checkpoint: best.ckpt.h5 when train kept one, else the final model.ckpt.h5;
        # the matched row's: its kept step (checked above).
        expect(f"{label} best step", m["best_step"], -1 if "matched" in m else best)
        if "matched" in m:
            step = m["matched"]["step"]
            expect(f"{label} steps", m["steps"], step)
        else:
            expect(f"{label} checkpoint", os.path.basename(m["checkpoint"]),
                   "best.ckpt.h5" if best >= 0 else "model.ckpt.h5")
            expect(f"{label} steps", m["steps"], last)
            step = best if best >= 0 else max(evals)
        expect(f"{label} valid step", m["valid"]["step"], step)
        expect(f"{label} valid loss", m["valid"]["loss"], evals[step]["loss"], 1e-12)
        expect(f"{label} valid accuracy", m["valid"]["accuracy"], evals[step]["accuracy"], 1e-12)

        expect(f"{label} layers", [l["layer"] for l in m["layers"]], list(range(n_layers + 1)))
        analyses = {}
        for name in ("anisotropy-token", "anisotropy-sentence", "pca", "pca-passage100",
                     "pca-passage300"):
            if name == "pca-passage300" and name not in m["analyses"]:
                continue
            with open(os.path.join(out, m["analyses"][name])) as fh:
                analyses[name] = {r["layer"]: r for r in json.load(fh)["results"]}
        for row in m["layers"]:
            l = row["layer"]
            where = f"{label} layer {l}"
            expect(f"{where} depth", row["relative_depth"], l / n_layers, 1e-12)
            # The sentence vectors the analysis reads: g for S-LSTM, the masked mean for BERT.
            hidden = f[f"layers/{l}/hidden"]
            if "sentence" not in f[f"layers/{l}"]:
                problems.append(f"{where}: the dump has no sentence vectors")
            elif m["arch"] == "bert" or l == 0:
                sent = f[f"layers/{l}/sentence"][()].astype(np.float64)
                mean = np.stack([hidden[r, : lengths[r]].astype(np.float64).mean(axis=0)
                                 for r in range(S)])
                compared += 1
                if not np.allclose(sent, mean, atol=1e-5, rtol=1e-4):
                    problems.append(f"{where}: /sentence is not the masked mean of h")
            for kind, flag in (("token", False), ("sentence", True)):
                res = analyses[f"anisotropy-{kind}"][l]
                p = res["provenance"]["parameters"]
                if p["vectors"] != ("sentence" if flag else "token") or p["centred"] or \
                        p["m"] != M_DEFAULT or p["bins"] != 100:
                    problems.append(f"{where} {kind}: analysed with {p}, not ANALYSES.md's defaults")
                rows = res["sample"]["rows"]
                if len(set(rows)) != len(rows) or len(rows) != min(S, M_DEFAULT) or \
                        not all(0 <= r < S for r in rows):
                    problems.append(f"{where} {kind}: the sample is not {min(S, M_DEFAULT)} distinct rows")
                if not flag and not all(0 <= t < lengths[r] for r, t in zip(rows, res["sample"]["tokens"])):
                    problems.append(f"{where} {kind}: a sampled token lies outside its sequence")
                want = ref.anisotropy(f, res)
                got = row[kind]
                expect(f"{where} {kind} m", got["m"], want["m_used"])
                expect(f"{where} {kind} pairs", got["pairs"], want["pairs"])
                for key in ("mean", "median", "std", "fraction_negative", "mean_norm",
                            "pc1_variance", "isotropy"):
                    expect(f"{where} {kind} {key}", got[key], want[key])
            res = analyses["pca"][l]
            p = res["provenance"]["parameters"]
            if p["max_sentences"] != 0 or p["energy"] or p["thresholds"] != THRESHOLDS:
                problems.append(f"{where} pca: analysed with {p}, not ANALYSES.md's defaults")
            want = ref.pca(f, res)
            expect(f"{where} pca sentences", row["pca"]["sentences"], want["overall"]["sentences"])
            expect(f"{where} pca sentences = every sequence of length ≥ 2", want["overall"]["sentences"],
                   int((lengths >= 2).sum()))
            expect(f"{where} pca mean_k", row["pca"]["mean_k"], want["overall"]["mean_k"])
            expect(f"{where} pca global_k", row["pca"]["global_k"], want["global"]["k"])
            # Per passage, uncentred (the S-LSTM paper's Table 6 statistic), recomputed by numpy;
            # the bootstrap interval holds the mean.
            # The 300-token passages exist exactly when the sequences are that long.
            seq_len = int(f["data/tokens"].shape[1])
            expect(f"{where} has 300-token passages", "passage_pca_300" in row, seq_len >= 300)
            for name, key in (("pca-passage100", "passage_pca"), ("pca-passage300", "passage_pca_300")):
                if key not in row:
                    continue
                res = analyses[name][l]
                p = res["provenance"]["parameters"]
                want_len = min(100, seq_len) if key == "passage_pca" else 300
                if p["centred"] or p["passage"] != row[key]["passage"] or p["passage"] != want_len:
                    problems.append(f"{where} {key}: analysed with {p}")
                want = ref.pca(f, res)
                q = row[key]
                expect(f"{where} {key} passages", q["passages"], want["overall"]["sentences"])
                expect(f"{where} {key} mean_k", q["mean_k"], want["overall"]["mean_k"])
                if not all(lo <= k <= hi for lo, k, hi in zip(q["ci_low"], q["mean_k"], q["ci_high"])):
                    problems.append(f"{where} {key}: an interval does not hold its mean")

    for f in dumps:
        f.close()
    print(json.dumps({"ok": not problems, "compared": compared, "problems": problems[:20]}))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
