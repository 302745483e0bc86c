#!/usr/bin/python3
"""Independent numpy + h5py implementations of the analyses of ANALYSES.md, for the C++ tests.

    reference_analysis.py KIND DUMP ROUTESCOPE_RESULT.json OUT.json [DUMP_B]

Reads the dump directly with h5py (no Routescope code), takes from Routescope's result only what
must be shared to compare like with like (the parameters and the random sample indices it wrote
out), recomputes the statistics and writes them as {"results": [...]} with the same keys as the
Routescope result, so the test compares key by key: integers exactly, floats to 1e-5.
"""
import json
import math
import sys

import h5py
import numpy as np


def layer_rows(f, layer):
    g = f[f"layers/{layer}"]
    S = f["data/lengths"].shape[0]
    index = g["example_index"][()] if "example_index" in g else np.arange(S)
    return index, f["data/lengths"][()][index]


def sentence_matrix(f, layer, rows):
    g = f[f"layers/{layer}"]
    if "sentence" in g:
        return np.stack([g["sentence"][r].astype(np.float64) for r in rows])
    _, lengths = layer_rows(f, layer)
    return np.stack([g["hidden"][r, : lengths[r]].astype(np.float64).mean(axis=0) for r in rows])


def log_sum_exp(x):
    top = x.max()
    return top + math.log(np.exp(x - top).sum())


def anisotropy(f, res):
    p = res["provenance"]["parameters"]
    layer, rows = p["layer"], res["sample"]["rows"]
    if p["vectors"] == "sentence":
        X = sentence_matrix(f, layer, rows)
    else:
        hidden = f[f"layers/{layer}/hidden"]
        X = np.stack([hidden[r, t].astype(np.float64) for r, t in zip(rows, res["sample"]["tokens"])])
    out = {"m_used": len(rows), "mean_norm": float(np.linalg.norm(X, axis=1).mean())}
    if p["centred"]:
        X = X - X.mean(axis=0)
    if p["spectrum"]:
        ev, vecs = np.linalg.eigh(X.T @ X)
        out["pc1_variance"] = float(ev.max() / np.clip(ev, 0, None).sum())
        proj = X @ vecs  # Mu & Viswanath: Z(c) = Σ exp(cᵀw), c over ± eigenvectors of WᵀW
        logz = [log_sum_exp(s * proj[:, k]) for k in range(proj.shape[1]) for s in (1.0, -1.0)]
        out["isotropy"] = float(math.exp(min(logz) - max(logz)))
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    cos = np.clip((Xn @ Xn.T)[np.triu_indices(len(rows), 1)], -1.0, 1.0)
    counts, _ = np.histogram(cos, bins=p["bins"], range=(-1.0, 1.0))
    out.update(pairs=int(cos.size), histogram={"counts": [int(c) for c in counts]}, mean=float(cos.mean()),
               median=float(np.median(cos)), std=float(cos.std()), fraction_negative=float((cos < 0).mean()))
    return out


def k_of(weights, thresholds):
    total = weights.sum()
    cum = np.cumsum(weights) / total
    return [int(min(np.argmax(cum >= t) + 1 if (cum >= t).any() else len(weights), len(weights)))
            for t in thresholds]


def spectrum(H, energy, centred=True):
    Hc = H - H.mean(axis=0) if centred else H  # uncentred: the S-LSTM paper's SVD of H itself
    s = np.linalg.svd(Hc, compute_uv=False)
    return s if energy else s ** 2


def pca(f, res):
    p = res["provenance"]["parameters"]
    layer, th = p["layer"], p["thresholds"]
    hidden = f[f"layers/{layer}/hidden"]
    _, lengths = layer_rows(f, layer)
    rows = range(len(lengths)) if p["max_sentences"] == 0 else res["sampled_rows"]
    centred, passage = p.get("centred", True), int(p.get("passage", 0))
    # The units: each sentence, or each of its consecutive passages of `passage` tokens.
    units = []
    for r in rows:
        n = int(lengths[r])
        if passage == 0:
            units.append((r, 0, n))
        else:
            units += [(r, s, passage) for s in range(0, n - passage + 1, passage)]
    used, starts, lens, ks, curves, skipped = [], [], [], [], [], 0
    points = p["curve_points"]
    for r, s, n in units:
        if n < 2:
            skipped += 1
            continue
        w = spectrum(hidden[r, s:s + n].astype(np.float64), p["energy"], centred)
        if not w.sum() > 0:
            skipped += 1
            continue
        used.append(r)
        starts.append(s)
        lens.append(n)
        ks.append(k_of(w, th))
        cum = np.cumsum(w) / w.sum()
        curve = np.ones(points)
        curve[: min(points, len(cum))] = cum[:points]
        curves.append(curve)
    ks = np.array(ks)
    lens = np.array(lens)

    def group(mask):
        return {"sentences": int(mask.sum()), "mean_k": [float(v) for v in ks[mask].mean(axis=0)]}

    width = p["bucket_width"]
    buckets = [group((lens - 1) // width == b) for b in sorted(set((lens - 1) // width))]
    exact = [group(lens == n) for n in sorted(set(lens))]
    out = {"sentences": {"rows": [int(r) for r in used], "lengths": [int(n) for n in lens],
                         "k": ks.tolist()},
           "skipped": skipped,
           "overall": dict(group(np.ones(len(used), bool)), lo=int(lens.min()), hi=int(lens.max())),
           "by_bucket": buckets,
           "by_length": exact, "mean_curve": [float(v) for v in np.mean(curves, axis=0)]}
    if p["global_m"] > 0:
        g = res["global"]
        H = np.stack([hidden[r, t].astype(np.float64) for r, t in zip(g["rows"], g["tokens"])])
        w = spectrum(H, p["energy"], centred)
        # k(p) = min{k >= 1 : ...} does not exist for a spectrum of zeros: null.
        out["global"] = {"k": k_of(w, th) if w.sum() > 0 else None}
    if passage:
        out["sentences"]["starts"] = [int(s) for s in starts]
    return out


def scores(y, yhat):
    n = len(y)
    correct = int((y == yhat).sum())
    z = 1.959963984540054
    if n:
        ph = correct / n
        den = 1 + z * z / n
        centre = (ph + z * z / (2 * n)) / den
        half = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
        lo, hi = centre - half, centre + half
    else:
        lo, hi = 0.0, 1.0
    classes = sorted(set(y.tolist()) | set(yhat.tolist()))
    conf = np.array([[np.sum((y == a) & (yhat == b)) for b in classes] for a in classes], float)
    t, pr = conf.sum(axis=1), conf.sum(axis=0)
    num = np.trace(conf) * n - (t * pr).sum()
    den = math.sqrt((n * n - (pr * pr).sum()) * (n * n - (t * t).sum()))
    f1 = [2 * conf[i, i] / (t[i] + pr[i]) for i in range(len(classes))]
    return {"count": n, "correct": correct, "accuracy": correct / n if n else 0.0, "wilson_low": lo,
            "wilson_high": hi, "mcc": num / den if den > 0 else 0.0,
            "macro_f1": float(np.mean(f1)) if f1 else 0.0}


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n)


def length_accuracy(f, res, fb):
    p = res["provenance"]["parameters"]
    y, pa = f["data/labels"][()], f["data/predictions"][()]
    pb = fb["data/predictions"][()] if fb is not None else None
    x = (f["data/lengths"][()].astype(float) if p["variable"] == "length"
         else f[f"data/attributes/{p['variable']}"][()])
    # Unlabelled examples (label -1) have no accuracy: left out, and not used for the edges.
    labelled = y >= 0
    xl = x[labelled]
    if p["binning"] == "quantile":
        edges = np.unique(np.quantile(xl, np.linspace(0, 1, p["bins"] + 1)))
        if len(edges) == 1:
            edges = np.array([edges[0], edges[0]])
    elif p["binning"] == "edges":
        edges = np.array(p["edges"], float)
    else:
        edges = [xl.min()]
        while edges[-1] <= xl.max():
            edges.append(xl.min() + len(edges) * p["width"])
        edges = np.array(edges)
    inside = (x >= edges[0]) & (x <= edges[-1]) & labelled
    index = np.minimum(np.searchsorted(edges, x, side="right") - 1, len(edges) - 2)

    def bin_of(mask):
        ex = np.nonzero(mask)[0]
        out = {"examples": ex.tolist(), "a": scores(y[ex], pa[ex])}
        if pb is not None:
            ra, rb = pa[ex] == y[ex], pb[ex] == y[ex]
            b, c = int((ra & ~rb).sum()), int((~ra & rb).sum())
            out.update(b=scores(y[ex], pb[ex]), only_a_correct=b, only_b_correct=c, mcnemar_p=mcnemar(b, c),
                       difference=float(rb.mean() - ra.mean()) if len(ex) else 0.0)
        return out

    return {"edges": [float(e) for e in edges], "out_of_range": int((~inside & labelled).sum()),
            "unlabelled": int((~labelled).sum()),
            "bins": [bin_of(inside & (index == i)) for i in range(len(edges) - 1)], "overall": bin_of(inside)}


def transitions(f, res):
    layers = []
    for entry in res["layers"]:
        a, b = entry["from_layer"], entry["layer"]
        ia, _ = layer_rows(f, a)
        ib, _ = layer_rows(f, b)
        lengths = f["data/lengths"][()]
        ra = {e: r for r, e in enumerate(ia)}
        rb = {e: r for r, e in enumerate(ib)}
        stats = {}
        for what in ("tokens", "sentences"):
            pairs = []
            for e in entry["examples"]:
                if what == "tokens":
                    ha = f[f"layers/{a}/hidden"][ra[e], : lengths[e]].astype(np.float64)
                    hb = f[f"layers/{b}/hidden"][rb[e], : lengths[e]].astype(np.float64)
                else:
                    ha = sentence_matrix(f, a, [ra[e]])
                    hb = sentence_matrix(f, b, [rb[e]])
                pairs += list(zip(ha, hb))
            step = np.array([np.linalg.norm(y - x) for x, y in pairs])
            na = np.array([np.linalg.norm(x) for x, _ in pairs])
            nb = np.array([np.linalg.norm(y) for _, y in pairs])
            ok = (na > 0) & (nb > 0)
            cos = np.array([x @ y for x, y in pairs])[ok] / (na[ok] * nb[ok])
            stats[what] = {"count": len(pairs), "zero_norm": int((~ok).sum()), "l2": float(step.mean()),
                           "relative": float((step[ok] / na[ok]).mean()),
                           "angle_degrees": float(np.degrees(np.arccos(np.clip(cos, -1, 1))).mean())}
        # Step x position change: mean ||h_b[t] - h_a[t]|| over the examples with length > t.
        L = f[f"layers/{a}/hidden"].shape[1]
        total, count = np.zeros(L), np.zeros(L, dtype=np.int64)
        for e in entry["examples"]:
            n = int(lengths[e])
            ha = f[f"layers/{a}/hidden"][ra[e], :n].astype(np.float64)
            hb = f[f"layers/{b}/hidden"][rb[e], :n].astype(np.float64)
            total[:n] += np.linalg.norm(hb - ha, axis=1)
            count[:n] += 1
        stats["position_l2"] = [float(v) for v in np.where(count > 0, total / np.maximum(count, 1), 0.0)]
        stats["position_count"] = [int(c) for c in count]
        layers.append({"from_layer": a, "layer": b, **stats})
    return {"layers": layers}


def gates(f, res):
    out = []
    arch = f["model"].attrs["arch"]
    arch = arch.decode() if isinstance(arch, bytes) else arch
    for g in res["gates"]:
        layer, name = g["layer"], g["gate"]
        rows = g["rows"]  # each layer's own sample (example_index: layers store other rows)
        _, lengths = layer_rows(f, layer)
        ds = f[f"layers/{layer}/gates/{name}"]
        L = f["data/tokens"].shape[1]
        vals = []
        for r in rows:
            x = ds[r].astype(np.float64)
            vals.append(x[: lengths[r]])
            if x.shape[0] == L + 1:
                vals.append(x[L:])
        v = np.concatenate(vals)
        if arch == "slstm" and name in ("i", "l", "r", "f", "s"):
            lo, hi = 1 / (1 + 4 * np.e), np.e / (np.e + 4)
        elif name in ("f", "i", "sentence_weight") or (arch == "slstm" and name == "o"):
            lo, hi = 0.0, 1.0
        else:
            lo, hi = (v.min(), v.max()) if v.max() > v.min() else (v.min() - 0.5, v.min() + 0.5)
        flat = v.ravel()
        entry = {"layer": layer, "gate": name, "values": int(flat.size), "mean": float(flat.mean()),
                 "std": float(flat.std()),
                 "histogram": [int(c) for c in np.histogram(flat, bins=res["provenance"]["parameters"]["bins"],
                                                            range=(lo, hi))[0]],
                 "below_range": int((flat < lo).sum()), "above_range": int((flat > hi).sum()),
                 "fraction_below_0.1": float((flat < 0.1).mean()), "fraction_above_0.9": float((flat > 0.9).mean()),
                 "channel_mean": [float(c) for c in v.mean(axis=0)]}
        if name == "f":
            entry["fraction_above_0.99"] = float((flat > 0.99).mean())
            entry["effective_memory"] = [float(1 / (1 - c)) for c in v.mean(axis=0)]
        out.append(entry)
    return {"gates": out}


def relative(kf, kb, df, db, radius):
    """The weight of the token r positions away (r < 0: to the left). kb None: a causal layer
    (model.causal, forward SSMs only), which reads nothing to its right (0 for r > 0) and whose
    lag 0 is K_f[0] + D_f alone."""
    if kb is None:
        R = min(radius, len(kf) - 1)
        return np.array([kf[-r] if r < 0 else 0.0 if r > 0 else kf[0] + df for r in range(-R, R + 1)])
    R = min(radius, len(kf) - 1, len(kb) - 1)
    v = [kf[-r] if r < 0 else kb[r] if r > 0 else 0.5 * ((kf[0] + df) + (kb[0] + db)) for r in range(-R, R + 1)]
    return np.array(v)


def s4d(f, base, L, g=0):
    """Channel group g's kernel (MODELS.md's S4D), skip and poles, from a checkpoint's tensors."""
    a = np.minimum(f[base + "A_re"][g].astype(np.float64), -1e-4) + 1j * f[base + "A_im"][g].astype(np.float64)
    c = f[base + "C"][g, :, 0].astype(np.float64) + 1j * f[base + "C"][g, :, 1].astype(np.float64)
    dt = np.exp(float(f[base + "log_step"][g]))
    k = (c * (np.exp(dt * a) - 1) / a)[None, :] * np.exp(np.arange(L)[:, None] * dt * a[None, :])
    return k.sum(axis=1).real, float(f[base + "D"][g]), np.exp(dt * a)


def describe(kf, kb, df, db, radius):
    rel = relative(kf, kb, df, db, radius)
    mag = np.abs(rel)
    span = mag.max() - mag.min()
    full = np.abs(relative(kf, kb, df, db, (len(kf) if kb is None else min(len(kf), len(kb))) - 1))
    c = len(full) // 2
    covered = np.array([full[c - m: c + m + 1].sum() for m in range(c + 1)])
    causal = {"backward": []} if kb is None else {}  # a causal layer has no backward kernel
    return {"relative": rel.tolist(), "scaled": ((mag - mag.min()) / span if span > 0 else 0 * mag).tolist(),
            "causal": kb is None, **causal,
            "response_forward": np.abs(np.fft.rfft(kf)).tolist(),
            "response_backward": [] if kb is None else np.abs(np.fft.rfft(kb)).tolist(),
            "effective_length": int(np.argmax(covered >= 0.9 * full.sum()))}


def kernels(f, res):
    radius = res["provenance"]["parameters"]["radius"]
    grp = res["provenance"]["parameters"].get("group", 0)  # the channel group analysed
    out = []
    for entry in res["layers"]:
        layer = entry["layer"]
        if res["source"] == "dump":
            g = f[f"kernels/{layer}"]
            if grp == 0:
                kf = g["forward"][()].astype(np.float64)
                kb = g["backward"][()].astype(np.float64) if "backward" in g else None  # None: causal
                df, db = float(g.attrs.get("D_forward", 0)), float(g.attrs.get("D_backward", 0))
            else:  # row grp of every group's kernels and skips
                kf, df = g["forward_groups"][grp].astype(np.float64), float(g["D_forward_groups"][grp])
                kb, db = ((g["backward_groups"][grp].astype(np.float64), float(g["D_backward_groups"][grp]))
                          if "backward_groups" in g else (None, 0.0))
            item = describe(kf, kb, df, db, radius)
        else:
            L = res["provenance"]["parameters"]["length"]
            kf, df, pf = s4d(f, f"params/layers.{layer - 1}.ssm_forward.", L, grp)
            backward = f"params/layers.{layer - 1}.ssm_backward."
            kb, db, pb = s4d(f, backward, L, grp) if backward + "A_re" in f else (None, 0.0, [])
            item = describe(kf, kb, df, db, radius)
            item["poles_forward"] = [[z.real, z.imag] for z in pf]
            item["poles_backward"] = [[z.real, z.imag] for z in pb]
        out.append({"layer": layer, **item})
    mixing = [{"layer": m["layer"], "matrix": f[f"mixing/{m['layer']}"][()].astype(np.float64).tolist()}
              for m in res.get("mixing", [])]
    return {"layers": out, "mixing": mixing}


def kernel_change(f, res, fb):
    p = res["provenance"]["parameters"]
    out = []
    for entry in res["layers"]:
        i = entry["layer"] - 1
        rel = {}
        grp = p.get("group", 0)
        for name, h in (("before", f), ("after", fb)):
            kf, df, _ = s4d(h, f"params/layers.{i}.ssm_forward.", p["length"], grp)
            backward = f"params/layers.{i}.ssm_backward."
            kb, db, _ = s4d(h, backward, p["length"], grp) if backward + "A_re" in h else (None, 0.0, None)
            rel[name] = (relative(kf, kb, df, db, p["radius"]), relative(kf, kb, df, db, p["length"] - 1))
        a, b = rel["before"][1], rel["after"][1]
        out.append({"layer": entry["layer"], "before": rel["before"][0].tolist(), "after": rel["after"][0].tolist(),
                    "change_score": float(np.linalg.norm(b - a) / np.linalg.norm(a))})
    return {"layers": out}


def flops(f, res):
    """ANALYSES.md §7 from a checkpoint's own tensors: P = every parameter of the blocks
    (/params/layers.*, i.e. without embeddings and heads), dense = 2·P·L, attention = 4·L²·d per
    attention layer, forward = dense + attention + mixing (mixing, the FFT convolution / scan term,
    is taken from the result: it is not a parameter count)."""
    config = json.loads(f["config"].attrs["json"])["model"]
    P = sum(int(np.prod(d.shape)) for name, d in f["params"].items() if name.startswith("layers."))
    attention = config["arch"] in ("bert", "gated_att")
    rows = []
    for row in res["rows"]:
        L = row["length"]
        att = 4.0 * L * L * config["d_model"] * config["n_layers"] if attention else 0.0
        rows.append({"length": L, "dense": 2.0 * P * L, "attention": att,
                     "forward": 2.0 * P * L + att + row["mixing"],
                     "forward_backward": 3 * (2.0 * P * L + att + row["mixing"])})
    return {"non_embedding_parameters": float(P), "rows": rows}


def induction_heads(f, res):
    """The induction circuit's two heads (analysis/induction_heads.hpp), per layer with attention:
    the copied symbol (after the first marker) -> the marker before it, and the query (the last
    marker) -> the copied symbol; the heads' mean; averaged over examples with two markers."""
    marker = res["provenance"]["parameters"]["marker"]
    vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][()]]
    m = vocab.index(marker)
    tokens, lengths = f["data/tokens"][()], f["data/lengths"][()]
    out = []
    for name in sorted(f["layers"], key=int):
        g = f["layers"][name]
        k = f["kernels"].get(name) if "kernels" in f else None
        ssm = ("attention" not in g and k is not None and "backward" not in k
               and "gates" in g and "u_f" in g["gates"])
        if "attention" in g:
            probs = g["attention"][()].astype(np.float64).mean(axis=1)  # [S, L, L], the heads' mean
        elif ssm:
            # A causal SSM layer: its gated implicit attention, mean_c |A_c[t, s] u_c[s]| with
            # A_c[t, s] = K_g(c)[t - s] (+ D_g(c) at s = t) for s <= t, each row divided by its sum.
            if "forward_groups" in k:
                K, D = k["forward_groups"][()].astype(np.float64), k["D_forward_groups"][()]
            else:
                K, D = k["forward"][()].astype(np.float64)[None, :], np.array([k.attrs.get("D_forward", 0.0)])
            u = np.abs(g["gates"]["u_f"][()].astype(np.float64))  # [S, L, d]
            per = u.shape[2] // K.shape[0]
            Kc = np.repeat(K, per, axis=0)  # [d, Lk], channel c's kernel
            Dc = np.repeat(D, per)
            S, L = u.shape[0], u.shape[1]
            probs = np.zeros((S, L, L))
            for t in range(L):
                for s in range(t + 1):
                    a = Kc[:, t - s] + (Dc if s == t else 0.0)  # [d]
                    probs[:, t, s] = (np.abs(a)[None, :] * u[:, s, :]).mean(axis=1)
            probs /= np.maximum(probs.sum(axis=2, keepdims=True), 1e-300)
        else:
            continue
        rows = g["example_index"][()] if "example_index" in g else np.arange(probs.shape[0])
        acc = np.zeros(6)
        n = 0
        for r, ex in enumerate(rows):
            at = np.nonzero(tokens[ex, :lengths[ex]] == m)[0]
            if len(at) < 2 or at[0] + 1 >= at[-1]:
                continue
            first, query = int(at[0]), int(at[-1])
            copied = first + 1
            prev, ind = probs[r, copied, :copied + 1], probs[r, query, :query + 1]
            acc += [prev[first], 1 / (copied + 1), np.argmax(prev) == first,
                    ind[copied], 1 / (query + 1), np.argmax(ind) == copied]
            n += 1
        acc /= n
        out.append({"layer": int(name), "heads": int(g["attention"].shape[1]) if "attention" in g else 0,
                    "source": "attention" if "attention" in g else "gated convolution",
                    **dict(zip(["previous_token", "previous_uniform", "previous_largest",
                                "induction", "induction_uniform", "induction_largest"],
                               map(float, acc)))})
    return {"marker": marker, "examples": n, "layers": out}


def main():
    kind, dump, result_path, out_path = sys.argv[1:5]
    fb = h5py.File(sys.argv[5], "r") if len(sys.argv) > 5 else None
    with open(result_path) as fh:
        results = json.load(fh)["results"]
    fn = {"anisotropy": anisotropy, "pca": pca, "transitions": transitions, "gates": gates, "kernels": kernels, "flops": flops,
          "induction-heads": induction_heads}
    with h5py.File(dump, "r") as f:
        if kind == "length-accuracy":
            out = [length_accuracy(f, r, fb) for r in results]
        elif kind == "kernel-change":
            out = [kernel_change(f, r, fb) for r in results]
        else:
            out = [fn[kind](f, r) for r in results]
    def no_nan(v):  # numpy's mean over nothing is NaN; JSON has null for "no value"
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, dict):
            return {k: no_nan(x) for k, x in v.items()}
        if isinstance(v, list):
            return [no_nan(x) for x in v]
        return v

    with open(out_path, "w") as fh:
        json.dump({"results": no_nan(out)}, fh, allow_nan=False)


if __name__ == "__main__":
    main()
