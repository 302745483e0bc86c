"""Birdie, the gated linear RNN of MODELS.md, written from MODELS.md alone (no engine code read).

Per layer, pre-norm residual, X = LN(h), state size N = d_inner (null -> 3d):

    i_t = sigmoid(w_i x_t)   z_t = w_z x_t   o_t = gelu(w_o x_t)   f_t = sigmoid(w_f x_t)
    h_t = f_t * h_{t-1} + i_t * z_t
    y_t = w_out(o_t * h_t);  h <- h + y

w_i, w_z, w_o, w_f: d->N, w_out: N->d, all with bias; gelu is the block gelu (model.block_gelu).
Layer modes (model.birdie.mode; model.birdie.layer_pattern "alternate" makes odd layers causal,
"uniform" keeps every layer in the mode):
    causal          all N channels scan left to right;
    bidirectional   channels [0, N/2) left to right, [N/2, N) right to left:
                    h_t = f_t * h_{t+1} + i_t * z_t;
    prefix          as bidirectional, but the right-to-left half takes nothing from the causal
                    region: its carry into t is cut where t or t+1 is in the causal region.
Reset mask [B, L] (batch.h5 `reset_mask`, optional): bit 1 = position starts a new packed sample,
bit 2 = position lies in the causal region. Left to right the carry into a sample start is cut (f
treated as 0); right to left the carry into t is cut where t+1 starts a new sample.

The scan here is a plain loop over positions (autograd differentiates it); the recurrence runs in
the model's dtype.
"""
import torch
import torch.nn.functional as F
from torch import nn

from . import config as config_mod

NEW_SAMPLE, CAUSAL = 1, 2


def layer_mode(cfg, index):
    b = cfg["model"]["birdie"]
    if b["layer_pattern"] == "alternate" and index % 2 == 1:
        return "causal"
    return b["mode"]


def carry_masks(reset_mask, mode, B, L, dtype, device=None):
    """(keep_forward, keep_reverse) [B, L] of 0/1: 1 = the state flows into that position."""
    if reset_mask is None:
        ones = torch.ones(B, L, dtype=dtype, device=device)
        return ones, ones
    m = reset_mask.long()
    keep_f = ((m & NEW_SAMPLE) == 0).to(dtype)
    nxt = torch.cat([m[:, 1:], torch.zeros(B, 1, dtype=torch.long, device=m.device)], dim=1)
    cut = (nxt & NEW_SAMPLE) != 0
    if mode == "prefix":
        cut = cut | (((m | nxt) & CAUSAL) != 0)
    cut[:, L - 1] = True  # nothing to the right of the last position
    return keep_f, (~cut).to(dtype)


def scan(f, u, keep, reverse):
    """h_t = keep_t * f_t * h_prev + u_t over dim 1 of [B, L, C], prev = t-1 (or t+1 if reverse)."""
    B, L, C = u.shape
    state = torch.zeros(B, C, dtype=u.dtype, device=u.device)
    out = [None] * L
    order = range(L - 1, -1, -1) if reverse else range(L)
    for t in order:
        state = keep[:, t, None] * f[:, t] * state + u[:, t]
        out[t] = state
    return torch.stack(out, dim=1)


class BirdieBlock(nn.Module):
    def __init__(self, cfg, index=0):
        super().__init__()
        m = cfg["model"]
        d, n = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm = nn.LayerNorm(d, eps=m["ln_eps"])
        self.w_i = nn.Linear(d, n)
        self.w_z = nn.Linear(d, n)
        self.w_o = nn.Linear(d, n)
        self.w_f = nn.Linear(d, n)
        self.w_out = nn.Linear(n, d)
        self.mode = layer_mode(cfg, index)

    def forward(self, h, key_valid, reset_mask=None):
        del key_valid  # no padding mask inside the block: pads go through the scan (as in BiGS)
        X = self.norm(h)
        i = torch.sigmoid(self.w_i(X))
        z = self.w_z(X)
        o = F.gelu(self.w_o(X), approximate="tanh" if self.act == "tanh" else "none")
        f = torch.sigmoid(self.w_f(X))
        u = i * z
        B, L, N = u.shape
        keep_f, keep_r = carry_masks(reset_mask, self.mode, B, L, u.dtype, u.device)
        if self.mode == "causal":
            H = scan(f, u, keep_f, reverse=False)
        else:
            half = N // 2
            H = torch.cat([scan(f[..., :half], u[..., :half], keep_f, reverse=False),
                           scan(f[..., half:], u[..., half:], keep_r, reverse=True)], dim=-1)
        return h + self.w_out(o * H)


def assign_layer_modes(layers, cfg):
    """Gives each BirdieBlock of a ModuleList its layer's mode (layer_pattern)."""
    for index, layer in enumerate(layers):
        layer.mode = layer_mode(cfg, index)
