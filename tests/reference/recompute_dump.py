"""Recomputes an activation dump (DUMP_FORMAT.md v1) with the PyTorch reference and compares.

    /usr/bin/python3 recompute_dump.py DUMP CHECKPOINT [--examples N]

Reads the dump with h5py and the checkpoint with routescope_ref.checkpoint, runs the reference
model (in float64, so the reference's own rounding is negligible) on the first N examples'
/data/tokens and /data/lengths, and compares with what the dump holds:
  - /layers/<l>/hidden   the embeddings output (l = 0) and block outputs, every position;
  - /layers/<l>/sentence the mean of the hidden state over the first `length` positions
                         (or position 0 when model.pool = first); slstm: see below;
  - /layers/<l>/attention  bert, gated_att: softmax(q k^T / sqrt(dh)) per head with the padding
                         keys (and, causal, the later keys) at 0, [S, H, L, L];
  - /layers/<l>/gates/*  for bigs: u_f = gelu(du_forward X), u_b = flip(gelu(du_backward flip X))
                         (token order), v = gelu(dv X), X = LN(h_{l-1}) (MODELS.md);
                         for birdie: f = σ(w_f X), i = σ(w_i X), z = w_z X, o = gelu(w_o X), and
                         attr reverse_from = N/2 exactly on the non-causal layers' gates group;
                         for gmlp: spatial_gate = W[:L, :L] · LN_s(Z2) + b;
                         for slstm: the step's softmaxed token gates i, l, r, f, s, the output
                         gate o and sentence_weight [S, L + 1, d] (routescope_ref/slstm.py);
  - slstm:               /layers/<l>/hidden the token states h after step l (l = 0: embeddings),
                         /layers/<l>/sentence the sentence node g after step l (g⁰ = the masked
                         mean of the embeddings), whatever model.pool says;
  - /data/reset_mask     birdie with prefix layers: bit 1 at position 0, bit 2 from
                         p = clamp(floor(φ·n + 0.5), 1, max(1, n − 1)) on (φ = train.prefix_fraction
                         or --prefix-fraction), and the blocks run with that mask; a row of a Birdie
                         checkpoint's task dump (a paradigm piece "[prefix]" or "[next]" first,
                         then the prompt, "[start]" and the answer, as it was trained) is causal
                         from the position after "[start]";
  - /mixing/<l>          gmlp: the checkpoint's layers.<l−1>.spatial.weight[:L, :L];
  - /kernels/<l>         the S4D kernels of each direction (channel group 0) and D; a causal
                         model's (model.causal) the forward kernel and D_forward alone; with
                         H > 1 kernels per SSM every group's, <direction>_groups [H, L] and
                         D_<direction>_groups [H];
  - /model               arch, n_layers, d_model and checkpoint_sha256 against the file's hash;
  - with --answer-after PIECE, a task dump of a causal (clm) checkpoint whose single answer token
                         follows the last PIECE of the prompt (induction: the second "trigger"):
                         the row holds the answer written after the prompt (/data/labels = that
                         token), /data/predictions is the argmax of the reference's MLM-head logits
                         at the position before it (the next-token prediction; rows whose two best
                         logits lie within 1e-6 are not compared), and attribute `correct` is
                         prediction = label.
Tolerance |dump − ref| ≤ atol + rtol·|ref| with (1e-4, 1e-4) for float32 datasets and
(4e-3, 2e-3) for float16 (binary16 has an 11-bit significand: relative rounding 2^-11 ≈ 4.9e-4,
plus the float32 engine's own error). Prints one JSON line; exit 0 when everything matches, 1 with
the first mismatches otherwise.
"""
import argparse
import hashlib
import json
import os
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routescope_ref import checkpoint as ref_checkpoint  # noqa: E402
from routescope_ref.config import d_inner as config_d_inner  # noqa: E402
from routescope_ref.models import flip, gelu  # noqa: E402
from routescope_ref.birdie import layer_mode as birdie_layer_mode  # noqa: E402

TOLERANCES = {"float32": (1e-4, 1e-4), "float16": (4e-3, 2e-3)}


def compare(name, dumped, ref, problems, stats):
    dumped = np.asarray(dumped, dtype=np.float64)
    if dumped.shape != ref.shape:
        problems.append(f"{name}: shape {list(dumped.shape)}, reference {list(ref.shape)}")
        return
    kind = "float16" if dumped.dtype == np.float16 else stats["dtype"]
    atol, rtol = TOLERANCES[kind]
    err = np.abs(dumped - ref)
    bad = err > atol + rtol * np.abs(ref)
    stats["compared"] += 1
    stats["max_abs_err"] = max(stats["max_abs_err"], float(err.max()) if err.size else 0.0)
    if bad.any():
        i = np.unravel_index(np.argmax(err - (atol + rtol * np.abs(ref))), err.shape)
        problems.append(f"{name}: {int(bad.sum())} of {bad.size} values off, worst at "
                        f"{list(map(int, i))}: dump {dumped[i]:.6g}, reference {ref[i]:.6g}")


def check_answers(f, model, final, tokens, piece, n, problems, stats):
    """A causal checkpoint's answer rows (--answer-after): see the module docstring."""
    vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][()]]
    if piece not in vocab:
        problems.append(f"--answer-after: /vocab has no piece {piece!r}")
        return
    marker = vocab.index(piece)
    with torch.no_grad():
        logits = model.mlm_logits(final).numpy()
    labels = f["data/labels"][:n]
    predictions = f["data/predictions"][:n]
    correct = f["data/attributes/correct"][:n]
    stats["answers_compared"] = 0
    for i in range(n):
        at = int(np.nonzero(tokens[i].numpy() == marker)[0][-1]) + 1  # the answer's position
        if int(tokens[i, at]) != int(labels[i]):
            problems.append(f"example {i}: the row holds {vocab[int(tokens[i, at])]!r} after the "
                            f"last {piece!r}, /data/labels {vocab[int(labels[i])]!r}: the answer "
                            "is not written after the prompt")
            continue
        row = logits[i, at - 1]
        best = np.sort(row)[-2:]
        if best[1] - best[0] > 1e-6:
            stats["answers_compared"] += 1
            if int(np.argmax(row)) != int(predictions[i]):
                problems.append(f"example {i}: /data/predictions {vocab[int(predictions[i])]!r}, "
                                f"reference next-token argmax {vocab[int(np.argmax(row))]!r}")
        if bool(correct[i]) != (int(predictions[i]) == int(labels[i])):
            problems.append(f"example {i}: correct = {correct[i]}, prediction "
                            f"{int(predictions[i])} against label {int(labels[i])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("checkpoint")
    ap.add_argument("--examples", type=int, default=4)
    ap.add_argument("--prefix-fraction", type=float, default=None)
    ap.add_argument("--answer-after", default=None,
                    help="check the causal answer rows: the answer follows the last PIECE")
    args = ap.parse_args()

    model, ck = ref_checkpoint.load_model(args.checkpoint, dtype=torch.float64)
    model.eval()
    cfg = ck["config"]
    m = cfg["model"]
    problems = []
    with h5py.File(args.dump, "r") as f:
        S = f["data/tokens"].shape[0]
        n = min(args.examples, S)
        tokens = torch.from_numpy(f["data/tokens"][:n].astype(np.int64))
        lengths = torch.from_numpy(f["data/lengths"][:n].astype(np.int64))
        first = f["layers"][next(iter(f["layers"]))]["hidden"]
        stats = {"examples": n, "compared": 0, "max_abs_err": 0.0,
                 "dtype": "float16" if first.dtype == np.float16 else "float32"}

        attrs = f["model"].attrs
        for key, want in (("arch", m["arch"]), ("n_layers", m["n_layers"]), ("d_model", m["d_model"])):
            got = attrs[key]
            got = got.decode() if isinstance(got, bytes) else got
            if got != want:
                problems.append(f"/model attr {key}: {got!r}, checkpoint {want!r}")
        if "checkpoint_sha256" in attrs:
            with open(args.checkpoint, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            got = attrs["checkpoint_sha256"]
            got = got.decode() if isinstance(got, bytes) else got
            if got != digest:
                problems.append(f"/model attr checkpoint_sha256: {got}, file hash {digest}")

        L = tokens.shape[1]
        valid = (torch.arange(L)[None, :] < lengths[:, None]).to(torch.float64)
        reset = None
        modes = [birdie_layer_mode(cfg, i) for i in range(m["n_layers"])] if m["arch"] == "birdie" else []
        if "prefix" in modes:
            phi = args.prefix_fraction
            if phi is None:
                phi = cfg.get("train", {}).get("prefix_fraction", 0.75)
            # A Birdie checkpoint's task rows (its answer rows: a paradigm piece first, the prompt,
            # [start], the answer) are causal after [start], as the model was trained.
            pieces = [v.decode() if isinstance(v, bytes) else v
                      for v in (f["vocab"][()] if "vocab" in f else [])]
            start = pieces.index("[start]") if "[start]" in pieces else None
            answer_rows = 0
            reset = np.zeros((n, L), dtype=np.int64)
            for s_, length in enumerate(lengths.tolist()):
                p = min(max(int(np.floor(phi * length + 0.5)), 1), max(1, length - 1))
                row = tokens[s_].numpy()
                if (start is not None and pieces[int(row[0])] in ("[prefix]", "[next]")
                        and (row[:length] == start).any()):
                    p = int(np.nonzero(row[:length] == start)[0][0]) + 1
                    answer_rows += 1
                reset[s_, 0] |= 1
                reset[s_, p:] |= 2
            stats["birdie_answer_rows"] = answer_rows
            if "data/reset_mask" not in f:
                problems.append("/data/reset_mask: missing (the model has prefix layers)")
            else:
                got = f["data/reset_mask"][:n]
                if got.dtype != np.int8:
                    problems.append(f"/data/reset_mask: dtype {got.dtype}, expected int8")
                if got.shape != reset.shape or (got.astype(np.int64) != reset).any():
                    problems.append("/data/reset_mask: differs from the prefix split at phi "
                                    f"= {phi} (or after [start] in a Birdie answer row)")
                stats["compared"] += 1
            reset = torch.from_numpy(reset)
        elif "data/reset_mask" in f:
            problems.append("/data/reset_mask: written for a model without prefix layers")
        with torch.no_grad():
            hidden = [model.embeddings(tokens)]
            gates = [None]
            attention = [None]
            for block in model.layers:
                h = hidden[-1]
                if m["arch"] == "bigs":
                    X = block.norm(h)
                    g = {"u_f": gelu(block.du_forward(X), block.act),
                         "v": gelu(block.dv(X), block.act)}
                    if not block.causal:  # a causal block has no backward branch
                        g["u_b"] = flip(gelu(block.du_backward(flip(X)), block.act))
                    gates.append(g)
                elif m["arch"] == "birdie":
                    X = block.norm(h)
                    gates.append({"f": torch.sigmoid(block.w_f(X)), "i": torch.sigmoid(block.w_i(X)),
                                  "z": block.w_z(X), "o": gelu(block.w_o(X), block.act)})
                elif m["arch"] == "gmlp":
                    z = gelu(block.u(block.norm(h)), block.act)
                    gates.append({"spatial_gate": block.spatial(block.norm_spatial(z.chunk(2, dim=-1)[1]))})
                else:
                    gates.append(None)
                if m["arch"] == "birdie":
                    hidden.append(block(h, valid.bool(), reset))
                else:
                    hidden.append(block(h, valid.bool()))
                # The block's attention probabilities (bert, gated_att): its MHA keeps them.
                mha = [mod for mod in block.modules() if hasattr(mod, "probs")]
                attention.append(mha[0].probs.numpy() if mha else None)
            sentences = None
            if m["arch"] == "slstm":
                # One shared recurrence: state 0 is the embeddings and g⁰ (their masked mean), state
                # ℓ the token states h and the node g after step ℓ, with that step's probes.
                trace = []
                model.slstm(hidden[0], valid.bool(), trace)
                hidden = [t["h"] for t in trace]
                sentences = [t["g"].numpy() for t in trace]
                gates = [t.get("gates") for t in trace]

        for name in f["layers"]:
            l = int(name)
            group = f["layers"][name]
            ref = hidden[l].numpy()
            compare(f"/layers/{l}/hidden", group["hidden"][:n], ref, problems, stats)
            if "sentence" in group:
                if sentences is not None:
                    sent = sentences[l]
                elif m.get("pool") == "first":
                    sent = ref[:, 0]
                elif m.get("pool") == "mean_all":  # every position of the row
                    sent = ref.mean(axis=1)
                else:
                    w = valid.numpy()[:, :, None]
                    sent = (ref * w).sum(axis=1) / w.sum(axis=1)
                compare(f"/layers/{l}/sentence", group["sentence"][:n], sent, problems, stats)
            if "attention" in group:
                if attention[l] is None:
                    problems.append(f"/layers/{l}/attention: the reference block has no attention")
                else:
                    compare(f"/layers/{l}/attention", group["attention"][:n], attention[l],
                            problems, stats)
            if "gates" in group and m["arch"] == "birdie":
                want = None if modes[l - 1] == "causal" else config_d_inner(cfg) // 2
                got = group["gates"].attrs.get("reverse_from")
                if (None if got is None else int(got)) != want:
                    problems.append(f"/layers/{l}/gates attr reverse_from: {got}, expected {want} "
                                    f"(layer mode {modes[l - 1]})")
            if "gates" in group:
                for g in group["gates"]:
                    if gates[l] is None or g not in gates[l]:
                        problems.append(f"/layers/{l}/gates/{g}: the reference has no such gate")
                        continue
                    compare(f"/layers/{l}/gates/{g}", group["gates"][g][:n], gates[l][g].numpy(),
                            problems, stats)

        if m["arch"] == "gmlp":
            if "mixing" not in f:
                problems.append("/mixing: missing in a gmlp dump")
            else:
                for l in range(1, m["n_layers"] + 1):
                    W = ck["params"][f"layers.{l - 1}.spatial.weight"][:L, :L].astype(np.float64)
                    compare(f"/mixing/{l}", f["mixing"][str(l)][()], W, problems, stats)

        if "kernels" in f:
            for name in f["kernels"]:
                l = int(name)
                block = model.layers[l - 1]
                directions = [("forward", block.ssm_forward)]
                if m.get("causal", False):  # forward SSMs only: no backward kernel, no D_backward
                    group = f["kernels"][name]
                    if "backward" in group or "D_backward" in group.attrs:
                        problems.append(f"/kernels/{l}: a causal model's dump holds a backward "
                                        "kernel or D_backward")
                else:
                    directions.append(("backward", block.ssm_backward))
                for direction, ssm in directions:
                    ds = f["kernels"][name][direction]
                    with torch.no_grad():
                        K = ssm.kernel(ds.shape[0])[0].numpy()
                    compare(f"/kernels/{l}/{direction}", ds[()], K, problems, stats)
                    groups = f"{direction}_groups"  # every group's kernel, with H > 1 kernels
                    H = int(ssm.D.shape[0])
                    if H > 1 and groups not in f["kernels"][name]:
                        problems.append(f"/kernels/{l}: {groups} missing for H = {H} kernels")
                    elif groups in f["kernels"][name]:
                        with torch.no_grad():
                            KH = ssm.kernel(ds.shape[0]).numpy()
                        compare(f"/kernels/{l}/{groups}", f["kernels"][name][groups][()], KH,
                                problems, stats)
                        compare(f"/kernels/{l}/D_{groups}", f["kernels"][name][f"D_{groups}"][()],
                                ssm.D.detach().numpy().astype(np.float64), problems, stats)
                    D = float(ssm.D[0])
                    got = float(f["kernels"][name].attrs[f"D_{direction}"])
                    if abs(got - D) > 1e-6 * max(1.0, abs(D)):
                        problems.append(f"/kernels/{l} attr D_{direction}: {got}, reference {D}")

        if args.answer_after is not None:
            check_answers(f, model, hidden[-1], tokens, args.answer_after, n, problems, stats)

    stats["ok"] = not problems
    stats["problems"] = problems[:10]
    print(json.dumps(stats))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
