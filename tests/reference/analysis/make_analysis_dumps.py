#!/usr/bin/python3
"""Writes the small dumps (DUMP_FORMAT.md v1, with h5py alone) that the analysis tests read.

    make_analysis_dumps.py OUT_DIR

random.dump.h5        S=60, L=24, d=16; layers 0..3 (layer 2 float16, layer 3 has a sentence dataset
                      and stores 40 of the 60 examples via example_index); labels, predictions,
                      attribute "gap", text, gates on layer 1, kernels on layers 1 and 2, mixing on 1
random_b.dump.h5      the same examples, another model's predictions (length-accuracy comparison)
shuffled.dump.h5      other examples (lengths permuted): comparing it with random.dump.h5 must fail
equal.dump.h5         every token vector equal: every cosine is 1
orthogonal.dump.h5    sentence i's tokens all equal to basis vector e_i: every cosine is 0
rank.dump.h5          sentence token matrices of rank k ∈ {1, 2, 3, 5} with equal variance per
                      component: k(p) = k for every p ≤ 0.98 (stored in attribute "rank")
nan.dump.h5           random.dump.h5's layer 0 with a NaN in example 7
nolabels.dump.h5      no labels or predictions
zerolength.dump.h5    /data/lengths holds a 0
unlabelled.dump.h5    random.dump.h5's layer 0 with every seventh label -1 (unlabelled)
scaled.dump.h5        random.dump.h5's layer 0 scaled: layer 0 by 2^-140 (float32 subnormals near 1e-42,
                      whose squares underflow in float), layer 1 by 2^120 (near 1e36, whose squares
                      overflow in float)
zeroed.dump.h5        random.dump.h5's layer 0 with layer 1 all zeros (no vector has a cosine)
single.dump.h5        one example (random.dump.h5's third, length L): the global PCA pools one vector
foreign_slstm.dump.h5 arch "slstm" with a gate 'i' uniform on [0, 1], mostly outside the softmax range
"""
import os
import sys

import h5py
import numpy as np


def write_dump(path, hidden, lengths, labels=None, predictions=None, extra=None, dtype=np.float32):
    """hidden: {layer: array [S or S', L, d]}; extra(f) adds anything else."""
    S = len(lengths)
    some = next(iter(hidden.values()))
    L, d = some.shape[1], some.shape[2]
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "routescope-dump"
        f.attrs["format_version"] = 1
        f.attrs["producer"] = "tests/reference/analysis/make_analysis_dumps.py (h5py)"
        f.attrs["created"] = "2026-01-01T00:00:00Z"
        m = f.create_group("model")
        m.attrs["arch"] = "external"
        m.attrs["name"] = os.path.basename(path)
        m.attrs["n_layers"] = max(hidden) if hidden else 0
        m.attrs["d_model"] = d
        tokens = np.zeros((S, L), np.int32)
        rng = np.random.default_rng(1)
        for i, n in enumerate(lengths):
            tokens[i, : max(n, 0)] = rng.integers(5, 50, size=max(n, 0))
        f["data/tokens"] = tokens
        f["data/lengths"] = np.asarray(lengths, np.int32)
        if labels is not None:
            f["data/labels"] = np.asarray(labels, np.int32)
        if predictions is not None:
            f["data/predictions"] = np.asarray(predictions, np.int32)
        for layer, h in hidden.items():
            f.create_dataset(f"layers/{layer}/hidden", data=h.astype(dtype), chunks=(1, L, d))
        if extra:
            extra(f)


def random_dumps(out):
    rng = np.random.default_rng(20240501)
    S, L, d = 60, 24, 16
    lengths = rng.integers(1, L + 1, size=S)
    lengths[:3] = [1, 2, L]
    lengths[10:16] = 12  # an exact-length group
    common = rng.normal(size=d)  # a shared direction: anisotropic like real hidden states
    hidden = {}
    for layer in range(4):
        h = rng.normal(size=(S, L, d)) + (0.5 + 0.5 * layer) * common
        for i, n in enumerate(lengths):
            h[i, n:] = 0.0  # padding
        hidden[layer] = h
    stored = np.sort(rng.choice(S, size=40, replace=False))
    labels = rng.integers(0, 3, size=S)
    predictions = np.where(rng.random(S) < 0.7, labels, rng.integers(0, 3, size=S))
    predictions_b = np.where(rng.random(S) < 0.6, labels, rng.integers(0, 3, size=S))
    gap = rng.integers(0, 20, size=S).astype(np.float64)
    texts = [f"example {i} of length {n}" for i, n in enumerate(lengths)]

    def extras(f, with_text=True):
        del f["layers/3/hidden"]
        f.create_dataset("layers/3/hidden", data=hidden[3][stored].astype(np.float32), chunks=(1, L, d))
        f["layers/3/example_index"] = stored.astype(np.int32)
        f["layers/3/sentence"] = rng.normal(size=(len(stored), d)).astype(np.float32) + common.astype(np.float32)
        del f["layers/2/hidden"]
        f.create_dataset("layers/2/hidden", data=hidden[2].astype(np.float16), chunks=(1, L, d))
        f["data/attributes/gap"] = gap
        if with_text:
            f.create_dataset("data/text", data=texts, dtype=h5py.string_dtype())
        g = rng.random(size=(S, L, 4))
        f.create_dataset("layers/1/gates/f", data=(0.5 + 0.5 * g).astype(np.float32), chunks=(1, L, 4))
        f.create_dataset("layers/1/gates/i", data=g.astype(np.float32), chunks=(1, L, 4))
        for layer in (1, 2):
            t = np.arange(L)
            f[f"kernels/{layer}/forward"] = (np.exp(-t / (2.0 * layer)) * np.cos(t)).astype(np.float32)
            f[f"kernels/{layer}/backward"] = (0.5 * np.exp(-t / 3.0)).astype(np.float32)
            f[f"kernels/{layer}"].attrs["D_forward"] = 1.0
            f[f"kernels/{layer}"].attrs["D_backward"] = 0.5
        f["mixing/1"] = rng.normal(size=(L, L)).astype(np.float32)

    write_dump(os.path.join(out, "random.dump.h5"), hidden, lengths, labels, predictions, extras)
    write_dump(os.path.join(out, "random_b.dump.h5"), hidden, lengths, labels, predictions_b, extras)
    write_dump(os.path.join(out, "shuffled.dump.h5"), hidden, lengths[::-1].copy(), labels[::-1].copy(),
               predictions[::-1].copy())
    write_dump(os.path.join(out, "nolabels.dump.h5"), {0: hidden[0]}, lengths)
    bad = hidden[0].copy()
    bad[7, 0, 3] = np.nan
    write_dump(os.path.join(out, "nan.dump.h5"), {0: bad}, lengths, labels, predictions)
    zero = lengths.copy()
    zero[5] = 0
    write_dump(os.path.join(out, "zerolength.dump.h5"), {0: hidden[0]}, zero, labels, predictions)
    # Every seventh example unlabelled (-1, as dump writes a test split without answers); no draw
    # from rng, so the files above stay as they were.
    partly = labels.copy()
    partly[::7] = -1
    write_dump(os.path.join(out, "unlabelled.dump.h5"), {0: hidden[0]}, lengths, partly, predictions)
    # Extreme scales (no draw from rng): the stored float32 values are what the reference reads.
    write_dump(os.path.join(out, "scaled.dump.h5"),
               {0: hidden[0] * 2.0 ** -140, 1: hidden[0] * 2.0 ** 120}, lengths)
    write_dump(os.path.join(out, "zeroed.dump.h5"), {0: hidden[0], 1: np.zeros_like(hidden[0])}, lengths)

    # One sentence: the global PCA's pooled sample is one vector, without variance once centred.
    write_dump(os.path.join(out, "single.dump.h5"), {0: hidden[0][2:3]}, lengths[2:3])

    # arch slstm, but gate 'i' uniform on [0, 1] rather than the S-LSTM softmax's share: most values
    # lie outside the softmax's fixed histogram range [1/(1+4e), e/(e+4)].
    def foreign_gates(f):
        f["model"].attrs["arch"] = "slstm"
        f.create_dataset("layers/0/gates/i", data=rng.random((S, L, 4)).astype(np.float32))

    write_dump(os.path.join(out, "foreign_slstm.dump.h5"), {0: hidden[0]}, lengths, extra=foreign_gates)


def closed_form_dumps(out):
    rng = np.random.default_rng(7)
    S, L, d = 30, 10, 8
    lengths = rng.integers(1, L + 1, size=S)
    v = rng.normal(size=d)
    equal = np.broadcast_to(v, (S, L, d)).copy()
    write_dump(os.path.join(out, "equal.dump.h5"), {0: equal}, lengths)

    S = d = 16
    ortho = np.zeros((S, L, d))
    for i in range(S):
        ortho[i, :, i] = 1.0 + i  # any token of sentence i is a multiple of e_i
    write_dump(os.path.join(out, "orthogonal.dump.h5"), {0: ortho}, rng.integers(1, L + 1, size=S))

    S, L, d = 12, 40, 32
    ranks = np.array([1, 2, 3, 5] * 3)
    lengths = np.array([40, 30, 20, 12] * 3)
    h = np.zeros((S, L, d))
    for i, (k, n) in enumerate(zip(ranks, lengths)):
        u = rng.normal(size=(n, k))
        u -= u.mean(axis=0)
        q, _ = np.linalg.qr(u)  # orthonormal, centred columns
        vt, _ = np.linalg.qr(rng.normal(size=(d, k)))
        h[i, :n] = 3.0 * q @ vt.T + rng.normal(size=d)  # equal σ per component, plus a mean row

    def extras(f):
        f["data/attributes/rank"] = ranks.astype(np.float64)

    write_dump(os.path.join(out, "rank.dump.h5"), {0: h}, lengths, extra=extras)


def ssm_checkpoints(out):
    """Two checkpoints holding only what the kernel analyses read: /params/layers.<i>.ssm_*."""
    rng = np.random.default_rng(99)
    N = 8

    def write(path, shift):
        with h5py.File(path, "w") as f:
            f.attrs["format"] = "routescope-checkpoint"
            f.attrs["format_version"] = 1
            f.attrs["producer"] = "make_analysis_dumps.py"
            f.attrs["created"] = "2026-01-01T00:00:00Z"
            for i in range(2):
                for direction in ("forward", "backward"):
                    base = f"params/layers.{i}.ssm_{direction}."
                    r = np.random.default_rng(1000 + 10 * i + (direction == "forward"))
                    f[base + "A_re"] = np.full((1, N), -0.5 + shift, np.float32)
                    f[base + "A_im"] = (np.pi * np.arange(N)[None, :]).astype(np.float32)
                    f[base + "C"] = r.normal(0, np.sqrt(0.5), size=(1, N, 2)).astype(np.float32)
                    f[base + "D"] = np.ones(1, np.float32)
                    f[base + "log_step"] = np.log(r.uniform(0.01, 1.0, size=1)).astype(np.float32)

    write(os.path.join(out, "before.ckpt.h5"), 0.0)
    write(os.path.join(out, "after.ckpt.h5"), -0.2)
    del rng


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    random_dumps(out)
    closed_form_dumps(out)
    ssm_checkpoints(out)


if __name__ == "__main__":
    main()
