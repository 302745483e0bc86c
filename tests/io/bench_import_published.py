#!/usr/bin/python3
"""Issue 16: a published-size synthetic BiGS imports within the stated time and memory, and dumps
16 sequences on the CPU (docs/benchmarks.md, "Importing a published-size BiGS").

1. Writes a synthetic BiGS in the release's PyTorch layout (MODELS.md: 23 GATED layers, d 1024,
   I 3072, N 64, V 30522, Lmax 512; 346.7M parameters, the port's `bigs.*` / `cls.*` names) as
   DIR/model.safetensors (streamed: one tensor in memory at a time) with config.json and a
   30522-entry vocab.txt; with --flax also DIR_flax/flax_model.msgpack (flax.serialization's
   layout, msgpack by hand, streamed the same way).
2. `routescope-cli import` under /usr/bin/time -v: wall time < --max-seconds (10) and peak RSS <
   --max-rss-ratio (2) x the weights file.
3. `routescope-cli dump` of 16 sequences of --length 128 on the CPU, then `validate` of the dump.

Prints the load average before and after and one JSON summary as its last line; exit 0 when every
limit holds, 1 otherwise. The engine's figures depend on the machine: run it alone.

Usage: bench_import_published.py --cli build/bin/routescope-cli --work DIR [--flax] [--keep]
       [--layers 23 --d-model 1024 --vocab 30522 ...]  (smaller sizes: a quick check of the script)
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

import numpy as np


def bigs_tensors(layers, d, inner, n_modes, vocab, max_len):
    """(name, shape, kind) of the release's PyTorch port, in its order (MODELS.md)."""
    out = [("bigs.embeddings.word_embeddings.weight", (vocab, d), "w"),
           ("bigs.embeddings.position_embeddings.weight", (max_len, d), "w"),
           ("bigs.embeddings.token_type_embeddings.weight", (2, d), "w"),
           ("bigs.embeddings.LayerNorm.weight", (d,), "one"),
           ("bigs.embeddings.LayerNorm.bias", (d,), "zero")]
    for i in range(layers):
        p = f"bigs.encoder.layer.{i}."
        out += [(p + "LayerNorm.weight", (d,), "one"), (p + "LayerNorm.bias", (d,), "zero")]
        for lin, (o, n) in (("dv", (inner, d)), ("du_forward", (d, d)), ("du_backward", (d, d)),
                            ("duc_forward", (d, d)), ("duc_backward", (d, d)),
                            ("dol", (inner, d)), ("do", (d, inner))):
            out += [(p + lin + ".weight", (o, n), "w"), (p + lin + ".bias", (o,), "zero")]
        for s in ("fs4", "bs4"):
            out += [(p + s + ".kernel.A_re", (n_modes,), "a_re"),
                    (p + s + ".kernel.A_im", (n_modes,), "a_im"),
                    (p + s + ".kernel.C", (n_modes, 2), "c"),
                    (p + s + ".kernel.log_step", (1,), "log_step"),
                    (p + s + ".D", (1,), "one")]
    out += [("cls.predictions.transform.dense.weight", (d, d), "w"),
            ("cls.predictions.transform.dense.bias", (d,), "zero"),
            ("cls.predictions.transform.LayerNorm.weight", (d,), "one"),
            ("cls.predictions.transform.LayerNorm.bias", (d,), "zero"),
            ("cls.predictions.bias", (vocab,), "zero")]
    return out


def values(kind, shape, rng):
    if kind == "w":
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02))
    if kind == "one":
        return np.ones(shape, np.float32)
    if kind == "zero":
        return np.zeros(shape, np.float32)
    if kind == "a_re":
        return np.full(shape, -0.5, np.float32)
    if kind == "a_im":
        return (np.pi * np.arange(shape[0])).astype(np.float32)  # the "lin" init
    if kind == "c":
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(0.5))
    if kind == "log_step":
        return rng.uniform(np.log(1e-3), np.log(1e-1), shape).astype(np.float32)
    raise ValueError(kind)


def write_safetensors(path, tensors, seed):
    """Header first (offsets from the shapes), then each tensor generated and written in turn."""
    header, offset = {}, 0
    for name, shape, _ in tensors:
        nbytes = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape, kind in tensors:
            f.write(values(kind, shape, rng).astype("<f4").tobytes())


def mp_str(s):
    b = s.encode()
    return (bytes([0xa0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b


def mp_map_header(n):
    return bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)


def mp_array(shape, raw):
    """ExtType 1 of msgpack (shape, "float32", raw bytes): flax.serialization's ndarray."""
    shape_b = (bytes([0x90 | len(shape)]) +
               b"".join(struct.pack(">BI", 0xce, s) for s in shape))
    bin_b = b"\xc6" + struct.pack(">I", len(raw))
    payload_head = b"\x93" + shape_b + mp_str("float32") + bin_b
    n = len(payload_head) + len(raw)
    return b"\xc9" + struct.pack(">Ib", n, 1) + payload_head, raw


def write_flax(path, tensors, seed):
    """The same model as flax_model.msgpack (s4_bert/…; Dense kernels [in, out]), streamed."""
    tree = {}
    for name, shape, kind in tensors:
        parts = name.split(".")
        if parts[0] == "bigs":
            parts[0] = "s4_bert"
        if parts[-2:] in (["kernel", "A_re"], ["kernel", "A_im"], ["kernel", "C"],
                          ["kernel", "log_step"]):
            parts = parts[:-2] + parts[-1:]
        leaf = parts[-1]
        if leaf == "weight":
            parent = parts[-2]
            leaf = ("embedding" if parent.endswith("embeddings") else
                    "scale" if parent == "LayerNorm" else "kernel")
        node = tree
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[leaf] = (shape, kind, leaf == "kernel")
    rng = np.random.default_rng(seed)

    def emit(f, node):
        f.write(mp_map_header(len(node)))
        for k, v in node.items():
            f.write(mp_str(k))
            if isinstance(v, dict):
                emit(f, v)
                continue
            shape, kind, transpose = v
            a = values(kind, shape, rng)
            if transpose:
                a = np.ascontiguousarray(a.T)
            head, raw = mp_array(a.shape, a.astype("<f4").tobytes())
            f.write(head)
            f.write(raw)

    with open(path, "wb") as f:
        emit(f, tree)


def write_model_dir(d, args, flax=False):
    os.makedirs(d, exist_ok=True)
    tensors = bigs_tensors(args.layers, args.d_model, 3 * args.d_model, args.n_modes, args.vocab,
                           args.max_len)
    config = {"architectures": ["BiGSForMaskedLM"], "model_type": "BiGS",
              "vocab_size": args.vocab, "hidden_size": args.d_model,
              "num_hidden_layers": args.layers, "intermediate_size": 3 * args.d_model,
              "num_ssm": args.n_modes, "max_position_embeddings": args.max_len,
              "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
              "pre_norm": True, "pooler_type": "non_padding_mean", "pad_token_id": 0}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        specials = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + \
            ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        words = [f"w{i}" for i in range(args.vocab - len(specials))]
        f.write("\n".join(specials + words) + "\n")
    weights = os.path.join(d, "flax_model.msgpack" if flax else "model.safetensors")
    (write_flax if flax else write_safetensors)(weights, tensors, args.seed)
    n_params = sum(int(np.prod(s)) for _, s, _ in tensors)
    return weights, n_params


def timed(cmd):
    """(exit code, wall seconds, max RSS bytes, stdout, stderr) of cmd under /usr/bin/time -v."""
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)",
                     r.stderr)
    h, m, s = (float(x or 0) for x in wall.groups())
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return r.returncode, 3600 * h + 60 * m + s, rss * 1024, r.stdout, r.stderr


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--layers", type=int, default=23)
    ap.add_argument("--d-model", type=int, default=1024)
    ap.add_argument("--n-modes", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--max-len", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flax", action="store_true", help="also import the same model as Flax msgpack")
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--max-rss-ratio", type=float, default=2.0)
    ap.add_argument("--examples", type=int, default=16)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    summary = {"loadavg_before": loadavg(), "layers": args.layers, "d_model": args.d_model,
               "vocab": args.vocab, "max_len": args.max_len}
    ok = True
    print(f"load average before: {summary['loadavg_before']}", flush=True)
    formats = ["safetensors"] + (["flax"] if args.flax else [])
    ckpt = None
    for fmt in formats:
        d = os.path.join(args.work, "bigs_" + fmt)
        shutil.rmtree(d, ignore_errors=True)
        t0 = time.monotonic()
        weights, n_params = write_model_dir(d, args, flax=(fmt == "flax"))
        size = os.path.getsize(weights)
        print(f"{fmt}: wrote {weights} ({size / 1e9:.3f} GB, {n_params} parameters) in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
        out = os.path.join(args.work, f"imported_{fmt}.ckpt.h5")
        if os.path.exists(out):
            os.remove(out)
        code, wall, rss, stdout, stderr = timed([args.cli, "import", d, "--out", out])
        within = code == 0 and wall < args.max_seconds and rss < args.max_rss_ratio * size
        ok &= within
        summary[fmt] = {"parameters": n_params, "weights_bytes": size, "import_exit": code,
                        "import_seconds": round(wall, 2), "import_max_rss_bytes": rss,
                        "rss_over_weights": round(rss / size, 3), "within_limits": within}
        print(f"{fmt}: import exit {code}, {wall:.2f} s (limit {args.max_seconds}), max RSS "
              f"{rss / 1e9:.3f} GB = {rss / size:.2f} x the weights (limit {args.max_rss_ratio})",
              flush=True)
        if code != 0:
            print(stderr, file=sys.stderr)
        ckpt = ckpt or (out if code == 0 else None)
        shutil.rmtree(d, ignore_errors=True)  # the weights are no longer needed
    if ckpt:
        data = os.path.join(args.work, "sentences.tsv")
        rng = np.random.default_rng(args.seed)
        with open(data, "w") as f:
            f.write("sentence\n")
            for _ in range(args.examples):
                f.write(" ".join(f"w{i}" for i in rng.integers(0, args.vocab - 103, 200)) + "\n")
        dump = os.path.join(args.work, "published.dump.h5")
        code, wall, rss, stdout, stderr = timed(
            [args.cli, "dump", "--checkpoint", ckpt, "--data", data, "--out", dump, "--length",
             str(args.length), "--examples", str(args.examples), "--layers", "all", "--threads",
             str(args.threads)])
        valid = subprocess.run([args.cli, "validate", dump], capture_output=True, text=True) \
            if code == 0 else None
        summary["dump"] = {"exit": code, "seconds": round(wall, 2), "max_rss_bytes": rss,
                           "examples": args.examples, "length": args.length,
                           "bytes": os.path.getsize(dump) if code == 0 else None,
                           "validate_exit": valid.returncode if valid else None}
        print(f"dump: exit {code}, {args.examples} x {args.length} in {wall:.1f} s, max RSS "
              f"{rss / 1e9:.3f} GB; validate exit {valid.returncode if valid else '-'}", flush=True)
        if code != 0 or valid.returncode != 0:
            ok = False
            print(stderr if code != 0 else valid.stdout + valid.stderr, file=sys.stderr)
    else:
        ok = False
    if not args.keep:
        for name in os.listdir(args.work):
            if name.startswith(("imported_", "published.dump", "sentences")):
                os.remove(os.path.join(args.work, name))
    summary["loadavg_after"] = loadavg()
    summary["ok"] = ok
    print(f"load average after: {summary['loadavg_after']}")
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
