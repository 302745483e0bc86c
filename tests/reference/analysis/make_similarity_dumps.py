#!/usr/bin/python3
"""Writes the small dumps (DUMP_FORMAT.md v1, with h5py alone) that the similarity test reads.

    make_similarity_dumps.py OUT_DIR

Every dump's padding positions (t >= length) hold 1e3 in every component, so a reader that takes a
padding vector (a token sample, or a sentence mean over L instead of the length) is caught at once.
Token vectors have structure: a per-example and a per-token low-rank signal with decreasing
singular values, a nonzero mean and isotropic noise, so the covariances are full rank and CCA is
well conditioned at both the token level (~900 vectors) and the sentence level (80 vectors).

a.dump.h5              S=80, L=20, d=24; layers 0, 1 (stored float16), 2; tokens and lengths
same.dump.h5           a's hidden states (same dtypes, same values), another model name
rotated.dump.h5        layer l = a's layer l (as stored) @ Q + c, Q a random orthogonal 24x24, c a
                       constant row; layer 2 also scaled by 3.7; stored float32
noise.dump.h5          independent random vectors, d = 16, layers 0..3; a's tokens and lengths; the
                       example means do not depend on the length (see below)
other_examples.dump.h5 a's hidden states, but example 17's token ids and example 53's length (and
                       tokens) differ: comparing it with a.dump.h5 must fail
missing_layer.dump.h5  a with layers 0 and 2 only
tiny.dump.h5           S=3, L=6, d=32, layers 0 and 1, 15 real tokens: fewer vectors than dimensions
"""
import os
import sys

import h5py
import numpy as np

PAD = 1e3
OTHER_EXAMPLES = (17, 53)  # the examples of other_examples.dump.h5 that differ from a.dump.h5


def write_dump(path, hidden, tokens, lengths, dtypes=None, name=None):
    """hidden: {layer: array [S, L, d]} (padding already filled); dtypes: {layer: numpy dtype}."""
    dtypes = dtypes or {}
    S, L = tokens.shape
    d = next(iter(hidden.values())).shape[2]
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["format"] = "routescope-dump"
        f.attrs["format_version"] = 1
        f.attrs["producer"] = "tests/reference/analysis/make_similarity_dumps.py (h5py)"
        f.attrs["created"] = "2026-01-01T00:00:00Z"
        m = f.create_group("model")
        m.attrs["arch"] = "external"
        m.attrs["name"] = name or os.path.basename(path)
        m.attrs["n_layers"] = max(hidden)
        m.attrs["d_model"] = d
        f["data/tokens"] = np.asarray(tokens, np.int32)
        f["data/lengths"] = np.asarray(lengths, np.int32)
        for layer, h in sorted(hidden.items()):
            assert h.shape == (S, L, d), (layer, h.shape)
            f.create_dataset(f"layers/{layer}/hidden", data=h.astype(dtypes.get(layer, np.float32)),
                             chunks=(1, L, d))
    os.replace(tmp, path)


def pad(h, lengths):
    h = h.copy()
    for i, n in enumerate(lengths):
        h[i, n:] = PAD
    return h


def make_tokens(rng, lengths, L):
    tokens = np.zeros((len(lengths), L), np.int32)
    for i, n in enumerate(lengths):
        tokens[i, :n] = rng.integers(5, 50, size=n)
    return tokens


def structured_layers(rng, S, L, d, layers, r=6):
    """Layers sharing a latent signal (so neighbouring layers are similar but not equal)."""
    z_example = rng.normal(size=(S, 1, r))
    z_token = rng.normal(size=(S, L, r))
    out = {}
    for layer in layers:
        drift = rng.normal(size=(S, L, r)) * (0.3 * layer)
        z = 0.8 * z_example + z_token + drift
        u, _ = np.linalg.qr(rng.normal(size=(d, r)))
        w = (np.linspace(5.0, 1.0, r)[:, None] * u.T)  # [r, d], singular values 5..1
        mean = rng.normal(size=d) * (1.0 + layer)
        scales = np.linspace(0.2, 0.5, d)  # anisotropic noise
        out[layer] = mean + z @ w + rng.normal(size=(S, L, d)) * scales
    return out


def stored(h, dtype):
    """The values a reader gets back from a dataset of this dtype, as float64."""
    return h.astype(dtype).astype(np.float64)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20260117)

    # a
    S, L, d = 80, 20, 24
    lengths = rng.integers(3, L + 1, size=S)
    lengths[:3] = [1, 2, L]
    tokens = make_tokens(rng, lengths, L)
    dtypes = {1: np.float16}
    raw = structured_layers(rng, S, L, d, (0, 1, 2))
    a = {l: pad(stored(h, dtypes.get(l, np.float32)), lengths) for l, h in raw.items()}
    write_dump(os.path.join(out, "a.dump.h5"), a, tokens, lengths, dtypes)
    write_dump(os.path.join(out, "same.dump.h5"), a, tokens, lengths, dtypes, name="same-model")

    # rotated: a's stored values @ Q + c (layer 2 × 3.7), stored float32
    q, rr = np.linalg.qr(rng.normal(size=(d, d)))
    q = q * np.sign(np.diag(rr))
    c = rng.normal(size=d) * 2.0
    rotated = {}
    for l, h in a.items():
        v = h @ q + c
        if l == 2:
            v = 3.7 * v
        rotated[l] = pad(v, lengths)
    write_dump(os.path.join(out, "rotated.dump.h5"), rotated, tokens, lengths, name="rotated-model")

    # noise: independent, d = 16, layers 0..3
    dn = 16
    noise = {}
    for l in range(4):
        # token = the example's own random mean + residuals centred over its real tokens, so that
        # neither the token nor the sentence vectors depend on the length (a's sentence means do:
        # their spread shrinks as 1/length; a length-dependent spread on both sides is a real
        # dependence that CKA's permutation test detects)
        centre_ = rng.normal(size=dn) + rng.normal(size=(S, 1, dn)) * np.linspace(0.5, 2.0, dn)
        resid = rng.normal(size=(S, L, dn)) * np.linspace(2.0, 0.5, dn)
        for i, n in enumerate(lengths):
            resid[i, :n] -= resid[i, :n].mean(axis=0)
        noise[l] = pad(centre_ + resid, lengths)
    write_dump(os.path.join(out, "noise.dump.h5"), noise, tokens, lengths, name="noise-model")

    # other_examples: example 17's tokens differ, example 53 is one token shorter (and a token differs)
    e1, e2 = OTHER_EXAMPLES
    t2, l2 = tokens.copy(), lengths.copy()
    t2[e1, 0] = 4 if t2[e1, 0] != 4 else 3
    l2[e2] = max(1, l2[e2] - 1)
    t2[e2, l2[e2]:] = 0
    t2[e2, 0] = 4 if t2[e2, 0] != 4 else 3
    write_dump(os.path.join(out, "other_examples.dump.h5"), {l: pad(h, l2) for l, h in a.items()}, t2, l2,
               dtypes, name="other-examples")

    # missing_layer: a's layers 0 and 2
    write_dump(os.path.join(out, "missing_layer.dump.h5"), {0: a[0], 2: a[2]}, tokens, lengths, dtypes,
               name="missing-layer")

    # tiny: 15 real tokens of d = 32
    St, Lt, dt = 3, 6, 32
    lt = np.array([6, 5, 4])
    tiny = {l: pad(rng.normal(size=(St, Lt, dt)) + rng.normal(size=dt), lt) for l in (0, 1)}
    write_dump(os.path.join(out, "tiny.dump.h5"), tiny, make_tokens(rng, lt, Lt), lt, name="tiny")


if __name__ == "__main__":
    main()
