"""The published BiGS (Wang et al. 2022, github.com/jxiw/BiGS: modeling_flax_bigs.py, the JAX model
the released weights were trained with; its PyTorch port modeling_bigs.py for the names), for the
importer's parity test (tests/io/test_import_parity.cpp). Written from those semantics and
MODELS.md, independent of the engine and of routescope_ref: it reads the PyTorch port's
state_dict names directly, so the state dict a test writes to pytorch_model.bin is what it runs.

Semantics, with X = LN(h) inside each of the num_hidden_layers pre-norm layers:
    embeddings  x = LN(word[ids] + position[arange(L)] + token_type[types]), eps layer_norm_eps
    layer       v   = gelu_tanh(dv(X))
                u_f = gelu_tanh(du_forward(X));  u_b = gelu_tanh(du_backward(flip(X)))
                y_f = duc_forward(fs4(u_f));     y_b = flip(duc_backward(bs4(u_b)))
                h   = h + do(gelu_tanh(dol(y_f * y_b)) * v)
                flip reverses the whole padded length L: padding goes through both SSMs, and the
                encoder never looks at the attention mask. The blocks' gelu is jax's nn.gelu,
                whose default is the tanh approximation, whatever hidden_act says.
    S4D (fs4, bs4; one kernel shared by every channel)
                A_n = min(A_re_n, -1e-4) + i A_im_n,  dt = exp(log_step),  C_n = C[n,0] + i C[n,1]
                K[l] = Re sum_n C_n (exp(dt A_n) - 1) / A_n exp(l dt A_n),  l = 0..L-1
                y[t] = sum_{s<=t} K[t-s] u[s] + D u[t]   (the causal convolution; the release
                computes it with an FFT of size 2L, here it is the explicit sum)
    no final LayerNorm
    MLM head    LN(act(dense(h))) @ word^T + cls.predictions.bias (the decoder is the shared word
                embedding); act = hidden_act as transformers' Flax ACT2FN reads it ("gelu" is the
                exact erf form, "gelu_new"/"gelu_pytorch_tanh" the tanh form)
    classifier  pooler_type "non_padding_mean": p = sum_t mask_t h_t / sum_t mask_t ("mean": over
                all L); pooled = tanh(pooler.dense(p)); logits = classifier(dropout(pooled))
Run under /usr/bin/python3 (torch); the tests compute in float64 from the float32 weights.
"""
import math

import torch


def _linear(sd, name, x):
    return x @ sd[name + ".weight"].T + sd[name + ".bias"]


def _layer_norm(sd, name, x, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * sd[name + ".weight"] + sd[name + ".bias"]


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def head_activation(hidden_act):
    """transformers' Flax ACT2FN for the MLM transform (the blocks always use gelu_tanh)."""
    if hidden_act == "gelu":
        return gelu_erf
    if hidden_act in ("gelu_new", "gelu_pytorch_tanh"):
        return gelu_tanh
    raise ValueError(f"hidden_act {hidden_act!r}")


def s4d_kernel(sd, name, L):
    """K[0..L) of one S4D layer (`name` = ...fs4 or ...bs4), real, float64."""
    a_re = sd[name + ".kernel.A_re"].double()
    a_im = sd[name + ".kernel.A_im"].double()
    c = sd[name + ".kernel.C"].double()
    dt = torch.exp(sd[name + ".kernel.log_step"].double()).reshape(())
    A = torch.complex(torch.clamp(a_re, max=-1e-4), a_im)            # [N]
    Cc = torch.complex(c[:, 0], c[:, 1])                               # [N]
    coef = Cc * (torch.exp(dt * A) - 1) / A                            # [N]
    l = torch.arange(L, dtype=torch.float64)
    powers = torch.exp((dt * A)[:, None] * l[None, :])                 # [N, L], exp(l dt A) directly
    return (coef[:, None] * powers).sum(0).real                       # [L]


def s4d(sd, name, u):
    """The S4D layer on u [B, L, d]: causal convolution of every channel with K, plus D u."""
    B, L, d = u.shape
    K = s4d_kernel(sd, name, L)
    t = torch.arange(L)
    lag = t[:, None] - t[None, :]                                      # [L, L]: t - s
    T = torch.where(lag >= 0, K[lag.clamp(min=0)], torch.zeros((), dtype=K.dtype))
    y = torch.einsum("ts,bsd->btd", T.to(u.dtype), u)
    return y + sd[name + ".D"].to(u.dtype).reshape(()) * u


def bigs_layer(sd, i, h, eps):
    p = f"bigs.encoder.layer.{i}."
    X = _layer_norm(sd, p + "LayerNorm", h, eps)
    v = gelu_tanh(_linear(sd, p + "dv", X))
    u_f = gelu_tanh(_linear(sd, p + "du_forward", X))
    u_b = gelu_tanh(_linear(sd, p + "du_backward", torch.flip(X, dims=[1])))
    y_f = _linear(sd, p + "duc_forward", s4d(sd, p + "fs4", u_f))
    y_b = torch.flip(_linear(sd, p + "duc_backward", s4d(sd, p + "bs4", u_b)), dims=[1])
    return h + _linear(sd, p + "do", gelu_tanh(_linear(sd, p + "dol", y_f * y_b)) * v)


def encoder(sd, config, input_ids, token_type_ids):
    """Last hidden states [B, L, d] of input_ids [B, L] (padded; the mask is not used here)."""
    eps = config.get("layer_norm_eps", 1e-12)
    L = input_ids.shape[1]
    e = "bigs.embeddings."
    x = (sd[e + "word_embeddings.weight"][input_ids] +
         sd[e + "position_embeddings.weight"][torch.arange(L)][None] +
         sd[e + "token_type_embeddings.weight"][token_type_ids])
    h = _layer_norm(sd, e + "LayerNorm", x, eps)
    for i in range(config["num_hidden_layers"]):
        h = bigs_layer(sd, i, h, eps)
    return h


def mlm_logits(sd, config, input_ids, token_type_ids):
    """BiGSForMaskedLM: [B, L, V]."""
    h = encoder(sd, config, input_ids, token_type_ids)
    act = head_activation(config.get("hidden_act", "gelu"))
    t = _linear(sd, "cls.predictions.transform.dense", h)
    t = _layer_norm(sd, "cls.predictions.transform.LayerNorm", act(t),
                    config.get("layer_norm_eps", 1e-12))
    return t @ sd["bigs.embeddings.word_embeddings.weight"].T + sd["cls.predictions.bias"]


def classification_logits(sd, config, input_ids, token_type_ids, attention_mask):
    """BiGSForSequenceClassification (eval: dropout is the identity): [B, labels]."""
    h = encoder(sd, config, input_ids, token_type_ids)
    if config.get("pooler_type", "non_padding_mean") == "mean":
        pooled = h.mean(1)
    else:
        m = attention_mask.to(h.dtype)[:, :, None]
        pooled = (h * m).sum(1) / m.sum(1)
    pooled = torch.tanh(_linear(sd, "bigs.pooler.dense", pooled))
    return _linear(sd, "classifier", pooled)


def as_float64(state_dict):
    """A state dict's floating tensors in float64 (integer buffers as they are)."""
    return {k: (v.double() if v.is_floating_point() else v) for k, v in state_dict.items()}


def selfcheck(seed=0):
    """The kernel and convolution against the release's other two forms: the discretised SSM run
    as a recurrence (x_k = e^{dtA} x_{k-1} + (e^{dtA} - 1)/A u_k, y_k = Re(C x_k) + D u_k) and the
    FFT of size 2L."""
    g = torch.Generator().manual_seed(seed)
    N, L, B, d = 5, 9, 2, 3
    sd = {"s.kernel.A_re": -torch.rand(N, generator=g, dtype=torch.float64),
          "s.kernel.A_im": 3 * torch.randn(N, generator=g, dtype=torch.float64),
          "s.kernel.C": torch.randn(N, 2, generator=g, dtype=torch.float64),
          "s.kernel.log_step": torch.tensor([-1.3], dtype=torch.float64),
          "s.D": torch.tensor([0.7], dtype=torch.float64)}
    u = torch.randn(B, L, d, generator=g, dtype=torch.float64)
    y = s4d(sd, "s", u)
    A = torch.complex(sd["s.kernel.A_re"], sd["s.kernel.A_im"])
    dtA = math.exp(-1.3) * A
    C = torch.complex(sd["s.kernel.C"][:, 0], sd["s.kernel.C"][:, 1])
    x = torch.zeros(B, d, N, dtype=torch.complex128)
    for k in range(L):
        x = torch.exp(dtA) * x + ((torch.exp(dtA) - 1) / A) * u[:, k, :, None]
        y_k = (x * C).sum(-1).real + 0.7 * u[:, k]
        assert torch.allclose(y[:, k], y_k, atol=1e-12), k
    K = s4d_kernel(sd, "s", L)
    y_fft = torch.fft.irfft(torch.fft.rfft(u.transpose(1, 2), n=2 * L) * torch.fft.rfft(K, n=2 * L),
                            n=2 * L)[..., :L].transpose(1, 2) + 0.7 * u
    assert torch.allclose(y, y_fft, atol=1e-12)
