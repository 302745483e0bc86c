#!/usr/bin/python3
"""PyTorch side of `routescope-cli bench train --baseline torch`: time MLM training steps of the
reference model on one fixed batch and print one JSON line.

    /usr/bin/python3 tests/reference/bench_train.py --config run.json --threads 2 --steps 10 \
        --warmup 2 [--batch batch.h5] [--checkpoint C.ckpt.h5] [--set key=value ...]
        [--device cuda] [--compile]

Without --batch, a random MLM batch of train.batch_size x data.seq_len is drawn (seed train.seed;
15% of positions are targets). Without --checkpoint, the model is freshly initialised. Steps are
full training steps (dropout on, forward, backward, clip, AdamW); the first --warmup are not timed.
tokens_per_s counts every position of the batch (B*L per step), padding included.

Output: {"tokens_per_s", "step_ms", "steps", "warmup", "tokens_per_step", "threads", "arch",
"final_loss"}.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from routescope_ref import adamw, batch as batch_mod, checkpoint, config as config_mod  # noqa: E402
from routescope_ref.errors import CheckpointError, ConfigError  # noqa: E402
from routescope_ref.models import Model  # noqa: E402
from routescope_ref.objective import logits_and_loss  # noqa: E402


def random_mlm_batch(cfg):
    r = np.random.default_rng(cfg["train"]["seed"])
    B, L, V = cfg["train"]["batch_size"], cfg["data"]["seq_len"], cfg["model"]["vocab_size"]
    ids = r.integers(0, V, (B, L))
    labels = np.where(r.random((B, L)) < cfg["train"]["mask_prob"], r.integers(0, V, (B, L)), -100)
    labels[:, 0] = ids[:, 0]  # at least one target per row
    return {"input_ids": torch.tensor(ids), "lengths": torch.full((B,), L), "labels": torch.tensor(labels),
            "token_type_ids": None}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config")
    ap.add_argument("--checkpoint")
    ap.add_argument("--batch")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu | cuda (the same GPU as the engine)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the forward and loss")
    ap.add_argument("--precision", default="fp32", choices=("fp32", "tf32", "bf16-mixed"),
                    help="fp32; tf32: TF32 matmuls (GPU); bf16-mixed: autocast to bfloat16 (GPU)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be at least 1 and --warmup at least 0")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    try:
        if args.checkpoint:
            model, ck = checkpoint.load_model(args.checkpoint)
            cfg = ck["config"]
        elif args.config:
            cfg = config_mod.load(args.config)
            for assignment in args.set:
                cfg = config_mod.apply_override(cfg, assignment)
            torch.manual_seed(cfg["train"]["seed"])
            model = Model(cfg)
        else:
            ap.error("--config or --checkpoint is required")
        batch = batch_mod.read(args.batch, cfg) if args.batch else random_mlm_batch(cfg)
    except (ConfigError, CheckpointError, ValueError, OSError) as e:
        print(f"bench_train.py: error: {e}", file=sys.stderr)
        return 2
    dev = torch.device(args.device)
    gpu = dev.type == "cuda"
    if args.precision != "fp32" and not gpu:
        print(f"bench_train.py: error: --precision {args.precision} needs --device cuda", file=sys.stderr)
        return 2
    model.to(dev)
    batch = {k: (v.to(dev) if torch.is_tensor(v) else v) for k, v in batch.items()}
    model.train()
    if gpu:
        # What a PyTorch user on a GPU writes: the fused AdamW and the foreach global-norm clip
        # (no host round trip per step); TF32 off, as the engine's fp32 default.
        torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
        t = cfg["train"]
        opt = torch.optim.AdamW(adamw.param_groups(model, cfg), lr=t["lr"], betas=tuple(t["betas"]),
                                eps=t["eps"], weight_decay=t["weight_decay"], fused=True)
    else:
        opt = adamw.make_optimizer(model, cfg)
    step_fn = torch.compile(logits_and_loss) if args.compile else logits_and_loss
    loss = None
    start = None
    for s in range(args.warmup + args.steps):
        if s == args.warmup:
            if gpu:
                torch.cuda.synchronize()
            start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if args.precision == "bf16-mixed":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, loss = step_fn(model, batch)
        else:
            _, loss = step_fn(model, batch)
        loss.backward()
        adamw.fill_missing_grads(model)
        if gpu:
            if cfg["train"]["clip_grad_norm"] > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["train"]["clip_grad_norm"], foreach=True)
        else:
            adamw.clip(model, cfg["train"]["clip_grad_norm"])
        adamw.set_lr(opt, s, cfg)
        opt.step()
    if gpu:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    tokens = batch["input_ids"].numel()
    print(json.dumps({"tokens_per_s": tokens * args.steps / seconds, "step_ms": 1000 * seconds / max(1, args.steps),
                      "steps": args.steps, "warmup": args.warmup, "tokens_per_step": tokens,
                      "threads": torch.get_num_threads(), "arch": cfg["model"]["arch"],
                      "final_loss": loss.item(), "device": args.device,
                      "device_name": torch.cuda.get_device_name(dev) if gpu else "cpu",
                      "compiled": bool(args.compile), "precision": args.precision,
                      "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
