"""AdamW as docs/config.md sets it up: three parameter groups, warmup + decay schedule, global-norm clip.

Groups (by checkpoint name):
    ssm       names containing `.ssm_forward.` or `.ssm_backward.` (A_re, A_im, C, D, log_step):
              no weight decay, learning rate train.ssm_lr (null -> train.lr)
    no_decay  every `.bias`, every LayerNorm weight (module name `norm`, `norm1`, `norm2`, `norm3`),
              every embedding table `embeddings.*` (hence the tied decoder), `mlm.bias`,
              Birdie's forget gate `layers.<i>.w_f.*`
    decay     every other `.weight` (dense layers, attention projections, mlm.dense, classifier.*)

Schedule (s counts optimizer updates from 0): factor(s) = (s+1)/warmup for s < warmup; then with
t = min(1, (s - warmup)/max(1, steps - warmup)): cosine 0.5(1 + cos(pi t)), linear 1 - t,
constant 1. Each group's lr = its base lr * factor(s).

Clipping (train.clip_grad_norm > 0): total = sqrt(sum of all squared gradient entries);
g *= min(1, max_norm / (total + 1e-6)) (torch.nn.utils.clip_grad_norm_'s formula).

The update is torch.optim.AdamW's: p *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
p -= lr/(1-b1^k) * m / (sqrt(v)/sqrt(1-b2^k) + eps), k = s + 1. Parameters that took no part in the
loss get a zero gradient (not None), so every parameter is updated every step as an engine with one
flat gradient buffer does (weight decay included).
"""
import math

import torch

from . import config as config_mod

GROUPS = ("decay", "no_decay", "ssm")


def group_of(name):
    parts = name.split(".")
    if ".ssm_forward." in name or ".ssm_backward." in name:
        return "ssm"
    if len(parts) >= 2 and parts[-2] == "w_f":  # Birdie's forget gate: no weight decay (MODELS.md)
        return "no_decay"
    if parts[-1] == "bias" or parts[0] == "embeddings" or (len(parts) >= 2 and parts[-2].startswith("norm")):
        return "no_decay"
    return "decay"


def param_groups(model, cfg):
    t = cfg["train"]
    named = {g: [] for g in GROUPS}
    for name, p in model.named_parameters():
        named[group_of(name)].append(p)
    base = {"decay": (t["lr"], t["weight_decay"]), "no_decay": (t["lr"], 0.0), "ssm": (config_mod.ssm_lr(cfg), 0.0)}
    return [{"params": named[g], "lr": base[g][0], "base_lr": base[g][0], "weight_decay": base[g][1], "name": g}
            for g in GROUPS if named[g]]


def lr_factor(step, cfg):
    t = cfg["train"]
    warmup, total = t["warmup_steps"], t["steps"]
    if step < warmup:
        return (step + 1) / warmup
    x = min(1.0, (step - warmup) / max(1, total - warmup))
    if t["schedule"] == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * x))
    if t["schedule"] == "linear":
        return 1.0 - x
    return 1.0


def make_optimizer(model, cfg):
    t = cfg["train"]
    return torch.optim.AdamW(param_groups(model, cfg), lr=t["lr"], betas=tuple(t["betas"]), eps=t["eps"],
                             weight_decay=t["weight_decay"], amsgrad=False, foreach=False)


def set_lr(optimizer, step, cfg):
    f = lr_factor(step, cfg)
    for g in optimizer.param_groups:
        g["lr"] = g["base_lr"] * f
    return f


def fill_missing_grads(model):
    for p in model.parameters():
        if p.grad is None:
            p.grad = torch.zeros_like(p)


def grad_norm(model):
    return torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters())).item()


def clip(model, max_norm):
    """Global-norm clip; returns the norm before clipping."""
    total = grad_norm(model)
    if max_norm > 0:
        coef = min(1.0, max_norm / (total + 1e-6))
        if coef < 1.0:
            for p in model.parameters():
                p.grad.mul_(coef)
    return total
