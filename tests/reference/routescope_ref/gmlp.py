"""gMLP, exactly as MODELS.md "gMLP (spatial gating unit)" gives it (written from MODELS.md and
docs/decisions.md alone, no engine code read).

Pre-norm residual, with X = LN(h):
    Z      = gelu(u(X))                    u: d -> I (I = 6d unless model.d_inner)
    Z1, Z2 = Z[..., :I/2], Z[..., I/2:]    the first half is the bypass
    s      = Z1 * (W . LN_s(Z2) + b)       W [n, n] over positions, b [n], n = model.max_len
    h     <- h + v(s)                      v: I/2 -> d
W . Z mixes positions: out[b, i, c] = sum_j W[i, j] Z[b, j, c]. A batch of padded length L <= n
uses W[:L, :L] and b[:L] (the same as padding the sequence to n with zeros after LN_s).
model.gmlp.causal: W's strict upper triangle is zeroed (torch.tril), so position i sees j <= i.
Init: W uniform(-1e-3/n, 1e-3/n) (upper triangle 0 when causal), b = 1. No position embeddings
(models.Embeddings leaves them out for gmlp). No mask inside the block: pads are mixed in too.

Parameter names (prefix layers.<i>.): norm.{weight,bias} [d], u.{weight,bias} [I, d], [I],
norm_spatial.{weight,bias} [I/2], spatial.weight [n, n], spatial.bias [n], v.{weight,bias} [d, I/2], [d].
"""
import torch
import torch.nn.functional as F
from torch import nn

from . import config as config_mod


class SpatialMix(nn.Module):
    """W . Z + b over the sequence axis (dim 1) of Z [B, L, C]."""

    def __init__(self, n, causal):
        super().__init__()
        self.causal = causal
        self.weight = nn.Parameter(torch.empty(n, n))
        self.bias = nn.Parameter(torch.empty(n))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        n = self.weight.shape[0]
        self.weight.uniform_(-1e-3 / n, 1e-3 / n)
        if self.causal:
            self.weight.copy_(torch.tril(self.weight))
        self.bias.fill_(1.0)

    def forward(self, z):
        L = z.shape[1]
        w = self.weight[:L, :L]
        if self.causal:
            w = torch.tril(w)
        return torch.einsum("ij,bjc->bic", w, z) + self.bias[:L, None]


class GmlpBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d, inner = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm = nn.LayerNorm(d, eps=m["ln_eps"])
        self.u = nn.Linear(d, inner)
        self.norm_spatial = nn.LayerNorm(inner // 2, eps=m["ln_eps"])
        self.spatial = SpatialMix(m["max_len"], m["gmlp"]["causal"])
        self.v = nn.Linear(inner // 2, d)

    def forward(self, h, key_valid):
        del key_valid  # MODELS.md gives no mask inside the block
        z = F.gelu(self.u(self.norm(h)), approximate="tanh" if self.act == "tanh" else "none")
        z1, z2 = z.chunk(2, dim=-1)
        return h + self.v(z1 * self.spatial(self.norm_spatial(z2)))
