#!/usr/bin/python3
"""Benchmark of `analyze similarity` (linear CKA, every layer pair) beside numpy on the same sample.

    bench_similarity.py --cli build/bin/routescope-cli --work /tmp/bench-sim \\
        [--sentences 3000] [--length 128] [--d 768] [--layers 13] [--m 100000] [--threads 2]

Writes two float16 dumps (A, and B = a noisy rotation of A's layers) of `--sentences` examples of
`--length` tokens each with h5py (kept in --work and reused), runs the CLI under /usr/bin/time -v
(wall time and peak memory), then computes linear CKA of every layer pair in numpy (float64,
X̃ᵀỸ on the CLI's own sample, read from its JSON) and prints both, with the largest relative
difference. A benchmark run by hand (docs/benchmarks.md), not a test.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np


def write_dump(path, layers, S, L, d, seed, rotate_from=None):
    rng = np.random.default_rng(seed)
    with h5py.File(path + ".tmp", "w") as f:
        f.attrs["format"] = "routescope-dump"
        f.attrs["format_version"] = 1
        f.attrs["producer"] = "tests/reference/analysis/bench_similarity.py (h5py)"
        f.attrs["created"] = "2026-11-25T00:00:00Z"
        m = f.create_group("model")
        m.attrs["arch"] = "external"
        m.attrs["name"] = os.path.basename(path)
        m.attrs["n_layers"] = layers - 1
        m.attrs["d_model"] = d
        tokens = np.random.default_rng(7).integers(5, 1000, size=(S, L)).astype(np.int32)
        f["data/tokens"] = tokens
        f["data/lengths"] = np.full(S, L, np.int32)
        basis = np.random.default_rng(11).normal(size=(d, d)).astype(np.float32) / np.sqrt(d)
        q = np.linalg.qr(rng.normal(size=(d, d)))[0].astype(np.float32)
        for layer in range(layers):
            ds = f.create_dataset(f"layers/{layer}/hidden", shape=(S, L, d), dtype=np.float16,
                                  chunks=(1, L, d))
            lrng = np.random.default_rng(1000 + layer)  # the same signal in both dumps
            nrng = np.random.default_rng(seed * 100 + layer)
            for s0 in range(0, S, 256):
                s1 = min(S, s0 + 256)
                z = lrng.standard_normal(size=(s1 - s0, L, d), dtype=np.float32) @ basis
                if rotate_from is not None:
                    z = z @ q + 0.5 * nrng.standard_normal(size=z.shape, dtype=np.float32)
                ds[s0:s1] = z.astype(np.float16)
    os.replace(path + ".tmp", path)


def vectors(path, layer, examples, positions):
    with h5py.File(path, "r") as f:
        h = f[f"layers/{layer}/hidden"]
        out = np.empty((len(examples), h.shape[2]), np.float64)
        # Whole rows of the sampled examples, then the sampled positions.
        order = np.argsort(examples, kind="stable")
        ex = examples[order]
        starts = np.flatnonzero(np.r_[True, ex[1:] != ex[:-1]])
        ends = np.r_[starts[1:], len(ex)]
        for a, b in zip(starts, ends):
            row = h[ex[a]]
            out[order[a:b]] = row[positions[order[a:b]]]
        return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--sentences", type=int, default=3000)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--layers", type=int, default=13)
    p.add_argument("--m", type=int, default=100000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--skip-numpy", action="store_true")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tag = f"{args.sentences}x{args.length}x{args.d}x{args.layers}"
    a = os.path.join(args.work, f"a-{tag}.dump.h5")
    b = os.path.join(args.work, f"b-{tag}.dump.h5")
    for path, seed, rot in ((a, 1, None), (b, 2, True)):
        if not os.path.exists(path):
            t = time.time()
            write_dump(path, args.layers, args.sentences, args.length, args.d, seed, rot)
            print(f"wrote {path} in {time.time() - t:.1f} s", flush=True)
    out = os.path.join(args.work, "similarity.json")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    load_before = os.getloadavg()
    cmd = ["/usr/bin/time", "-v", args.cli, "analyze", "similarity", "--dump", a, "--dump", b,
           "--measures", "linear_cka", "--max-vectors", str(args.m), "--out", out]
    t = time.time()
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.time() - t
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        sys.exit(1)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    # The vectors the analysis used: --max-vectors caps them at what the dumps hold.
    n_used = json.load(open(out))["results"][0].get("n", args.m)
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
    print(f"routescope: {wall:.1f} s wall, peak RSS {rss / 1024:.0f} MB "
          f"({args.layers} x {args.layers} pairs, N = {n_used}, d = {args.d}, "
          f"{args.threads} threads; with the Gram sample's null and bootstrap)", flush=True)
    if args.skip_numpy:
        return
    r = json.load(open(out))["results"][0]
    examples = np.asarray(r["sample"]["examples"])
    positions = np.asarray(r["sample"]["positions"])
    ours = np.asarray(r["measures"]["linear_cka"], dtype=np.float64)
    t_read = t_compute = 0.0
    ref = np.zeros_like(ours)
    norms_b, ys = {}, {}
    for i, la in enumerate(r["layers_a"]):
        t = time.time()
        x = vectors(a, la, examples, positions)
        t_read += time.time() - t
        t = time.time()
        x -= x.mean(0)
        nx = np.linalg.norm(x.T @ x)
        t_compute += time.time() - t
        for j, lb in enumerate(r["layers_b"]):
            t = time.time()
            y = vectors(b, lb, examples, positions)
            t_read += time.time() - t
            t = time.time()
            y -= y.mean(0)
            if j not in norms_b:
                norms_b[j] = np.linalg.norm(y.T @ y)
            ref[i, j] = np.linalg.norm(x.T @ y) ** 2 / (nx * norms_b[j])
            t_compute += time.time() - t
    rel = np.max(np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-3))
    print(f"numpy (float64, OpenBLAS {np.__version__}): {t_compute:.1f} s computing, "
          f"{t_read:.1f} s reading with h5py (B re-read per layer of A)")
    print(f"largest relative difference of linear CKA: {rel:.2e}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
