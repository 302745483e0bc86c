#!/usr/bin/python3
"""MLM pretraining of the reference model (routescope_ref) on a text corpus, in PyTorch, on the CPU
or a GPU: an independent check of a training curve the engine produced (for example BERT's long
plateau on builtin:grammar in `experiment slstm-vs-bert`, docs/experiments.md).

    /usr/bin/python3 tests/reference/train_mlm.py --config DIR/bert/config.json \
        --corpus DIR/corpus.txt --steps 6000 --eval-every 200 [--device cuda] [--seed 1] \
        [--set train.lr=1e-3 ...] [--out curve.jsonl]

The data path follows the engine's for a byte-tokenized corpus with one document per line
(engine/train/packed_sequences.cpp): every 20th document held out for validation; each split's
documents encoded as bytes (id = 5 + byte), joined into one stream with [SEP] after each document
and cut into chunks of seq_len - 1, each behind a [CLS]; batches drawn without replacement in an
order reshuffled every epoch. MLM masking per TASKS.md: 15% of the non-special positions chosen
(each independently), 80% [MASK] / 10% random regular id / 10% unchanged. The optimizer, its
parameter groups, warmup and schedule, and the gradient clip are routescope_ref.adamw's, the same
ones the parity tests hold the engine to. Validation masks the whole held-out set once with a
fixed seed and reports the mean loss over every target and the accuracy.

Output: one JSON line per evaluation {"step", "valid_loss", "valid_accuracy", "train_loss"
(mean since the last evaluation), "seconds"}, then {"final": ...} with the best validation loss.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from routescope_ref import adamw, config as config_mod  # noqa: E402
from routescope_ref.models import Model  # noqa: E402

PAD, UNK, CLS, SEP, MASK, FIRST_REGULAR = 0, 1, 2, 3, 4, 5
BYTE_VOCAB = FIRST_REGULAR + 256


def pack(docs, seq_len):
    stream = []
    for d in docs:
        stream.extend(FIRST_REGULAR + b for b in d.encode("utf-8"))
        stream.append(SEP)
    chunk = seq_len - 1
    rows, lengths = [], []
    for at in range(0, len(stream), chunk):
        part = stream[at:at + chunk]
        rows.append([CLS] + part + [PAD] * (chunk - len(part)))
        lengths.append(len(part) + 1)
    return np.asarray(rows, dtype=np.int64), np.asarray(lengths, dtype=np.int64)


def read_corpus(path, seq_len):
    with open(path, encoding="utf-8") as f:
        docs = [line.rstrip("\n") for line in f if line.strip()]
    if len(docs) < 20:
        raise SystemExit(f"{path}: needs at least 20 documents (one per line), has {len(docs)}")
    train = [d for i, d in enumerate(docs) if i % 20 != 19]
    valid = [d for i, d in enumerate(docs) if i % 20 == 19]
    return pack(train, seq_len), pack(valid, seq_len)


def mask_batch(ids, lengths, mask_prob, rng):
    ids = ids.copy()
    B, L = ids.shape
    in_seq = np.arange(L)[None, :] < lengths[:, None]
    candidate = in_seq & (ids >= FIRST_REGULAR)
    chosen = candidate & (rng.random((B, L)) < mask_prob)
    labels = np.where(chosen, ids, -100)
    r = rng.random((B, L))
    ids[chosen & (r < 0.8)] = MASK
    swap = chosen & (r >= 0.8) & (r < 0.9)
    ids[swap] = rng.integers(FIRST_REGULAR, BYTE_VOCAB, swap.sum())
    return ids, labels


def to_batch(ids, lengths, labels, device):
    return {"input_ids": torch.as_tensor(ids, device=device),
            "lengths": torch.as_tensor(lengths, device=device),
            "labels": torch.as_tensor(labels, device=device), "token_type_ids": None}


def mlm_loss(model, batch, reduction="mean"):
    h, _ = model.encode(batch["input_ids"], batch["lengths"], batch["token_type_ids"])
    logits = model.mlm_logits(h)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1),
                           ignore_index=-100, reduction=reduction)
    return logits, loss


def evaluate(model, valid_batches):
    model.eval()
    total, right, count = 0.0, 0, 0
    with torch.no_grad():
        for batch in valid_batches:
            logits, loss = mlm_loss(model, batch, reduction="sum")
            target = batch["labels"] != -100
            total += loss.item()
            right += (logits.argmax(-1)[target] == batch["labels"][target]).sum().item()
            count += target.sum().item()
    model.train()
    return total / max(count, 1), right / max(count, 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.threads > 0:
        torch.set_num_threads(a.threads)

    cfg = config_mod.load(a.config)
    for s in a.set:
        cfg = config_mod.apply_override(cfg, s)
    if a.steps:
        cfg["train"]["steps"] = a.steps
        cfg["train"]["warmup_steps"] = max(1, a.steps // 10)  # as the experiment sets it
    if a.seed is not None:
        cfg["train"]["seed"] = a.seed
    cfg["model"]["vocab_size"] = BYTE_VOCAB  # what the engine's byte tokenizer sets
    t, seq_len = cfg["train"], cfg["data"]["seq_len"]

    (train_ids, train_len), (valid_ids, valid_len) = read_corpus(a.corpus, seq_len)
    torch.manual_seed(t["seed"])
    model = Model(cfg).to(a.device)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    optimizer = adamw.make_optimizer(model, cfg)
    rng = np.random.default_rng(t["seed"])
    v_ids, v_labels = mask_batch(valid_ids, valid_len, t["mask_prob"], np.random.default_rng(12345))
    B = t["batch_size"]
    valid_batches = [to_batch(v_ids[i:i + B], valid_len[i:i + B], v_labels[i:i + B], a.device)
                     for i in range(0, len(v_ids), B)]

    out = open(a.out, "w") if a.out else None

    def emit(record):
        line = json.dumps(record)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    emit({"start": {"arch": cfg["model"]["arch"], "parameters": params, "device": a.device,
                    "train_sequences": len(train_ids), "valid_sequences": len(valid_ids),
                    "steps": t["steps"], "lr": t["lr"], "seed": t["seed"], "torch": torch.__version__}})
    order, at = rng.permutation(len(train_ids)), 0
    t0, losses, best = time.time(), [], (float("inf"), 0)
    for step in range(t["steps"]):
        if at + B > len(order):
            order, at = rng.permutation(len(train_ids)), 0
        pick = order[at:at + B]
        at += B
        ids, labels = mask_batch(train_ids[pick], train_len[pick], t["mask_prob"], rng)
        batch = to_batch(ids, train_len[pick], labels, a.device)
        optimizer.zero_grad(set_to_none=True)
        _, loss = mlm_loss(model, batch)
        loss.backward()
        adamw.fill_missing_grads(model)
        adamw.set_lr(optimizer, step, cfg)
        adamw.clip(model, t["clip_grad_norm"])
        optimizer.step()
        losses.append(loss.item())
        if (step + 1) % a.eval_every == 0 or step + 1 == t["steps"]:
            vl, va = evaluate(model, valid_batches)
            best = min(best, (vl, step + 1))
            emit({"step": step + 1, "valid_loss": vl, "valid_accuracy": va,
                  "train_loss": float(np.mean(losses)), "seconds": time.time() - t0})
            losses = []
    emit({"final": {"best_valid_loss": best[0], "best_step": best[1], "seconds": time.time() - t0}})


if __name__ == "__main__":
    main()
