#!/usr/bin/python3
"""An imported BiGS's dump against the release's semantics (tests/reference/bigs_published.py).

The release (FlaxBiGS and its PyTorch port) runs only rows of exactly max_position_embeddings
tokens: its bidirectional SSM reads the padding, so a short sentence's hidden states are those of
its row padded to Lmax. This reads a dump written by `routescope-cli dump --checkpoint IMPORTED
--data TEXT --dtype f32` and the model directory it was imported from (config.json and
pytorch_model.bin), pads each example's ids to Lmax with [PAD] = 0 (token type 0), runs the
reference encoder in float64 and compares every dumped layer's hidden states at the real
positions. Exit 0 and PASS when they agree within --tol (relative to the largest value), else
exit 1 and FAIL with the worst layer.

Usage: check_imported_dump.py DUMP MODEL_DIR [--tol 1e-4]
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import bigs_published  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("model_dir")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    with open(os.path.join(a.model_dir, "config.json")) as f:
        config = json.load(f)
    lmax = config["max_position_embeddings"]
    sd = torch.load(os.path.join(a.model_dir, "pytorch_model.bin"), weights_only=True)
    sd = bigs_published.as_float64(sd)
    with h5py.File(a.dump, "r") as h:
        tokens = h["data/tokens"][()]
        lengths = h["data/lengths"][()]
        layers = sorted(int(k) for k in h["layers"].keys())
        hidden = {l: h[f"layers/{l}/hidden"][()].astype(np.float64) for l in layers}
    S, L = tokens.shape
    ids = np.zeros((S, lmax), np.int64)
    ids[:, :L] = tokens
    with torch.no_grad():
        ref = reference_layers(sd, config, torch.from_numpy(ids))
    worst = (0.0, None)
    real = np.arange(L)[None, :] < lengths[:, None]
    for l in layers:
        want = ref[l][:, :L][real]
        got = hidden[l][real]
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        print(f"layer {l}: max|dump - release| / max|release| = {err:.3g}")
        worst = max(worst, (err, l), key=lambda t: t[0])
    print(f"rows of the dump: {L} (Lmax {lmax})")
    if worst[0] > a.tol:
        print(f"FAIL: layer {worst[1]} differs from the release by {worst[0]:.3g} (> {a.tol})")
        return 1
    print("PASS")
    return 0


def reference_layers(sd, config, input_ids):
    """Every layer's hidden states [S, Lmax, d] of the release's encoder (0 = the embeddings)."""
    out = []
    orig = bigs_published.bigs_layer

    def tap(sd_, i, h, eps):
        h2 = orig(sd_, i, h, eps)
        out.append(h2.numpy())
        return h2

    types = torch.zeros_like(input_ids)
    # The embeddings (layer 0): the encoder with no layers.
    n = config["num_hidden_layers"]
    emb = bigs_published.encoder(sd, dict(config, num_hidden_layers=0), input_ids, types)
    bigs_published.bigs_layer = tap
    try:
        bigs_published.encoder(sd, config, input_ids, types)
    finally:
        bigs_published.bigs_layer = orig
    assert len(out) == n
    return [emb.numpy()] + out


if __name__ == "__main__":
    sys.exit(main())
