#!/usr/bin/python3
"""The PyTorch oracle the C++ parity tests call (llm.c style: forward, backward, N optimizer steps).

Parity run:
    /usr/bin/python3 tests/reference/parity.py --checkpoint C.ckpt.h5 --batch batch.h5 \
        --out result.h5 [--steps 10] [--float64] [--threads N] [--resume]
builds the model of the checkpoint's /config, loads /params, runs forward with dropout OFF and
writes result.h5 (see tests/reference/README.md):
    logits              [B, L, V] (MLM) or [B, n_labels] (classification)
    loss                scalar
    grads/<name>        gradient of loss at the checkpoint's parameters (before any clipping)
    step_losses         [steps] loss before update k (step_losses[0] == loss)
    step_lrs            [steps] schedule factor times train.lr used by update k
    step_grad_norms     [steps] global gradient norm before clipping at update k
    params_after/<name> parameters after `steps` AdamW updates on the same batch
    adam_m/<name>, adam_v/<name>  AdamW first and second moments after those updates
Datasets are float64 with --float64, else float32. Root attrs: arch, objective, dtype, steps,
first_step. AdamW starts fresh at update 0 (the checkpoint's /train is ignored) unless --resume: then
its moments come from /train/adam_m, /train/adam_v and the update count (bias correction and the LR
schedule) continues from /train attr step.

Fresh model:
    /usr/bin/python3 tests/reference/parity.py --init --config run.json --out init.ckpt.h5 \
        [--seed S] [--set key=value ...]
writes a checkpoint of a freshly initialised model (MODELS.md inits, torch.manual_seed(S); S
defaults to train.seed).

Exit status: 0 on success, 2 on bad input (message on stderr names the file, key or dataset).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from routescope_ref import adamw, batch as batch_mod, checkpoint, config as config_mod  # noqa: E402
from routescope_ref.errors import CheckpointError, ConfigError  # noqa: E402
from routescope_ref.models import Model  # noqa: E402
from routescope_ref.objective import logits_and_loss  # noqa: E402


def resume_optimizer(optimizer, model, train, dtype):
    """Continue from a checkpoint's /train: AdamW moments and the update count."""
    if not train or "adam_m" not in train or "adam_v" not in train:
        raise CheckpointError("--resume needs /train with adam_m and adam_v")
    for name, p in model.named_parameters():
        optimizer.state[p] = {"step": torch.tensor(float(train["step"])),
                              "exp_avg": torch.from_numpy(train["adam_m"][name]).to(dtype),
                              "exp_avg_sq": torch.from_numpy(train["adam_v"][name]).to(dtype)}
    return train["step"]


def run_parity(checkpoint_path, batch_path, out_path, steps, dtype, resume=False):
    model, ck = checkpoint.load_model(checkpoint_path, dtype)
    cfg = ck["config"]
    model.eval()  # dropout off
    batch = batch_mod.read(batch_path, cfg)
    optimizer = adamw.make_optimizer(model, cfg)
    first_step = resume_optimizer(optimizer, model, ck["train"], dtype) if resume else 0
    names = [n for n, _ in model.named_parameters()]
    step_losses, step_lrs, step_norms = [], [], []
    logits = loss = grads = None
    for k in range(max(steps, 1)):
        optimizer.zero_grad(set_to_none=True)
        out_logits, out_loss = logits_and_loss(model, batch)
        out_loss.backward()
        adamw.fill_missing_grads(model)
        if k == 0:
            logits, loss = out_logits.detach().clone(), out_loss.item()
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
        if k >= steps:
            break
        step_losses.append(out_loss.item())
        factor = adamw.set_lr(optimizer, first_step + k, cfg)
        step_lrs.append(factor * cfg["train"]["lr"])
        step_norms.append(adamw.clip(model, cfg["train"]["clip_grad_norm"]))
        optimizer.step()

    np_dtype = np.float64 if dtype == torch.float64 else np.float32
    tmp = out_path + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["arch"] = cfg["model"]["arch"]
        f.attrs["objective"] = "mlm" if "labels" in batch else "classify"
        f.attrs["dtype"] = "float64" if dtype == torch.float64 else "float32"
        f.attrs["steps"] = np.int64(steps)
        f.attrs["first_step"] = np.int64(first_step)
        f.create_dataset("logits", data=logits.numpy().astype(np_dtype))
        f.create_dataset("loss", data=np_dtype(loss))
        f.create_dataset("step_losses", data=np.asarray(step_losses, dtype=np_dtype))
        f.create_dataset("step_lrs", data=np.asarray(step_lrs, dtype=np_dtype))
        f.create_dataset("step_grad_norms", data=np.asarray(step_norms, dtype=np_dtype))
        g = f.create_group("grads")
        a = f.create_group("params_after")
        params = dict(model.named_parameters())
        moments = {"adam_m": f.create_group("adam_m"), "adam_v": f.create_group("adam_v")}
        for n in names:
            g.create_dataset(n, data=grads[n].numpy().astype(np_dtype))
            a.create_dataset(n, data=params[n].detach().numpy().astype(np_dtype))
            state = optimizer.state.get(params[n], {})
            for key, torch_key in (("adam_m", "exp_avg"), ("adam_v", "exp_avg_sq")):
                value = state[torch_key] if torch_key in state else torch.zeros_like(params[n])
                moments[key].create_dataset(n, data=value.detach().numpy().astype(np_dtype))
    os.replace(tmp, out_path)
    return loss


def run_init(config_path, overrides, out_path, seed):
    cfg = config_mod.load(config_path)
    for assignment in overrides:
        cfg = config_mod.apply_override(cfg, assignment)
    torch.manual_seed(cfg["train"]["seed"] if seed is None else seed)
    model = Model(cfg)
    checkpoint.write(out_path, cfg, dict(model.named_parameters()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", help="checkpoint to load (parity run)")
    ap.add_argument("--batch", help="batch.h5 (parity run)")
    ap.add_argument("--out", required=True, help="result.h5 (parity run) or the checkpoint to write (--init)")
    ap.add_argument("--steps", type=int, default=10, help="AdamW steps on the batch (parity run)")
    ap.add_argument("--float64", action="store_true", help="compute in float64 (tight comparisons)")
    ap.add_argument("--resume", action="store_true",
                    help="start AdamW from the checkpoint's /train (moments, step) instead of fresh")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--init", action="store_true", help="write a freshly initialised checkpoint")
    ap.add_argument("--config", help="run configuration JSON (--init)")
    ap.add_argument("--seed", type=int, default=None, help="init seed (--init; default train.seed)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (--init)")
    args = ap.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    try:
        if args.init:
            if not args.config:
                ap.error("--init needs --config")
            run_init(args.config, args.set, args.out, args.seed)
        else:
            if not args.checkpoint or not args.batch:
                ap.error("a parity run needs --checkpoint and --batch")
            if args.steps < 0:
                ap.error("--steps must be at least 0")
            run_parity(args.checkpoint, args.batch, args.out, args.steps,
                       torch.float64 if args.float64 else torch.float32, args.resume)
    except (ConfigError, CheckpointError, ValueError, OSError) as e:
        print(f"parity.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
