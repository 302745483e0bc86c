"""BiGS (GATED/SSM, MODELS.md) with the parameter names `routescope-cli export` writes: those of
the official BiGS PyTorch port (`bigs.*`, `cls.predictions.*`, `classifier.*`), so an exported
model.safetensors or pytorch_model.bin loads with load_state_dict unchanged.

    embeddings  x = LN(word[ids] + position[0..L) (+ token_type[type_ids]))
    layer i     (pre-norm)  X = LN(h); V = gelu(dv X); U_f = gelu(du_forward X);
                U_b = gelu(du_backward flip X); Y_f = duc_forward(fs4(U_f));
                Y_b = flip(duc_backward(bs4(U_b))); h <- h + do(gelu(dol(Y_f * Y_b)) * V)
    (no final LN; no mask inside the blocks: pads go through the SSMs, so outputs depend on the
     padded length L, as the engine's do)
    MLM head    LN(gelu_erf(dense(h))) word^T + bias   (decoder tied to the word embeddings)
    classifier  pool (mean over positions < length; pooler_type "mean": over all L) -> pooler.dense
                -> tanh -> classifier

gelu inside the blocks is config.json's hidden_act: "gelu" is jax.nn.gelu (the tanh form, as in
the release), "gelu_exact" the erf form. The SSMs fs4 / bs4 have one kernel (the release's H = 1):
fs4.kernel.{A_re, A_im [N], C [N, 2], log_step [1]} and fs4.D [1]; the kernel and the FFT
convolution are routescope.ssm's. Inference only (no dropout).
"""
import torch
import torch.nn.functional as F
from torch import nn

from .bert import head_shapes
from .ssm import fft_conv, s4d_kernel


# config.json's hidden_act for the blocks: the tanh gelu's names, then the erf gelu's.
TANH_GELUS = ("gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh")
ERF_GELUS = ("gelu_exact", "gelu_erf")
# pooler_type, read as the release's pooler reads it: "mean" averages every position of the row
# (padding included), any other value the positions the attention mask marks real. The release has
# no first-token pooler ("first" and "cls" are the non-padding mean there too).
POOLER_TYPES = ("non_padding_mean", "mean", "first", "cls")
# The defaults of the keys a BiGS config.json may leave out (the official port's).
DEFAULTS = {"type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu", "num_ssm": 64,
            "pooler_type": "non_padding_mean"}


def _get(c, key):
    """c[key], or its default (DEFAULTS) where config.json leaves it out."""
    return c.get(key, DEFAULTS[key])


def block_act(name):
    if name in TANH_GELUS:
        return lambda x: F.gelu(x, approximate="tanh")
    if name in ERF_GELUS:
        return lambda x: F.gelu(x)
    raise ValueError(f"config.json: hidden_act {name!r} is not a gelu")


def state_dict_shapes(c, head):
    """{name: shape} of the state_dict of BigsForMaskedLM (head "mlm") or
    BigsForSequenceClassification ("classify") for config `c` (with num_labels for a classifier,
    type_embeddings as the modules read it), computed without building the module:
    routescope.load compares a file with it first, so that a config.json cannot make it allocate
    what the file does not hold."""
    V, d, P, I = (c["vocab_size"], c["hidden_size"], c["max_position_embeddings"],
                  c["intermediate_size"])
    N = _get(c, "num_ssm")
    s = {"bigs.embeddings.word_embeddings.weight": (V, d),
         "bigs.embeddings.position_embeddings.weight": (P, d)}
    if c.get("type_embeddings", True):
        s["bigs.embeddings.token_type_embeddings.weight"] = (_get(c, "type_vocab_size"), d)
    s["bigs.embeddings.LayerNorm.weight"], s["bigs.embeddings.LayerNorm.bias"] = (d,), (d,)
    for i in range(c["num_hidden_layers"]):
        p = f"bigs.encoder.layer.{i}."
        s[p + "LayerNorm.weight"], s[p + "LayerNorm.bias"] = (d,), (d,)
        for dense, out, inp in (("dv", I, d), ("du_forward", d, d), ("du_backward", d, d),
                                ("duc_forward", d, d), ("duc_backward", d, d), ("dol", I, d),
                                ("do", d, I)):
            s[p + dense + ".weight"], s[p + dense + ".bias"] = (out, inp), (out,)
        for ssm in ("fs4", "bs4"):
            s.update({p + ssm + ".kernel.A_re": (N,), p + ssm + ".kernel.A_im": (N,),
                      p + ssm + ".kernel.C": (N, 2), p + ssm + ".kernel.log_step": (1,),
                      p + ssm + ".D": (1,)})
    s.update(head_shapes("bigs", V, d, head, c.get("num_labels")))
    return s


def flip(x):
    """Reverses the sequence axis (dim 1) over the full padded length."""
    return torch.flip(x, dims=[1])


class S4Kernel(nn.Module):
    def __init__(self, n_modes):
        super().__init__()
        self.A_re = nn.Parameter(torch.zeros(n_modes))
        self.A_im = nn.Parameter(torch.zeros(n_modes))
        self.C = nn.Parameter(torch.zeros(n_modes, 2))
        self.log_step = nn.Parameter(torch.zeros(1))

    def forward(self, L):
        """K [1, L] (one kernel shared by every channel)."""
        return s4d_kernel(self.A_re[None], self.A_im[None], self.C[None], self.log_step, L)


class S4(nn.Module):
    def __init__(self, n_modes):
        super().__init__()
        self.kernel = S4Kernel(n_modes)
        self.D = nn.Parameter(torch.zeros(1))

    def forward(self, u):
        d = u.shape[2]
        K = self.kernel(u.shape[1]).expand(d, -1)
        return fft_conv(u, K, self.D.expand(d))


class BigsEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], d)
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], d)
        self.token_type_embeddings = (nn.Embedding(_get(c, "type_vocab_size"), d)
                                      if c.get("type_embeddings", True) else None)
        self.LayerNorm = nn.LayerNorm(d, eps=_get(c, "layer_norm_eps"))

    def _load_from_state_dict(self, state_dict, prefix, *args):
        """position_ids is the official BiGS port's persistent buffer (arange(Lmax)[None], int64),
        which Routescope's export writes too: no weight, the module computes the positions, so a
        state_dict loads strictly with or without it (routescope.load checks its values).
        (load_state_dict hands every module its own copy of the dict to change.)"""
        state_dict.pop(prefix + "position_ids", None)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def forward(self, input_ids, token_type_ids=None):
        L = input_ids.shape[1]
        x = self.word_embeddings(input_ids) + self.position_embeddings(
            torch.arange(L, device=input_ids.device))[None]
        if self.token_type_embeddings is not None:
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = x + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x)


class BigsLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, inner = c["hidden_size"], c["intermediate_size"]
        self.act = block_act(_get(c, "hidden_act"))
        self.LayerNorm = nn.LayerNorm(d, eps=_get(c, "layer_norm_eps"))
        self.dv = nn.Linear(d, inner)
        self.du_forward = nn.Linear(d, d)
        self.du_backward = nn.Linear(d, d)
        self.duc_forward = nn.Linear(d, d)
        self.duc_backward = nn.Linear(d, d)
        self.dol = nn.Linear(d, inner)
        self.do = nn.Linear(inner, d)
        self.fs4 = S4(_get(c, "num_ssm"))
        self.bs4 = S4(_get(c, "num_ssm"))

    def forward(self, h):
        X = self.LayerNorm(h)
        V = self.act(self.dv(X))
        U_f = self.act(self.du_forward(X))
        U_b = self.act(self.du_backward(flip(X)))
        Y_f = self.duc_forward(self.fs4(U_f))
        Y_b = flip(self.duc_backward(self.bs4(U_b)))
        return h + self.do(self.act(self.dol(Y_f * Y_b)) * V)


class BigsEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BigsLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, h):
        for layer in self.layer:
            h = layer(h)
        return h


class BigsPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.every_position = _get(c, "pooler_type") == "mean"

    def forward(self, h, attention_mask):
        if self.every_position:  # FlaxBiGSPooler's jnp.mean(hidden_states, axis=-2)
            pooled = h.mean(dim=1)
        else:  # the mean over the positions the mask marks valid
            w = attention_mask.to(h.dtype)[:, :, None]
            pooled = (h * w).sum(dim=1) / w.sum(dim=1)
        return torch.tanh(self.dense(pooled))


class BigsModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BigsEmbeddings(c)
        self.encoder = BigsEncoder(c)
        self.pooler = BigsPooler(c) if add_pooling_layer else None

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        """(last hidden states [B, L, d], pooled [B, d] or None)."""
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        h = self.encoder(self.embeddings(input_ids, token_type_ids))
        return h, (self.pooler(h, attention_mask) if self.pooler is not None else None)


class BigsPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=_get(c, "layer_norm_eps"))

    def forward(self, h):
        return self.LayerNorm(F.gelu(self.dense(h)))  # gelu_erf (MODELS.md: heads use erf)


class BigsLMPredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transform = BigsPredictionHeadTransform(c)
        self.decoder = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        self.decoder.bias = self.bias  # tied, as transformers ties them

    def forward(self, h):
        return self.decoder(self.transform(h))


class BigsOnlyMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.predictions = BigsLMPredictionHead(c)

    def forward(self, h):
        return self.predictions(h)


class BigsForMaskedLM(nn.Module):
    """logits [B, L, V] = forward(input_ids [B, L], attention_mask [B, L], token_type_ids)."""

    def __init__(self, c):
        super().__init__()
        self.bigs = BigsModel(c, add_pooling_layer=False)
        self.cls = BigsOnlyMLMHead(c)
        self.cls.predictions.decoder.weight = self.bigs.embeddings.word_embeddings.weight  # tied

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        h, _ = self.bigs(input_ids, attention_mask, token_type_ids)
        return self.cls(h)


class BigsForSequenceClassification(nn.Module):
    """logits [B, num_labels] = forward(input_ids, attention_mask, token_type_ids)."""

    def __init__(self, c):
        super().__init__()
        self.bigs = BigsModel(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        _, pooled = self.bigs(input_ids, attention_mask, token_type_ids)
        return self.classifier(pooled)
