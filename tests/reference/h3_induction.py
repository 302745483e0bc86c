#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""H3's induction-head experiment (Dao, Fu et al., "Hungry Hungry Hippos", Table 1: S4D 35.6,
H3 100, attention 100), re-stated in PyTorch from the public configuration it was run with
(HazyResearch/safari: configs/experiment/synthetics/induction_head/{base,s4d,transformer}.yaml,
configs/pipeline/induction_head.yaml, configs/dataset/icl_synthetics.yaml,
configs/model/layer/s4d.yaml, src/models/sequence/simple_lm.py, src/models/sequence/ssm/s4d.py,
src/dataloaders/synthetics.py). Independent of the engine: it exists to find out, by measurement,
why Routescope's `experiment induction` shows no contrast between the plain SSM stack and the
gated one (issue 27, docs/experiments.md).

What it states, from those files:
- data: 18 content symbols, the copy prefix `=>` and `.` (vocabulary 20, ids in the sorted order
  of safari's string vocabulary); 30 uniform content tokens, `=>` written over a uniform position
  in [0, 28) (the token after it is the one to copy), `=>` appended, then the copied token:
  32 tokens, the model reads the first 31 and predicts the next token at every position. 5000
  training and 500 test sequences from numpy's default_rng(seed), de-duplicated and shuffled as
  safari does. Training loss on every position; the metric is the accuracy at the last one.
- model `lm_simple`: token embeddings (std 0.02, tied to the output), two pre-norm blocks
  (dropout 0.1 on the embeddings, LayerNorm -> mixer -> add -> LayerNorm -> MLP 32-128-32 with
  tanh-GELU), a final LayerNorm; output projections of the MLP and of attention at std
  0.02 / sqrt(2 n_layer).
- S4D mixer: no input projection; per channel a diagonal SSM of N = 64 (32 complex modes, A shared
  by the channels, S4D-Inv imaginary parts, real part -0.5), ZOH, dt ~ logU[1e-3, 1e-1], C and B
  complex normal with B normalised, D ~ N(0, 1); y = K * u + D u, then GELU, then a 32 x 32
  output linear. log dt, A's real (as log) and imaginary parts train at lr min(1e-3, lr) without
  weight decay.
- attention: one causal head, attention dropout 0.1, learned absolute position embeddings.
- AdamW lr 5e-4, weight decay 0.1 on every other parameter, betas (0.9, 0.999), no clipping,
  batch 32, 400 epochs (62,800 steps); timm's cosine with a linear warm-up from 1e-6 over 40
  epochs and a floor of 0.1 lr.

Variants (each one difference towards Routescope's STACK/SSM, see --help): `--mixer stack` is
our block (input projection, SSM, output projection, no activation between; LegS A, dt in
[0.01, 1], C ~ N(0, sqrt 0.5), D = 1, one A per channel), `--ssm-act none` removes the GELU
from safari's S4D, `--dt` sets the step range, `--a-init` the imaginary parts.

`--mixer routescope-bert` is not safari's model: it is Routescope's STACK/ATT as `experiment
induction` trained it until session 16 (`--rb-emb-norm` gives today's, which has no LayerNorm
after the embeddings), built from the engine's parity oracle (routescope_ref.models.Model: the
causal pre-norm BERT with the embeddings' LayerNorm, the MLM head's dense + gelu + LayerNorm
before the tied decoder and its bias, no final LayerNorm, LayerNorm eps 1e-12, init 0.02, dropout
0.1 on the embeddings and the attention probabilities), on the engine's layout ([CLS] sequence
[SEP] over its vocabulary of 24, next-token loss at every position up to the [SEP]) with the
engine's optimiser (routescope_ref.adamw: its groups, warm-up (s+1)/6280, cosine to 0 after the
warm-up, global-norm clipping at 1). The `--rb-*` options move one of those properties at a time
to safari's, to find which one keeps the engine's attention at chance (docs/experiments.md).

Prints one JSON line per epoch and a final summary line.
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Routescope's A_im inits and S4D kernel: the parity oracle's (routescope_ref/ssm.py, which takes
# the kernel from python/routescope/ssm.py).
from routescope_ref.ssm import a_im_init, hippo_legs_imag, s4d_kernel  # noqa: E402

N_SYMBOLS = 18
VOCAB = 20
# safari's vocabulary is the sorted list of strings ['.', '0', '1', '10', ..., '17', '2', ..., '9', '=>']
NOOP_ID = 0
PREFIX_ID = 19
CONTENT_IDS = list(range(1, 19))


def generate(seed, n_train, n_test, input_len=30):
    """Examples [n, 32] (int64), as safari's ICLDataModule.setup for copy_method induction_head."""
    rng = np.random.default_rng(seed)
    p = np.array([0.0] + [1.0 / N_SYMBOLS] * N_SYMBOLS + [0.0])

    def one():
        seq = rng.choice(VOCAB, input_len, replace=True, p=p).tolist()
        seq.append(PREFIX_ID)
        rng.uniform()  # safari draws it to choose between 1 and num_triggers (= 1) triggers
        pos = int(rng.integers(input_len - 2, size=1)[0])
        to_copy = seq[pos + 1]
        seq[pos] = PREFIX_ID
        return seq + [to_copy]

    sets = []
    for count in (n_train, n_test):
        ex = torch.tensor([one() for _ in range(count)], dtype=torch.long)
        ex = torch.unique(ex, dim=0, sorted=False).tolist()
        while len(ex) < count:
            new = one()
            if new not in ex:
                ex.append(new)
        rng.shuffle(ex)
        sets.append(torch.tensor(ex, dtype=torch.long))
    return sets


# ---------------------------------------------------------------------------------------- SSMs


class SafariS4DKernel(nn.Module):
    """K[h, l] = 2 Re sum_n C'[h, n] exp(dt_h w_n l), C' = C (exp(dt_h w_n) - 1) / w_n."""

    def __init__(self, H, N=64, dt=(1e-3, 1e-1), a_init="inv", shared_a=True):
        super().__init__()
        half = N // 2
        n = torch.arange(half, dtype=torch.float64)
        if a_init == "inv":
            imag = 1.0 / math.pi * N * (N / (1 + 2 * n) - 1)
        elif a_init == "lin":
            imag = math.pi * n
        elif a_init == "legs":
            imag = torch.from_numpy(hippo_legs_imag(N))[half:]  # the non-negative half (conjugate pairs)
        else:
            raise ValueError(a_init)
        rows = 1 if shared_a else H
        w = (-0.5 * torch.ones(rows, half, dtype=torch.float64)) + 1j * imag.expand(rows, half)
        B = torch.randn(rows, half, dtype=torch.cdouble)
        zeta = 2 * torch.sum(torch.abs(-B / w) ** 2, dim=-1, keepdim=True)
        B = B / zeta**0.5
        C = torch.randn(1, H, half, dtype=torch.cdouble) * B.expand(H, half)
        self.C = nn.Parameter(torch.view_as_real(C.to(torch.cfloat)).contiguous())
        lo, hi = math.log(dt[0]), math.log(dt[1])
        self.log_dt = nn.Parameter(torch.rand(H) * (hi - lo) + lo)
        self.log_w_real = nn.Parameter(torch.log(-w.real + 1e-4).float())
        self.w_imag = nn.Parameter(w.imag.float())
        self.H = H

    def ssm_parameters(self):
        return [self.log_dt, self.log_w_real, self.w_imag]

    def forward(self, L):
        dt = torch.exp(self.log_dt)
        C = torch.view_as_complex(self.C)
        w = (-torch.exp(self.log_w_real) + 1j * self.w_imag).expand(self.H, -1)
        dtA = w * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L)
        C = C * (torch.exp(dtA) - 1.0) / w
        return 2 * torch.einsum("chn,hnl->chl", C, torch.exp(K)).real[0]  # [H, L]


class RoutescopeKernel(nn.Module):
    """Routescope's S4D (MODELS.md): A_re = -0.5 (bounded), A_im from the named init, C ~
    N(0, sqrt 0.5) per part, log_step ~ U[log dt_min, log dt_max], one A per channel; the kernel
    is the python package's s4d_kernel."""

    def __init__(self, H, N=64, dt=(0.01, 1.0), a_init="legs"):
        super().__init__()
        imag = a_im_init({"legs": "hippo"}.get(a_init, a_init), N)  # the engine's inits
        self.A_re = nn.Parameter(torch.full((H, N), -0.5))
        self.A_im = nn.Parameter(torch.tensor(imag, dtype=torch.float32).expand(H, N).clone())
        self.C = nn.Parameter(torch.randn(H, N, 2) * math.sqrt(0.5))
        self.log_step = nn.Parameter(torch.empty(H).uniform_(math.log(dt[0]), math.log(dt[1])))

    def ssm_parameters(self):
        return [self.A_re, self.A_im, self.log_step]

    def forward(self, L):
        return s4d_kernel(self.A_re, self.A_im, self.C, self.log_step, L).float()


def causal_conv(u, K):
    """u [B, L, H], K [H, L] -> y[b, t, h] = sum_{s <= t} K[h, t - s] u[b, s, h]."""
    L = u.shape[1]
    uf = torch.fft.rfft(u.transpose(1, 2), n=2 * L)
    kf = torch.fft.rfft(K, n=2 * L)
    return torch.fft.irfft(uf * kf, n=2 * L)[..., :L].transpose(1, 2)


class S4DMixer(nn.Module):
    """safari's S4D (transposed = False): y = act(K * u + D u), then the output linear."""

    def __init__(self, d, args):
        super().__init__()
        self.kernel = SafariS4DKernel(d, dt=args.dt, a_init=args.a_init, shared_a=True)
        self.D = nn.Parameter(torch.randn(1, d))
        self.act = nn.GELU() if args.ssm_act == "gelu" else nn.Identity()
        self.output_linear = nn.Linear(d, d)

    def forward(self, u):
        y = causal_conv(u, self.kernel(u.shape[1])) + u * self.D[0]
        return self.output_linear(self.act(y))


class StackMixer(nn.Module):
    """Routescope's causal STACK/SSM sub-block without its residual: wo(SSM(wi(x))), D = 1."""

    def __init__(self, d, args):
        super().__init__()
        self.wi = nn.Linear(d, d)
        self.kernel = RoutescopeKernel(d, dt=args.dt, a_init=args.a_init)
        self.D = nn.Parameter(torch.ones(d))
        self.act = nn.GELU() if args.ssm_act == "gelu" else nn.Identity()
        self.wo = nn.Linear(d, d)

    def forward(self, x):
        u = self.wi(x)
        y = causal_conv(u, self.kernel(u.shape[1])) + u * self.D
        return self.wo(self.act(y))


class GatedMixer(nn.Module):
    """Routescope's causal GATED/SSM block body (the BiGS block, forward path only) without its
    residual: V = gelu(dv X), U = gelu(du X), Y = duc(SSM(U)), out = do(gelu(dol Y) * V), inner
    3d; the SSM as StackMixer's. A block of it has no MLP (the BiGS layer has none)."""

    has_mlp = False

    def __init__(self, d, args):
        super().__init__()
        inner = 3 * d
        self.dv, self.du, self.duc = nn.Linear(d, inner), nn.Linear(d, d), nn.Linear(d, d)
        self.dol, self.do = nn.Linear(d, inner), nn.Linear(inner, d)
        self.kernel = RoutescopeKernel(d, dt=args.dt, a_init=args.a_init)
        self.D = nn.Parameter(torch.ones(d))

    def forward(self, x):
        g = lambda t: F.gelu(t, approximate="tanh")  # noqa: E731
        v, u = g(self.dv(x)), g(self.du(x))
        y = self.duc(causal_conv(u, self.kernel(u.shape[1])) + u * self.D)
        return self.do(g(self.dol(y)) * v)


class Attention(nn.Module):
    """safari's MHA with one head, causal, attention dropout."""

    def __init__(self, d, args):
        super().__init__()
        self.Wqkv = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        q, k, v = self.Wqkv(x).chunk(3, dim=-1)
        s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        L = x.shape[1]
        s = s + torch.triu(torch.full((L, L), -10000.0), 1)
        return self.out_proj(self.drop(torch.softmax(s, dim=-1)) @ v)


class Block(nn.Module):
    def __init__(self, d, mixer, drop1):
        super().__init__()
        self.drop1 = nn.Dropout(drop1)
        self.norm1 = nn.LayerNorm(d, eps=1e-5)
        self.mixer = mixer
        self.has_mlp = getattr(mixer, "has_mlp", True)
        if self.has_mlp:
            self.norm2 = nn.LayerNorm(d, eps=1e-5)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

    def forward(self, h, residual):
        residual = self.drop1(h) + (residual if residual is not None else 0)
        h = self.mixer(self.norm1(residual))
        if not self.has_mlp:
            return h, residual
        residual = h + residual
        h = self.fc2(F.gelu(self.fc1(self.norm2(residual)), approximate="tanh"))
        return h, residual


class LM(nn.Module):
    def __init__(self, args, d=32, n_layer=2):
        super().__init__()
        mixers = {"s4d": S4DMixer, "stack": StackMixer, "gated": GatedMixer, "attention": Attention}
        self.emb = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(32, d) if args.pos_emb else None
        self.blocks = nn.ModuleList(
            [Block(d, mixers[args.mixer](d, args), 0.1 if i == 0 else 0.0) for i in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        for name, p in self.named_parameters():  # simple_lm's _init_weights
            leaf = name.rsplit(".", 2)
            if name.endswith("weight") and p.dim() == 2 and "kernel" not in name:
                std = args.init_std if ".mixer." in name else 0.02
                if leaf[-2] in ("fc2", "out_proj"):
                    std = 0.02 / math.sqrt(2 * n_layer)
                nn.init.normal_(p, std=std)
            elif name.endswith("bias") and "norm" not in name and "ln_f" not in name:
                nn.init.zeros_(p)

    def forward(self, ids):
        h = self.emb(ids)
        if self.pos is not None:
            h = h + self.pos(torch.arange(ids.shape[1]))
        residual = None
        for b in self.blocks:
            h, residual = b(h, residual)
        return self.ln_f(h + residual) @ self.emb.weight.t()

    def ssm_parameters(self):
        out = []
        for b in self.blocks:
            if hasattr(b.mixer, "kernel"):
                out += b.mixer.kernel.ssm_parameters()
        return out


# ------------------------------------------------------------ Routescope's STACK/ATT (the engine)

# The engine's task vocabulary (engine/data/special_tokens.hpp, induction_task.cpp): [PAD] [UNK]
# [CLS] [SEP] [MASK], the 18 symbols, the trigger.
RS_PAD, RS_CLS, RS_SEP, RS_VOCAB = 0, 2, 3, 24
RS_ID = torch.tensor([RS_PAD] + [5 + i for i in range(N_SYMBOLS)] + [5 + N_SYMBOLS])  # safari id -> engine id


class SafariHead(nn.Module):
    """safari's output: a final LayerNorm, then the tied embeddings (no dense, no bias)."""

    def __init__(self, d, eps):
        super().__init__()
        self.norm = nn.LayerNorm(d, eps=eps)

    def forward(self, h, word_weight):
        return F.linear(self.norm(h), word_weight)


class RoutescopeBert(nn.Module):
    """routescope_ref's Model for the engine's induction STACK/ATT, with the --rb-* changes."""

    def __init__(self, args, n_layer=2):
        super().__init__()
        from routescope_ref import config as rcfg
        from routescope_ref.models import Model

        cfg = rcfg.defaults()
        cfg["model"].update(arch="bert", vocab_size=RS_VOCAB, d_model=32, n_layers=n_layer, max_len=34,
                            dropout=0.1, n_heads=1, causal=True, init_std=0.02,
                            ln_eps=1e-5 if args.rb_ln_eps else 1e-12,
                            embedding_norm=not args.rb_emb_norm)
        self.cfg = cfg
        self.safari_layout = args.rb_layout
        self.net = Model(cfg)
        if args.rb_head:
            self.net.mlm = SafariHead(32, cfg["model"]["ln_eps"])
        if args.rb_init:  # simple_lm's scaled output projections
            with torch.no_grad():
                for layer in self.net.layers:
                    nn.init.normal_(layer.attn.o.weight, std=0.02 / math.sqrt(2 * n_layer))
                    nn.init.normal_(layer.ffn2.weight, std=0.02 / math.sqrt(2 * n_layer))

    def rows(self, ex):
        """(input ids, next-token labels, the answer's position) of safari examples [n, 32]."""
        ids = RS_ID[ex]
        if self.safari_layout:
            return ids[:, :-1], ids[:, 1:], ids.shape[1] - 2
        n = ids.shape[0]
        full = torch.cat([torch.full((n, 1), RS_CLS), ids, torch.full((n, 1), RS_SEP)], dim=1)  # 34
        labels = torch.cat([full[:, 1:], torch.full((n, 1), -100)], dim=1)  # nothing after [SEP]
        return full, labels, full.shape[1] - 3  # the second trigger predicts the answer

    def forward(self, ids):
        lengths = torch.full((ids.shape[0],), ids.shape[1])
        h, _ = self.net.encode(ids, lengths)
        return self.net.mlm_logits(h)


def lr_at(step, lr, total, warmup, lr_min, warmup_init=1e-6):
    """timm CosineLRScheduler(t_initial=total, warmup_t=warmup, warmup_prefix=False)."""
    if step < warmup:
        return warmup_init + step * (lr - warmup_init) / warmup
    return lr_min + 0.5 * (lr - lr_min) * (1 + math.cos(math.pi * step / total))


def accuracy(model, test):
    model.eval()
    with torch.no_grad():
        if isinstance(model, RoutescopeBert):
            ids, labels, at = model.rows(test)
            logits, answers = model(ids)[:, at], labels[:, at]
        else:
            logits, answers = model(test[:, :-1])[:, -1], test[:, -1]
    model.train()
    return float((logits.argmax(-1) == answers).float().mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mixer", choices=["s4d", "stack", "gated", "attention", "routescope-bert"],
                    default="s4d")
    ap.add_argument("--init-std", type=float, default=None,
                    help="std of the mixer's linear layers (default 0.3 for gated, as Routescope's "
                    "experiment; 0.02 otherwise, as safari)")
    ap.add_argument("--ssm-act", choices=["gelu", "none"], default=None,
                    help="activation after the SSM (default: gelu for s4d, none for stack)")
    ap.add_argument("--dt", type=lambda s: tuple(float(x) for x in s.split(",")), default=None,
                    help="dt_min,dt_max (default 1e-3,1e-1 for s4d; 0.01,1 for stack)")
    ap.add_argument("--a-init", choices=["inv", "lin", "legs"], default=None,
                    help="imaginary parts of A (default inv for s4d, legs for stack)")
    ap.add_argument("--pos-emb", action="store_true", help="learned position embeddings (on for attention)")
    ap.add_argument("--loss", choices=["all", "last"], default="all",
                    help="next-token loss on every position (H3) or on the last (the copy) only")
    ap.add_argument("--wd", choices=["all", "routescope"], default="all",
                    help="weight decay on every parameter but the SSM's (safari) or not on biases, "
                    "LayerNorms and embeddings either (Routescope's AdamW groups)")
    rb = ap.add_argument_group("routescope-bert: one engine property at a time set to safari's")
    rb.add_argument("--rb-emb-norm", action="store_true", help="no LayerNorm after the embeddings")
    rb.add_argument("--rb-head", action="store_true",
                    help="a final LayerNorm and the tied decoder instead of the MLM head")
    rb.add_argument("--rb-ln-eps", action="store_true", help="LayerNorm eps 1e-5 instead of 1e-12")
    rb.add_argument("--rb-init", action="store_true", help="output projections at std 0.02/sqrt(4)")
    rb.add_argument("--rb-layout", action="store_true",
                    help="safari's 31 input tokens without [CLS] and [SEP]")
    rb.add_argument("--rb-clip", action="store_true", help="no gradient clipping")
    rb.add_argument("--rb-schedule", action="store_true",
                    help="safari's schedule (warm-up from 1e-6, cosine over all steps to 0.1 lr)")
    ap.add_argument("--data-seed", type=int, default=0, help="safari's dataset seed (0)")
    ap.add_argument("--seed", type=int, default=0, help="initialisation and data order")
    ap.add_argument("--epochs", type=int, default=400)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--eval-every", type=int, default=10, help="epochs between test evaluations")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    stack = args.mixer in ("stack", "gated")
    args.init_std = args.init_std if args.init_std is not None else (0.3 if args.mixer == "gated" else 0.02)
    args.ssm_act = args.ssm_act or ("none" if stack else "gelu")
    args.dt = args.dt or ((0.01, 1.0) if stack else (1e-3, 1e-1))
    args.a_init = args.a_init or ("legs" if stack else "inv")
    args.pos_emb = args.pos_emb or args.mixer == "attention"
    torch.set_num_threads(args.threads)

    train, test = generate(args.data_seed, 5000, 500)
    torch.manual_seed(args.seed)
    if args.mixer == "routescope-bert":
        return train_routescope_bert(args, train, test)
    model = LM(args)
    ssm = {id(p) for p in model.ssm_parameters()}
    exempt = set(ssm)
    if args.wd == "routescope":
        for name, p in model.named_parameters():
            if p.dim() < 2 or name.startswith(("emb.", "pos.")) or name.endswith(".D"):
                exempt.add(id(p))
    groups = [{"params": [p for p in model.parameters() if id(p) not in exempt], "weight_decay": 0.1},
              {"params": [p for p in model.parameters() if id(p) in exempt and id(p) not in ssm],
               "weight_decay": 0.0}]
    if ssm:
        groups.append({"params": model.ssm_parameters(), "weight_decay": 0.0, "lr": min(1e-3, args.lr)})
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), foreach=True)
    base = [g["lr"] for g in opt.param_groups]
    steps_per_epoch = math.ceil(len(train) / 32)
    total, warmup = steps_per_epoch * args.epochs, steps_per_epoch * math.ceil(args.epochs / 10)

    def update(idx, step):
        batch = train[idx]
        logits = model(batch[:, :-1])
        if args.loss == "all":
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        else:
            loss = F.cross_entropy(logits[:, -1], batch[:, -1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        for g, b in zip(opt.param_groups, base):
            g["lr"] = lr_at(step, b, total, warmup, 0.1 * b)
        opt.step()
        return float(loss)

    train_epochs(args, model, test, len(train), update,
                 {"mixer": args.mixer, "ssm_act": args.ssm_act, "dt": args.dt, "a_init": args.a_init,
                  "pos_emb": args.pos_emb, "loss": args.loss, "init_std": args.init_std, "wd": args.wd})


def train_epochs(args, model, test, n_train, update, summary, epoch_start=None, epoch_fields=None):
    """The epoch loop of both trainers: a fresh order of the training set each epoch (a generator
    seeded with --seed), `update(indices, step)` trains one batch of 32 and returns its loss; the
    test accuracy every --eval-every epochs (one JSON line, with `epoch_fields()`), then the
    summary line (`summary` and the run's facts)."""
    steps_per_epoch = math.ceil(n_train / 32)
    gen = torch.Generator().manual_seed(args.seed)
    step, best, acc, t0 = 0, 0.0, 0.0, time.time()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(n_train, generator=gen)
        if epoch_start:
            epoch_start()
        loss_sum = 0.0
        for i in range(0, n_train, 32):
            loss_sum += update(order[i : i + 32], step)
            step += 1
        if epoch % args.eval_every == 0 or epoch == args.epochs:
            acc = accuracy(model, test)
            best = max(best, acc)
            line = {"epoch": epoch, "step": step, "train_loss": loss_sum / steps_per_epoch}
            line.update(epoch_fields() if epoch_fields else {})
            line.update(test_accuracy=acc, seconds=round(time.time() - t0, 1))
            print(json.dumps(line), flush=True)
    print(json.dumps({"summary": True, **summary, "seed": args.seed, "data_seed": args.data_seed,
                      "parameters": sum(p.numel() for p in model.parameters()), "steps": step,
                      "final_test_accuracy": acc, "best_test_accuracy": best,
                      "seconds": round(time.time() - t0, 1)}), flush=True)

def train_routescope_bert(args, train, test):
    from routescope_ref import adamw

    model = RoutescopeBert(args)
    steps_per_epoch = math.ceil(len(train) / 32)
    total, warmup = steps_per_epoch * args.epochs, steps_per_epoch * math.ceil(args.epochs / 10)
    cfg = model.cfg
    cfg["train"].update(lr=args.lr, weight_decay=0.1, warmup_steps=warmup, steps=total,
                        schedule="cosine", clip_grad_norm=0.0 if args.rb_clip else 1.0)
    opt = torch.optim.AdamW(adamw.param_groups(model.net, cfg), lr=args.lr, betas=(0.9, 0.999),
                            eps=1e-8, foreach=True)
    rows, labels, _ = model.rows(train)
    norm = {"max": 0.0}  # the largest gradient norm of the epoch (before clipping)

    def update(idx, step):
        logits = model(rows[idx])
        loss = F.cross_entropy(logits.reshape(-1, RS_VOCAB), labels[idx].reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        max_norm = cfg["train"]["clip_grad_norm"] or float("inf")
        norm["max"] = max(norm["max"], float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)))
        if args.rb_schedule:
            for g in opt.param_groups:
                g["lr"] = lr_at(step, g["base_lr"], total, warmup, 0.1 * g["base_lr"])
        else:
            adamw.set_lr(opt, step, cfg)
        opt.step()
        return float(loss)

    train_epochs(args, model, test, len(train), update,
                 {"mixer": args.mixer, "changed_to_safari": [k for k, v in vars(args).items()
                                                              if k.startswith("rb_") and v]},
                 epoch_start=lambda: norm.update(max=0.0),
                 epoch_fields=lambda: {"max_grad_norm": round(norm["max"], 4)})

if __name__ == "__main__":
    main()
