"""S-LSTM, the sentence-state LSTM of MODELS.md "S-LSTM", written from MODELS.md alone with plain
torch operations differentiated by autograd (no engine code read; no hand-written backward).

One parameter set, applied for T = model.n_layers recurrent steps. x [B, L, d] is the embeddings
output, valid [B, L] marks the real tokens (position < length).

    h^0_i = c^0_i = x_i,    g^0 = c_g^0 = mean of x_i over the real tokens
    left/right neighbours: h_{i-1}, h_{i+1}, zero where that position is outside the sequence or
    a pad (likewise c)

    per step, with the old h, c, g, c_g:
    [v_i, v_l, v_r, v_f, v_s, v_o, v_u] = W [h_i; h_{i-1}; h_{i+1}; g] + U x_i + b     (chunks of d)
    model.slstm.gate_norm: each v_k goes through its own LayerNorm norm_<k>
    i, l, r, f, s, o = sigmoid(v);  u = tanh(v_u)
    (i, l, r, f, s) = softmax over the five of (sigmoid values)
    c_i = u i + c_{i-1} l + c_{i+1} r + c_i f + c_g s;   h_i = o tanh(c_i)

    sentence node, from the NEW h_i, c_i and the OLD g, c_g:
    hbar = mean of h_i over the real tokens
    [f_g, o_g] = sigmoid(W_g [g; hbar] + b_g)              (chunks of d)
    f'_i = sigmoid(W_f [h_i; g] + b_f)
    weights = softmax over {f'_1 .. f'_n (real tokens only), f_g}, per channel
    c_g = sum_i w_i c_i + w_g c_g;   g = o_g tanh(c_g)

Parameter names (module `slstm`): W.{weight [7d, 4d], bias [7d]}, U.weight [7d, d] (no bias),
W_g.{weight [2d, 2d], bias [2d]}, W_f.{weight [d, 2d], bias [d]}, norm_{i,l,r,f,s,o,u}.{weight,
bias} [d] with gate_norm. The MLM head reads the final h, classification with model.pool =
"sentence" the final g.
"""
import torch
from torch import nn

GATES = ("i", "l", "r", "f", "s", "o", "u")


def masked_mean(x, valid):
    w = valid.to(x.dtype)[:, :, None]
    return (x * w).sum(dim=1) / w.sum(dim=1)


def neighbours(x, valid):
    """(left, right) of x [B, L, d]: x[:, t-1] and x[:, t+1], zero outside the row or at pads."""
    keep = valid.to(x.dtype)[:, :, None]
    xm = x * keep  # a pad never serves as anybody's neighbour
    zero = torch.zeros_like(x[:, :1])
    left = torch.cat([zero, xm[:, :-1]], dim=1)
    right = torch.cat([xm[:, 1:], zero], dim=1)
    return left, right


class SLSTM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d = m["d_model"]
        self.d = d
        self.steps = m["n_layers"]
        self.gate_norm = m["slstm"]["gate_norm"]
        self.W = nn.Linear(4 * d, 7 * d)
        self.U = nn.Linear(d, 7 * d, bias=False)
        self.W_g = nn.Linear(2 * d, 2 * d)
        self.W_f = nn.Linear(2 * d, d)
        if self.gate_norm:
            for k in GATES:
                setattr(self, "norm_" + k, nn.LayerNorm(d, eps=m["ln_eps"]))

    def step(self, h, c, g, c_g, Ux, valid, probes=None):
        """One recurrent step. With a dict `probes`, also stores the step's probes there (MODELS.md,
        DUMP_FORMAT.md): the five softmaxed token gates i, l, r, f, s, the output gate o (each
        [B, L, d]) and sentence_weight [B, L + 1, d] (token weights, 0 at pads, then the node's own)."""
        B, L, d = h.shape
        h_left, h_right = neighbours(h, valid)
        c_left, c_right = neighbours(c, valid)
        g_seq = g[:, None, :].expand(B, L, d)
        pre = self.W(torch.cat([h, h_left, h_right, g_seq], dim=-1)) + Ux
        v = list(pre.split(d, dim=-1))
        if self.gate_norm:
            v = [getattr(self, "norm_" + k)(vk) for k, vk in zip(GATES, v)]
        sig = [torch.sigmoid(vk) for vk in v[:6]]
        five = torch.softmax(torch.stack(sig[:5], dim=0), dim=0)
        i, l, r, f, s = five.unbind(0)
        o, u = sig[5], torch.tanh(v[6])
        c_new = u * i + c_left * l + c_right * r + c * f + c_g[:, None, :] * s
        h_new = o * torch.tanh(c_new)

        hbar = masked_mean(h_new, valid)
        f_g, o_g = torch.sigmoid(self.W_g(torch.cat([g, hbar], dim=-1))).split(d, dim=-1)
        f_tok = torch.sigmoid(self.W_f(torch.cat([h_new, g_seq], dim=-1)))
        scores = torch.cat([f_tok.masked_fill(~valid[:, :, None], float("-inf")), f_g[:, None, :]], dim=1)
        weights = torch.softmax(scores, dim=1)  # [B, L + 1, d]; 0 at pads
        c_g_new = (weights[:, :L] * c_new).sum(dim=1) + weights[:, L] * c_g
        g_new = o_g * torch.tanh(c_g_new)
        if probes is not None:
            probes.update(i=i, l=l, r=r, f=f, s=s, o=o, sentence_weight=weights)
        return h_new, c_new, g_new, c_g_new

    def forward(self, x, valid, trace=None):
        """(final h [B, L, d], final g [B, d]). With a list `trace`, appends one dict per state:
        {"h", "g"} for step 0 (h = x, g = g^0) and {"h", "g", "gates"} after each step ℓ = 1..T."""
        Ux = self.U(x)
        h, c = x, x
        g = masked_mean(x, valid)
        c_g = g
        if trace is not None:
            trace.append({"h": h, "g": g})
        for _ in range(self.steps):
            probes = {} if trace is not None else None
            h, c, g, c_g = self.step(h, c, g, c_g, Ux, valid, probes)
            if trace is not None:
                trace.append({"h": h, "g": g, "gates": probes})
        return h, g
