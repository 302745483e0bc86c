"""Hugging Face BERT as published (transformers' modeling_bert.py semantics): the module of a
post-LN `bert` that `routescope-cli export` writes, and the oracle of the importer's parity tests
(tests/io/test_importers.cpp, through the shim tests/reference/hf_bert.py). Independent of the C++
engine and of tests/reference/routescope_ref: the modules and their state_dict names are
transformers' own, so a state_dict of BertForMaskedLM or BertForSequenceClassification (or an
export of Routescope's) loads here unchanged.

Semantics (BERT, Devlin et al. 2019; transformers.models.bert):
    embeddings  x = LN(word[ids] + position[position_ids] + token_type[type_ids]), dropout
                position_ids = arange(L) (the registered buffer's first L entries)
    layer       (post-LN)  a = LN1(x + O(MHA(x)));  y = LN2(a + W2 act(W1 a))
    attention   scores = q k^T / sqrt(d_head) + (1 - mask) * finfo.min  (extended attention mask)
    MLM head    LN(act(dense(h))) decoder^T + bias, decoder tied to the word embeddings
    pooler      tanh(dense(h[:, 0]));  classifier = Linear(dropout(pooled))
act is hidden_act: "gelu" is the exact erf form (transformers' GELUActivation). Inference only:
dropout is left out (the identity of eval mode). Computation in the dtype of the parameters.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F


# The hidden_act values act_fn knows (transformers' names); routescope.load refuses any other.
HIDDEN_ACTS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")


def act_fn(name):
    if name == "gelu":
        return lambda x: F.gelu(x)  # erf form
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu
    raise ValueError(f"hidden_act {name!r}")


def state_dict_shapes(c, head):
    """{name: shape} of the state_dict of BertForMaskedLM (head "mlm") or
    BertForSequenceClassification ("classify") for config `c` (with num_labels for a classifier),
    computed without building the module: routescope.load compares a file with it first, so that a
    config.json cannot make it allocate what the file does not hold."""
    V, d, P, T, I = (c["vocab_size"], c["hidden_size"], c["max_position_embeddings"],
                     c["type_vocab_size"], c["intermediate_size"])
    s = {"bert.embeddings.word_embeddings.weight": (V, d),
         "bert.embeddings.position_embeddings.weight": (P, d),
         "bert.embeddings.token_type_embeddings.weight": (T, d),
         "bert.embeddings.LayerNorm.weight": (d,), "bert.embeddings.LayerNorm.bias": (d,),
         "bert.embeddings.position_ids": (1, P)}
    for i in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        for dense, out, inp in (("attention.self.query", d, d), ("attention.self.key", d, d),
                                ("attention.self.value", d, d), ("attention.output.dense", d, d),
                                ("intermediate.dense", I, d), ("output.dense", d, I)):
            s[p + dense + ".weight"], s[p + dense + ".bias"] = (out, inp), (out,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            s[p + norm + ".weight"], s[p + norm + ".bias"] = (d,), (d,)
    s.update(head_shapes("bert", V, d, head, c.get("num_labels")))
    return s


def head_shapes(encoder, V, d, head, num_labels):
    """{name: shape} of a head on an encoder named `encoder` ("bert", "bigs"): the masked-LM head
    under BERT's names (head "mlm"), or the pooler and classifier ("classify")."""
    if head == "mlm":
        return {"cls.predictions.bias": (V,), "cls.predictions.transform.dense.weight": (d, d),
                "cls.predictions.transform.dense.bias": (d,),
                "cls.predictions.transform.LayerNorm.weight": (d,),
                "cls.predictions.transform.LayerNorm.bias": (d,),
                "cls.predictions.decoder.weight": (V, d), "cls.predictions.decoder.bias": (V,)}
    return {encoder + ".pooler.dense.weight": (d, d), encoder + ".pooler.dense.bias": (d,),
            "classifier.weight": (num_labels, d), "classifier.bias": (num_labels,)}


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.register_buffer("position_ids",
                             torch.arange(c["max_position_embeddings"]).expand((1, -1)))

    def _load_from_state_dict(self, state_dict, prefix, *args):
        """position_ids is transformers' buffer, no weight: persistent here (state_dict() has it,
        as older transformers releases save it), but a state_dict without it (Routescope's
        export, transformers' since the buffer became non-persistent) loads strictly too, the
        buffer kept. (load_state_dict hands every module its own copy of the dict to change.)"""
        state_dict.setdefault(prefix + "position_ids", self.position_ids)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def forward(self, input_ids, token_type_ids):
        L = input_ids.shape[1]
        pos = self.position_ids[:, :L]
        x = (self.word_embeddings(input_ids) + self.position_embeddings(pos) +
             self.token_type_embeddings(token_type_ids))
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.head_size = d // self.heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def split(self, x):
        B, L, _ = x.shape
        return x.view(B, L, self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x, extended_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_size) + extended_mask
        ctx = torch.softmax(scores, dim=-1) @ v
        B, _, L, _ = ctx.shape
        return ctx.permute(0, 2, 1, 3).reshape(B, L, self.heads * self.head_size)


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, h, x):
        return self.LayerNorm(self.dense(h) + x)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x, m):
        return self.output(self.self(x, m), x)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.act = act_fn(c["hidden_act"])

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, h, x):
        return self.LayerNorm(self.dense(h) + x)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x, m):
        a = self.attention(x, m)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, x, m):
        for layer in self.layer:
            x = layer(x, m)
        return x


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class BertModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c) if add_pooling_layer else None

    def forward(self, input_ids, attention_mask, token_type_ids):
        dtype = self.embeddings.word_embeddings.weight.dtype
        ext = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        h = self.encoder(self.embeddings(input_ids, token_type_ids), ext)
        return h, (self.pooler(h) if self.pooler is not None else None)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.act = act_fn(c["hidden_act"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, h):
        return self.LayerNorm(self.act(self.dense(h)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        self.decoder.bias = self.bias  # transformers ties them

    def forward(self, h):
        return self.decoder(self.transform(h))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)

    def forward(self, h):
        return self.predictions(h)


class BertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(c)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight  # tied

    def forward(self, input_ids, attention_mask, token_type_ids):
        h, _ = self.bert(input_ids, attention_mask, token_type_ids)
        return self.cls(h)


class BertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c)
        self.classifier = nn.Linear(c["hidden_size"], c["num_labels"])

    def forward(self, input_ids, attention_mask, token_type_ids):
        _, pooled = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(pooled)  # dropout is the identity in eval


def randomize(model, rng, scale=0.5):
    """Fills every parameter with N(0, scale²) (LayerNorm weights around 1), in place."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            a = rng.standard_normal(tuple(p.shape)) * scale
            if name.endswith("LayerNorm.weight"):
                a = 1.0 + 0.2 * a
            p.copy_(torch.from_numpy(a).to(p.dtype))
