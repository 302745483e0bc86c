#!/usr/bin/python3
"""numpy baseline for the analysis benchmarks: the same computation on the same sample.

    bench_reference.py anisotropy DUMP SAMPLE.json     (token anisotropy, spectrum included)
    bench_reference.py pca DUMP SAMPLE.json            (k(p) per sentence via np.linalg.svd)
    bench_reference.py make-dump PATH S L D            (a float16 dump of random vectors, lengths 100..L)
"""
import json
import sys
import time

import h5py
import numpy as np


def main():
    kind = sys.argv[1]
    if kind == "make-dump":
        path, S, L, d = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        rng = np.random.default_rng(0)
        with h5py.File(path, "w") as f:
            f.attrs.update(format="routescope-dump", format_version=1, producer="bench_reference.py",
                           created="2026-01-01T00:00:00Z")
            m = f.create_group("model")
            m.attrs.update(arch="external", name="bench", n_layers=0, d_model=d)
            lengths = rng.integers(100, L + 1, size=S).astype(np.int32)
            f["data/tokens"] = np.ones((S, L), np.int32)
            f["data/lengths"] = lengths
            ds = f.create_dataset("layers/0/hidden", (S, L, d), np.float16, chunks=(1, L, d))
            common = rng.normal(size=d).astype(np.float32)
            for s0 in range(0, S, 100):
                block = rng.standard_normal((min(100, S - s0), L, d), dtype=np.float32) + common
                ds[s0:s0 + len(block)] = block.astype(np.float16)
        return
    path, sample_path = sys.argv[2], sys.argv[3]
    res = json.load(open(sample_path))
    t0 = time.perf_counter()
    with h5py.File(path, "r") as f:
        h = f["layers/0/hidden"]
        lengths = f["data/lengths"][()]
        if kind == "anisotropy":
            s = res["sample"]
            X = np.stack([h[r, t].astype(np.float32) for r, t in zip(s["rows"], s["tokens"])])
            t_read = time.perf_counter() - t0
            ev = np.linalg.eigh((X.T @ X).astype(np.float64))[0]
            pc1 = ev.max() / ev.sum()
            Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
            cos = (Xn @ Xn.T)[np.triu_indices(len(X), 1)]
            counts = np.histogram(cos, 100, (-1, 1))[0]
            stats = (cos.mean(), np.median(cos), cos.std(), (cos < 0).mean(), pc1, counts.sum())
        else:
            t_read = 0.0
            ks = []
            for r in res["sampled_rows"]:
                H = h[r, : lengths[r]].astype(np.float64)
                sv = np.linalg.svd(H - H.mean(0), compute_uv=False) ** 2
                cum = np.cumsum(sv) / sv.sum()
                ks.append([int(np.argmax(cum >= p)) + 1 for p in (0.9, 0.92, 0.94, 0.96, 0.98)])
            stats = np.mean(ks, axis=0).tolist()
    print(json.dumps({"kind": kind, "numpy_s": time.perf_counter() - t0, "read_s": t_read,
                      "check": str(stats)[:80]}))


if __name__ == "__main__":
    main()
