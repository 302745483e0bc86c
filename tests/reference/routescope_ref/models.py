"""The four architectures of the BiGS paper's 2x2 ablation, exactly as MODELS.md gives them.

Notation: B batch, L padded length, d width, I intermediate width, V vocabulary. Activations are
[B, L, d]; flip reverses the sequence axis over the full padded length L. LN is LayerNorm over d
with eps = model.ln_eps. gelu is the block gelu (gelu_tanh by default, model.block_gelu); heads use
gelu_erf. Dense layers have a bias. Init: normal(0, init_std) weights (embedding tables too), zero
bias, LN scale 1 / bias 0; SSM parameters as ssm.py.

Embeddings:  x = E_word[token] + E_pos[position] (+ E_type[segment]) -> LN -> dropout
  (model.embedding_norm = false: no LN, x = sum -> dropout)

GATED/SSM (BiGS), pre-norm h <- h + F(LN(h)), X = LN(h):
    V   = gelu(dv(X))                        U_f = gelu(du_forward(X))
    U_b = gelu(du_backward(flip(X)))
    Y_f = duc_forward(SSM_f(U_f))            Y_b = flip(duc_backward(SSM_b(U_b)))
    F   = do( gelu(dol(Y_f * Y_b)) * V )
  (no dropout and no attention mask inside the block; pads go through the SSMs)

STACK/SSM (our reading of the paper's ablation, the one that matches its ~12 d^2 parameter count):
    a1 = h  + Wo_f( SSM_f( Wi_f LN1(h) ) )
    a2 = a1 + flip( Wo_b( SSM_b( Wi_b flip(LN2(a1)) ) ) )
    h' = a2 + W2 gelu(W1 LN3(a2))            W1: d->I (I = 4d), W2: I->d

GATED/ATT:  F = do( gelu(dol( duc(MHA(U)) )) * V ),  U = gelu(du(X)), V = gelu(dv(X))

STACK/ATT (BERT, pre-norm):  h <- h + MHA(LN1(h));  h <- h + W2 gelu(W1 LN2(h))
  model.norm_position = post (Hugging Face BERT): h <- LN1(h + MHA(h));  h <- LN2(h + W2 gelu(W1 h))
  model.mlm_head = false: no MLM head (classification only)
  model.mlm_transform = false: the MLM head without dense + gelu, LN(h) -> tied E_word (+ bias)

MHA: heads of width 64 unless model.n_heads; softmax(q k^T / sqrt(d_head)) with padding keys
masked (probability exactly 0); dropout on the probabilities; output projection o.

model.causal = true (docs/config.md; bigs, stack_ssm, gated_att, bert):
    GATED/SSM: no backward branch (no du_backward, duc_backward, ssm_backward):
        V = gelu(dv(X)),  U_f = gelu(du_forward(X)),  Y_f = duc_forward(SSM_f(U_f))
        F = do( gelu(dol(Y_f)) * V )
    STACK/SSM: no backward sub-block (no norm2, wi_backward, ssm_backward, wo_backward):
        a1 = h + Wo_f( SSM_f( Wi_f LN1(h) ) );  h' = a1 + W2 gelu(W1 LN3(a1))
    GATED/ATT, STACK/ATT: MHA also masks every key j > query i (probability exactly 0)

No final LN after the last block. Heads:
    MLM:            logits = LN(gelu_erf(dense(h))) E_word^T + bias        (decoder tied to E_word)
    classification: pool (masked mean | mean of all L positions | first | S-LSTM sentence node)
                    -> dense -> tanh -> dropout -> out

S-LSTM (slstm.py) has no blocks: one shared recurrence `slstm` runs n_layers steps.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from . import config as config_mod
from .errors import ConfigError
from .ssm import SSM
from .birdie import BirdieBlock, assign_layer_modes
from .gmlp import GmlpBlock, SpatialMix
from .slstm import SLSTM


def gelu(x, kind):
    return F.gelu(x, approximate="tanh" if kind == "tanh" else "none")


def flip(x):
    """Reverse the sequence axis (dim 1) over the full padded length."""
    return torch.flip(x, dims=[1])


class Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        self.word = nn.Embedding(m["vocab_size"], m["d_model"])
        # gMLP has no E_pos (MODELS.md: order comes from its spatial gate).
        # E_pos unless gMLP (order from its spatial gate) or model.position_embeddings is false
        has_pos = m["arch"] != "gmlp" and m.get("position_embeddings", True)
        self.position = nn.Embedding(m["max_len"], m["d_model"]) if has_pos else None
        self.type = nn.Embedding(2, m["d_model"]) if m["type_embeddings"] else None
        # model.embedding_norm = false: no LayerNorm after the sum (GPT-2, H3's lm_simple)
        self.norm = nn.LayerNorm(m["d_model"], eps=m["ln_eps"]) if m.get("embedding_norm", True) else None
        self.dropout = nn.Dropout(m["dropout"])

    def forward(self, input_ids, token_type_ids=None):
        L = input_ids.shape[1]
        positions = torch.arange(L, device=input_ids.device)
        x = self.word(input_ids)
        if self.position is not None:
            x = x + self.position(positions)[None]
        # Not `self.type`: that name resolves to nn.Module.type() (a method), not the submodule.
        type_table = self._modules.get("type")
        if type_table is not None:
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = x + type_table(token_type_ids)
        return self.dropout(self.norm(x) if self.norm is not None else x)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention; padding keys are masked, and with causal every key after the query."""

    def __init__(self, d_model, n_heads, dropout, causal=False):
        super().__init__()
        self.n_heads = n_heads
        self.causal = causal
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, key_valid):
        B, L, d = x.shape
        h, dh = self.n_heads, d // self.n_heads

        def heads(t):
            return t.view(B, L, h, dh).transpose(1, 2)  # [B, h, L, dh]

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)  # [B, h, Lq, Lk]
        scores = scores.masked_fill(~key_valid[:, None, None, :], float("-inf"))
        if self.causal:  # query i reads keys j <= i only
            later = torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(later[None, None], float("-inf"))
        probs = self.dropout(torch.softmax(scores, dim=-1))
        self.probs = probs.detach()  # [B, h, Lq, Lk]: what `dump --attention` is compared with
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, d)
        return self.o(ctx)


def _ssm(cfg):
    m, s = cfg["model"], cfg["model"]["ssm"]
    return SSM(m["d_model"], s["n_kernels"], s["n_modes"], s["a_im_init"], s["dt_min"], s["dt_max"])


class GatedSSMBlock(nn.Module):
    """GATED/SSM: the BiGS block."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d, inner = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm = nn.LayerNorm(d, eps=m["ln_eps"])
        self.causal = m["causal"]  # no backward branch: du_backward, duc_backward, ssm_backward
        self.dv = nn.Linear(d, inner)
        self.du_forward = nn.Linear(d, d)
        if not self.causal:
            self.du_backward = nn.Linear(d, d)
        self.duc_forward = nn.Linear(d, d)
        if not self.causal:
            self.duc_backward = nn.Linear(d, d)
        self.dol = nn.Linear(d, inner)
        self.do = nn.Linear(inner, d)
        self.ssm_forward = _ssm(cfg)
        if not self.causal:
            self.ssm_backward = _ssm(cfg)

    def forward(self, h, key_valid):
        del key_valid  # MODELS.md: no attention mask inside the BiGS block
        X = self.norm(h)
        V = gelu(self.dv(X), self.act)
        U_f = gelu(self.du_forward(X), self.act)
        if self.causal:  # the forward path alone gates V
            Y_f = self.duc_forward(self.ssm_forward(U_f))
            return h + self.do(gelu(self.dol(Y_f), self.act) * V)
        U_b = gelu(self.du_backward(flip(X)), self.act)
        Y_f = self.duc_forward(self.ssm_forward(U_f))
        Y_b = flip(self.duc_backward(self.ssm_backward(U_b)))
        return h + self.do(gelu(self.dol(Y_f * Y_b), self.act) * V)


class StackSSMBlock(nn.Module):
    """STACK/SSM: a transformer layer whose attention is two sequential SSM blocks."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d, inner = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm1 = nn.LayerNorm(d, eps=m["ln_eps"])
        self.wi_forward = nn.Linear(d, d)
        self.ssm_forward = _ssm(cfg)
        self.wo_forward = nn.Linear(d, d)
        self.causal = m["causal"]
        if not self.causal:
            self.norm2 = nn.LayerNorm(d, eps=m["ln_eps"])
            self.wi_backward = nn.Linear(d, d)
            self.ssm_backward = _ssm(cfg)
            self.wo_backward = nn.Linear(d, d)
        self.norm3 = nn.LayerNorm(d, eps=m["ln_eps"])
        self.ffn1 = nn.Linear(d, inner)
        self.ffn2 = nn.Linear(inner, d)

    def forward(self, h, key_valid):
        del key_valid  # as the BiGS block: pads go through the SSMs
        a1 = h + self.wo_forward(self.ssm_forward(self.wi_forward(self.norm1(h))))
        if self.causal:  # no backward sub-block
            return a1 + self.ffn2(gelu(self.ffn1(self.norm3(a1)), self.act))
        a2 = a1 + flip(self.wo_backward(self.ssm_backward(self.wi_backward(flip(self.norm2(a1))))))
        return a2 + self.ffn2(gelu(self.ffn1(self.norm3(a2)), self.act))


class GatedAttBlock(nn.Module):
    """GATED/ATT: the gated block with one bidirectional MHA in place of the two SSM branches."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d, inner = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm = nn.LayerNorm(d, eps=m["ln_eps"])
        self.dv = nn.Linear(d, inner)
        self.du = nn.Linear(d, d)
        self.attn = MultiHeadAttention(d, config_mod.n_heads(cfg), m["dropout"], m["causal"])
        self.duc = nn.Linear(d, d)
        self.dol = nn.Linear(d, inner)
        self.do = nn.Linear(inner, d)

    def forward(self, h, key_valid):
        X = self.norm(h)
        V = gelu(self.dv(X), self.act)
        U = gelu(self.du(X), self.act)
        return h + self.do(gelu(self.dol(self.duc(self.attn(U, key_valid))), self.act) * V)


class StackAttBlock(nn.Module):
    """STACK/ATT: the pre-norm BERT layer."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        d, inner = m["d_model"], config_mod.d_inner(cfg)
        self.act = m["block_gelu"]
        self.norm1 = nn.LayerNorm(d, eps=m["ln_eps"])
        self.attn = MultiHeadAttention(d, config_mod.n_heads(cfg), m["dropout"], m["causal"])
        self.norm2 = nn.LayerNorm(d, eps=m["ln_eps"])
        self.ffn1 = nn.Linear(d, inner)
        self.ffn2 = nn.Linear(inner, d)
        self.post = m["norm_position"] == "post"  # Hugging Face BERT: LN after each residual

    def forward(self, h, key_valid):
        if self.post:
            h = self.norm1(h + self.attn(h, key_valid))
            return self.norm2(h + self.ffn2(gelu(self.ffn1(h), self.act)))
        h = h + self.attn(self.norm1(h), key_valid)
        return h + self.ffn2(gelu(self.ffn1(self.norm2(h)), self.act))


BLOCKS = {"bigs": GatedSSMBlock, "stack_ssm": StackSSMBlock, "gated_att": GatedAttBlock, "bert": StackAttBlock, "gmlp": GmlpBlock}
BLOCKS["birdie"] = BirdieBlock  # birdie.py; layer modes set by assign_layer_modes


class MLMHead(nn.Module):
    """dense d->d -> gelu_erf -> LN -> tied E_word (+ bias [V]); the decoder weight is not a parameter.
    model.mlm_transform = false: no dense and gelu, LN -> tied E_word (+ bias), GPT-2's and H3's
    lm_simple's final LayerNorm and decoder."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        self.dense = nn.Linear(m["d_model"], m["d_model"]) if m.get("mlm_transform", True) else None
        self.norm = nn.LayerNorm(m["d_model"], eps=m["ln_eps"])
        self.bias = nn.Parameter(torch.zeros(m["vocab_size"]))

    def forward(self, h, word_weight):
        x = gelu(self.dense(h), "erf") if self.dense is not None else h
        return F.linear(self.norm(x), word_weight, self.bias)


class ClassifierHead(nn.Module):
    """pool -> dense d->d -> tanh -> dropout -> linear d->labels."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        if m["pool"] == "sentence" and m["arch"] != "slstm":
            raise ConfigError("model.pool: 'sentence' is the S-LSTM sentence node; "
                                         "the BiGS family pools by 'mean' or 'first'")
        self.pool_kind = m["pool"]
        self.pool = nn.Linear(m["d_model"], m["d_model"])
        self.dropout = nn.Dropout(m["dropout"])
        self.out = nn.Linear(m["d_model"], m["n_labels"])

    def forward(self, h, key_valid, sentence=None):
        if self.pool_kind == "sentence":
            pooled = sentence
        elif self.pool_kind == "first":
            pooled = h[:, 0]
        elif self.pool_kind == "mean_all":  # every position of the row, pads included
            pooled = h.mean(dim=1)
        else:  # mean over non-pad tokens
            w = key_valid.to(h.dtype)[:, :, None]
            pooled = (h * w).sum(dim=1) / w.sum(dim=1)
        return self.out(self.dropout(torch.tanh(self.pool(pooled))))


class Model(nn.Module):
    """Embeddings + n_layers blocks + MLM head (+ classification head when n_labels > 0).

    state_dict() names are the checkpoint names of CHECKPOINT_FORMAT.md / tests/reference/README.md.
    """

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        if m["arch"] not in BLOCKS and m["arch"] != "slstm":
            raise ConfigError(f"model.arch: '{m['arch']}' is not implemented by the reference "
                                         f"(one of {', '.join(BLOCKS)})")
        self.cfg = cfg
        self.embeddings = Embeddings(cfg)
        if m["arch"] == "slstm":
            self.slstm = SLSTM(cfg)  # one parameter set shared by the n_layers steps
            self.layers = nn.ModuleList()
        else:
            self.slstm = None
            self.layers = nn.ModuleList([BLOCKS[m["arch"]](cfg) for _ in range(m["n_layers"])])
        if m["arch"] == "birdie":
            assign_layer_modes(self.layers, cfg)
        if m["norm_position"] == "post" and m["arch"] != "bert":
            raise ConfigError("model.norm_position: 'post' is for arch bert")
        self.mlm = MLMHead(cfg) if m["mlm_head"] else None
        self.classifier = ClassifierHead(cfg) if m["n_labels"] > 0 else None
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        std = self.cfg["model"]["init_std"]
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.normal_(0.0, std)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
            elif isinstance(module, (SSM, SpatialMix)):
                module.reset_parameters()
        if self.mlm is not None:
            self.mlm.bias.zero_()

    def encode(self, input_ids, lengths, token_type_ids=None, reset_mask=None):
        """Final hidden states [B, L, d] and the validity mask [B, L] (position < length).
        reset_mask [B, L] (Birdie only, birdie.py) or None."""
        L = input_ids.shape[1]
        if L > self.cfg["model"]["max_len"]:
            raise ValueError(f"sequence length {L} exceeds model.max_len={self.cfg['model']['max_len']}")
        key_valid = torch.arange(L, device=input_ids.device)[None, :] < lengths[:, None]
        h = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            h = layer(h, key_valid) if reset_mask is None else layer(h, key_valid, reset_mask)
        self.sentence = None
        if self.slstm is not None:
            h, self.sentence = self.slstm(h, key_valid)
        return h, key_valid

    def mlm_logits(self, h):
        if self.mlm is None:
            raise ValueError("an MLM batch needs the MLM head (model.mlm_head = true)")
        return self.mlm(h, self.embeddings.word.weight)

    def class_logits(self, h, key_valid):
        if self.classifier is None:
            raise ValueError("classification needs model.n_labels > 0")
        return self.classifier(h, key_valid, self.sentence)
