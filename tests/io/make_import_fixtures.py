#!/usr/bin/python3
"""Fixtures for the importers (tests/io/test_importers.cpp): one small BiGS in the published
layout (MODELS.md "Importing the published BiGS weights") as a Flax msgpack, a PyTorch zip and a
safetensors directory; reader fixtures in float32/float16/bfloat16; and bad inputs.

The msgpack is written by hand in exactly flax.serialization's layout (nested maps; every array an
ExtType 1 whose payload is msgpack of (shape, dtype name, raw bytes)), safetensors by hand in its
format (u64 LE header length, JSON header, data), the PyTorch file by torch.save.

Usage: make_import_fixtures.py OUT_DIR
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import warnings
import zipfile

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import hf_bert  # noqa: E402  (the published BERT semantics, tests/reference/hf_bert.py)
import official_keys  # noqa: E402  (the published classes' state_dict key sets)

# ---------------------------------------------------------------- msgpack, by hand


def mp(obj):
    """msgpack of str, bytes, int >= 0, list/tuple, dict, or Ext(code, payload)."""
    if isinstance(obj, Ext):
        n = len(obj.payload)
        head = {1: b"\xd4", 2: b"\xd5", 4: b"\xd6", 8: b"\xd7", 16: b"\xd8"}.get(n)
        if head is None:
            head = (b"\xc7" + struct.pack(">B", n) if n < 256 else
                    b"\xc8" + struct.pack(">H", n) if n < 65536 else b"\xc9" + struct.pack(">I", n))
        return head + struct.pack(">b", obj.code) + obj.payload
    if isinstance(obj, str):
        b = obj.encode()
        n = len(b)
        return (bytes([0xa0 | n]) if n < 32 else b"\xd9" + struct.pack(">B", n) if n < 256
                else b"\xda" + struct.pack(">H", n)) + b
    if isinstance(obj, bytes):
        n = len(obj)
        return (b"\xc4" + struct.pack(">B", n) if n < 256 else b"\xc5" + struct.pack(">H", n)
                if n < 65536 else b"\xc6" + struct.pack(">I", n)) + obj
    if isinstance(obj, bool):
        raise TypeError("bool")
    if isinstance(obj, int):
        assert obj >= 0
        return bytes([obj]) if obj < 128 else b"\xcd" + struct.pack(">H", obj)
    if isinstance(obj, (list, tuple)):
        n = len(obj)
        return (bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)) + \
            b"".join(mp(x) for x in obj)
    if isinstance(obj, dict):
        n = len(obj)
        return (bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)) + \
            b"".join(mp(k) + mp(v) for k, v in obj.items())
    raise TypeError(type(obj))


class Ext:
    def __init__(self, code, payload):
        self.code, self.payload = code, payload


def flax_leaf(a, dtype_name=None):
    """flax.serialization._ndarray_to_bytes: msgpack((shape, dtype.name, bytes)) as ExtType 1."""
    name = dtype_name or a.dtype.name
    raw = bf16_bytes(a) if name == "bfloat16" else np.ascontiguousarray(a).tobytes("C")
    return Ext(1, mp((tuple(a.shape), name, raw)))


def flax_tree(flat, dtype_name=None):
    """{'a/b/c': array} → nested maps with leaves, in insertion order."""
    root = {}
    for path, a in flat.items():
        node = root
        parts = path.split("/")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = a if isinstance(a, Ext) else flax_leaf(a, dtype_name)
    return root


def bf16_bytes(a):
    """bfloat16 as torch rounds it (to nearest even), the same values the .bin fixture holds."""
    t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().astype("<i2").tobytes()


# ---------------------------------------------------------------- safetensors, by hand

ST_CODES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
            "float64": "F64"}


def safetensors_bytes(tensors, dtype_name=None, tamper=None):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        dn = dtype_name or a.dtype.name
        raw = bf16_bytes(a) if dn == "bfloat16" else np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": ST_CODES[dn], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    if tamper:
        tamper(header)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


# ---------------------------------------------------------------- the small BiGS

V_PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat",
            "##s", ".", "a", "dog", "ran", "far"]
D, I, LAYERS, N, LMAX, V = 8, 12, 2, 4, 16, len(V_PIECES)
LINEARS = {"dv": (D, I), "du_forward": (D, D), "du_backward": (D, D), "duc_forward": (D, D),
           "duc_backward": (D, D), "dol": (D, I), "do": (I, D)}  # (in, out)


def small_bigs(rng, classification=False):
    """Engine-named float32 parameters (CHECKPOINT_FORMAT.md shapes)."""
    p = collections.OrderedDict()
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    p["embeddings.word.weight"] = f(V, D)
    p["embeddings.position.weight"] = f(LMAX, D)
    p["embeddings.type.weight"] = f(2, D)
    p["embeddings.norm.weight"], p["embeddings.norm.bias"] = f(D), f(D)
    for i in range(LAYERS):
        t = f"layers.{i}."
        p[t + "norm.weight"], p[t + "norm.bias"] = f(D), f(D)
        for lin, (fin, fout) in LINEARS.items():
            p[t + lin + ".weight"], p[t + lin + ".bias"] = f(fout, fin), f(fout)
        for ssm in ("ssm_forward", "ssm_backward"):
            p[t + ssm + ".A_re"], p[t + ssm + ".A_im"] = f(1, N), f(1, N)
            p[t + ssm + ".C"], p[t + ssm + ".D"], p[t + ssm + ".log_step"] = f(1, N, 2), f(1), f(1)
    p["mlm.dense.weight"], p["mlm.dense.bias"] = f(D, D), f(D)
    p["mlm.norm.weight"], p["mlm.norm.bias"] = f(D), f(D)
    p["mlm.bias"] = f(V)
    return p


def to_flax(p):
    out = collections.OrderedDict()
    e = "s4_bert/embeddings/"
    out[e + "word_embeddings/embedding"] = p["embeddings.word.weight"]
    out[e + "position_embeddings/embedding"] = p["embeddings.position.weight"]
    out[e + "token_type_embeddings/embedding"] = p["embeddings.type.weight"]
    out[e + "LayerNorm/scale"], out[e + "LayerNorm/bias"] = p["embeddings.norm.weight"], p["embeddings.norm.bias"]
    for i in range(LAYERS):
        t, s = f"layers.{i}.", f"s4_bert/encoder/layer/{i}/"
        out[s + "LayerNorm/scale"], out[s + "LayerNorm/bias"] = p[t + "norm.weight"], p[t + "norm.bias"]
        for lin in LINEARS:
            out[s + lin + "/kernel"] = np.ascontiguousarray(p[t + lin + ".weight"].T)
            out[s + lin + "/bias"] = p[t + lin + ".bias"]
        for ssm, src in (("ssm_forward", "fs4"), ("ssm_backward", "bs4")):
            for leaf in ("A_re", "A_im", "C"):
                out[s + src + "/" + leaf] = p[t + ssm + "." + leaf][0]
            out[s + src + "/D"], out[s + src + "/log_step"] = p[t + ssm + ".D"], p[t + ssm + ".log_step"]
    c = "cls/predictions/"
    out[c + "transform/dense/kernel"] = np.ascontiguousarray(p["mlm.dense.weight"].T)
    out[c + "transform/dense/bias"] = p["mlm.dense.bias"]
    out[c + "transform/LayerNorm/scale"], out[c + "transform/LayerNorm/bias"] = p["mlm.norm.weight"], p["mlm.norm.bias"]
    out[c + "bias"] = p["mlm.bias"]
    return out


def to_torch_names(p):
    out = collections.OrderedDict()
    e = "bigs.embeddings."
    out[e + "word_embeddings.weight"] = p["embeddings.word.weight"]
    out[e + "position_embeddings.weight"] = p["embeddings.position.weight"]
    out[e + "token_type_embeddings.weight"] = p["embeddings.type.weight"]
    out[e + "LayerNorm.weight"], out[e + "LayerNorm.bias"] = p["embeddings.norm.weight"], p["embeddings.norm.bias"]
    for i in range(LAYERS):
        t, s = f"layers.{i}.", f"bigs.encoder.layer.{i}."
        out[s + "LayerNorm.weight"], out[s + "LayerNorm.bias"] = p[t + "norm.weight"], p[t + "norm.bias"]
        for lin in LINEARS:
            out[s + lin + ".weight"], out[s + lin + ".bias"] = p[t + lin + ".weight"], p[t + lin + ".bias"]
        for ssm, src in (("ssm_forward", "fs4"), ("ssm_backward", "bs4")):
            for leaf in ("A_re", "A_im", "C", "log_step"):
                a = p[t + ssm + "." + leaf]
                out[s + src + ".kernel." + leaf] = a[0] if leaf != "log_step" else a
            out[s + src + ".D"] = p[t + ssm + ".D"]
    c = "cls.predictions."
    out[c + "transform.dense.weight"], out[c + "transform.dense.bias"] = p["mlm.dense.weight"], p["mlm.dense.bias"]
    out[c + "transform.LayerNorm.weight"], out[c + "transform.LayerNorm.bias"] = p["mlm.norm.weight"], p["mlm.norm.bias"]
    out[c + "bias"] = p["mlm.bias"]
    out[c + "decoder.weight"] = p["embeddings.word.weight"]  # tied
    out[c + "decoder.bias"] = p["mlm.bias"]
    return out


def config_json(**over):
    c = {"architectures": ["BiGSForMaskedLM"], "model_type": "BiGS", "vocab_size": V,
         "hidden_size": D, "num_hidden_layers": LAYERS, "intermediate_size": I, "num_ssm": N,
         "max_position_embeddings": LMAX, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
         "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "initializer_range": 0.02,
         "pre_norm": True, "pooler_type": "non_padding_mean", "pad_token_id": 0}
    c.update(over)
    return json.dumps(c, indent=2)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def torch_save_bytes(tensors, legacy=False, protocol=2):
    sd = collections.OrderedDict((k, torch.from_numpy(np.array(v))) for k, v in tensors.items())
    buf = io.BytesIO()
    torch.save(sd, buf, _use_new_zipfile_serialization=not legacy, pickle_protocol=protocol)
    return buf.getvalue()


# ---------------------------------------------------------------- torch.save's formats, by hand
# For what torch.save cannot be made to write: Python 2.7's pickles (torch <= 1.4), storages
# declared twice, deflated storages. The layouts are torch/serialization.py's (_legacy_save; the
# zip's <prefix>/data.pkl and <prefix>/data/<key>); torch.load reads every file written here.

STORAGE_TYPES = {torch.float32: "FloatStorage", torch.float16: "HalfStorage",
                 torch.bfloat16: "BFloat16Storage", torch.float64: "DoubleStorage",
                 torch.int64: "LongStorage"}


class HandStorage:
    """A storage a hand-written pickle declares: its key, torch.<typ> and element count."""

    def __init__(self, key, typ, numel):
        self.key, self.typ, self.numel = key, typ, numel


class HandTensor:
    """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, tuple(size), tuple(stride), False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


def storage_bytes(st):
    """A TypedStorage's raw little-endian bytes."""
    return torch.tensor([], dtype=st.dtype).set_(st).view(torch.uint8).numpy().tobytes()


class Py2Pickler(pickle._Pickler):
    """Protocol-2 pickles as Python 2.7's pickler writes them: str as SHORT_BINSTRING or
    BINSTRING ('U', 'T'), OrderedDict reduced by 2.7's OrderedDict.__reduce__ to
    (OrderedDict, ([[key, value], ...],)) plus its __dict__ ({'_metadata': ...}) as BUILD state.
    Storages (torch's or HandStorage) become torch.save's persistent ids, collected in storages."""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, f, storages, py2=True, legacy=True):
        super().__init__(f, protocol=2)
        self.storages, self.py2, self.legacy = storages, py2, legacy

    def save_str(self, obj):
        if not self.py2:
            return pickle._Pickler.save_str(self, obj)
        b = obj.encode("utf-8")
        self.write((b"U" + bytes([len(b)])) if len(b) < 256 else (b"T" + struct.pack("<i", len(b))))
        self.write(b)
        self.memoize(obj)
    dispatch[str] = save_str

    def reducer_override(self, obj):
        if self.py2 and type(obj) is collections.OrderedDict:
            items = [[k, obj[k]] for k in obj]
            if hasattr(obj, "_metadata"):
                return (collections.OrderedDict, (items,), {"_metadata": obj._metadata})
            return (collections.OrderedDict, (items,))
        return NotImplemented

    def persistent_id(self, obj):
        if isinstance(obj, torch.storage.TypedStorage):
            key = str(obj._cdata)
            self.storages[key] = (obj.size(), storage_bytes(obj))
            return ("storage", getattr(torch, STORAGE_TYPES[obj.dtype]), key, "cpu", obj.size(),
                    None)
        if isinstance(obj, HandStorage):  # the legacy format adds view metadata (None)
            return ("storage", getattr(torch, obj.typ), obj.key, "cpu", obj.numel) + \
                ((None,) if self.legacy else ())
        return None


def legacy_bytes(sd, py2=True, blobs=None):
    """torch.save's legacy format (_legacy_save) of `sd` written by Py2Pickler: the magic number,
    the protocol version, sys_info, the state_dict, the sorted storage keys, then each storage's
    element count and bytes. blobs: {key: (numel, bytes)} of HandStorage keys."""
    buf, storages = io.BytesIO(), dict(blobs or {})
    for obj in (0x1950a86a20f9469cfc6c, 1001,
                {"protocol_version": 1001, "little_endian": True,
                 "type_sizes": {"short": 2, "int": 4, "long": 8}}, sd):
        Py2Pickler(buf, storages, py2).dump(obj)
    keys = sorted(storages)
    Py2Pickler(buf, storages, py2).dump(keys)
    for k in keys:
        numel, raw = storages[k]
        buf.write(struct.pack("<q", numel) + raw)
    return buf.getvalue()


def hand_zip_bytes(sd, blobs, deflate=False):
    """torch.save's zip: archive/data.pkl (`sd` pickled with HandStorage persistent ids, protocol
    2) and archive/data/<key> for each of blobs {key: bytes, or a list of byte chunks}."""
    pkl = io.BytesIO()
    Py2Pickler(pkl, {}, py2=False, legacy=False).dump(sd)
    buf = io.BytesIO()
    mode = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", compression=mode) as z:
        z.writestr("archive/data.pkl", pkl.getvalue())
        for key, b in blobs.items():
            with z.open("archive/data/" + key, "w") as f:
                for chunk in ([b] if isinstance(b, bytes) else b):
                    f.write(chunk)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def torch_load_values(path):
    """{name: {"shape", "values"}} as torch.load reads `path` (float32 values)."""
    return {k: {"shape": list(v.shape), "values": [float(x) for x in v.float().flatten()]}
            for k, v in torch.load(path).items()}


def write_storage_cases(out, p):
    """Storages declared twice, views overlapping their storage, deflated storages used in part,
    and the BiGS `p` saved under Python 2.7."""
    bad = f"{out}/bad"
    # One storage (key 'shared', float16 bytes) declared HalfStorage by one tensor and
    # BFloat16Storage by another: torch.load builds it from the first declaration and reads both
    # as float16; a reader going by each tensor's declaration reads bfloat16 for the second.
    # Refused, in the zip and in the legacy format.
    t = to_torch_names(p)
    shared = ("bigs.embeddings.LayerNorm.weight", "bigs.embeddings.LayerNorm.bias")
    sd, blobs = collections.OrderedDict(), {}
    for i, (k, v) in enumerate(t.items()):
        a = np.ascontiguousarray(v, np.float32)
        if k == shared[0]:
            blobs["shared"] = storage_bytes(torch.from_numpy(a).half().storage())
            sd[k] = HandTensor(HandStorage("shared", "HalfStorage", D), 0, [D], [1])
        elif k == shared[1]:
            sd[k] = HandTensor(HandStorage("shared", "BFloat16Storage", D), 0, [D], [1])
        else:
            blobs[str(i)] = a.tobytes()
            sd[k] = HandTensor(HandStorage(str(i), "FloatStorage", a.size), 0, a.shape,
                               [x // 4 for x in a.strides])
    model_dir(bad, "zip_storage_conflict", "pytorch_model.bin", hand_zip_bytes(sd, blobs))
    got = torch.load(f"{bad}/zip_storage_conflict/pytorch_model.bin")
    assert got[shared[1]].dtype == torch.float16  # the first declaration's
    legacy_blobs = {k: (len(b) // (2 if k == "shared" else 4), b) for k, b in blobs.items()}
    model_dir(bad, "legacy_storage_conflict", "pytorch_model.bin",
              legacy_bytes(sd, py2=False, blobs=legacy_blobs))
    got = torch.load(f"{bad}/legacy_storage_conflict/pytorch_model.bin")
    assert got[shared[1]].dtype == torch.float16
    # A view with more elements than its storage by overlapping strides (1024^3 over 3070 floats:
    # 2^30 elements, 4 GiB materialised), past the 1 GiB materialisation bound.
    torch.save(collections.OrderedDict(
        w=torch.zeros(3070).as_strided((1024, 1024, 1024), (1, 1, 1))),
        f"{bad}/torch_huge_overlap.bin")
    # A deflated zip of two storages of 64 MiB (64 KiB compressed, mostly zeros) whose tensors use
    # 8 elements, at the end of one and the start of the other: only those bytes are read, so it
    # reads within a read limit of 16 MiB. Expected values: torch.load's.
    n, mib = 16 << 20, bytes(1 << 20)
    sd = collections.OrderedDict(
        end=HandTensor(HandStorage("big0", "FloatStorage", n), n - 8, [8], [1]),
        start=HandTensor(HandStorage("big1", "FloatStorage", n), 0, [2, 4], [4, 1]))
    end = mib[:-32] + np.arange(1, 9, dtype=np.float32).tobytes()
    start = (-np.arange(1, 9, dtype=np.float32)).tobytes() + mib[32:]
    write(f"{out}/storages/sparse.bin", hand_zip_bytes(
        sd, {"big0": [mib] * 63 + [end], "big1": [start] + [mib] * 63}, deflate=True))
    write(f"{out}/storages/sparse.expected.json",
          json.dumps(torch_load_values(f"{out}/storages/sparse.bin")))
    # Three deflated storages of 16 MiB zeros, each read whole by its tensor (4M elements): the
    # read holds 16 MiB of storage and 32 MiB of float32 tensors once the second storage is read,
    # more than a read limit of 40 MiB.
    n = 4 << 20
    sd = collections.OrderedDict(
        (f"w{i}", HandTensor(HandStorage(f"big{i}", "FloatStorage", n), 0, [n], [1]))
        for i in range(3))
    write(f"{out}/storages/over_limit.bin", hand_zip_bytes(
        sd, {f"big{i}": [mib] * 16 for i in range(3)}, deflate=True))
    assert all(float(v.abs().max()) == 0 for v in torch.load(f"{out}/storages/over_limit.bin").values())
    # The BiGS as a legacy torch.save written under Python 2.7 (torch <= 1.4): str as
    # SHORT_BINSTRING, OrderedDict from [key, value] pairs. torch.load reads it.
    sd = collections.OrderedDict((k, torch.from_numpy(np.array(v))) for k, v in t.items())
    sd._metadata = collections.OrderedDict([("", {"version": 1})])
    model_dir(out, "bigs_pytorch_legacy_py2", "pytorch_model.bin", legacy_bytes(sd))
    got = torch.load(f"{out}/bigs_pytorch_legacy_py2/pytorch_model.bin")
    assert list(got) == list(sd) and all(torch.equal(got[k], sd[k]) for k in sd)


def model_dir(out, name, weights_name, weights, vocab="vocab.txt", config=None):
    write(f"{out}/{name}/config.json", config or config_json())
    write(f"{out}/{name}/{weights_name}", weights)
    if vocab == "vocab.txt":
        write(f"{out}/{name}/vocab.txt", "\n".join(V_PIECES) + "\n")
    else:
        tok = {"version": "1.0", "model": {"type": "WordPiece", "unk_token": "[UNK]",
                                           "vocab": {p: i for i, p in enumerate(V_PIECES)}}}
        write(f"{out}/{name}/tokenizer.json", json.dumps(tok))


# ---------------------------------------------------------------- sharded checkpoints

SHARD_NAMES = {"safetensors": ("model.safetensors", "model-{:05d}-of-{:05d}.safetensors"),
               "pytorch": ("pytorch_model.bin", "pytorch_model-{:05d}-of-{:05d}.bin"),
               "flax": ("flax_model.msgpack", "flax_model-{:05d}-of-{:05d}.msgpack")}


def shard_bytes(fmt, tensors):
    if fmt == "safetensors":
        return safetensors_bytes(tensors)
    if fmt == "pytorch":
        return torch_save_bytes(tensors)
    return mp(flax_tree(tensors))


def sharded_dir(out, name, fmt, tensors, n, tamper=None, vocab="vocab.txt", config=None):
    """A sharded checkpoint as transformers' save_pretrained writes one past max_shard_size
    (modeling_utils / modeling_flax_utils "shard_checkpoint": the tensors in order, cut into
    consecutive shards named <stem>-0000k-of-0000n<ext>, and <weights name>.index.json
    {"metadata": {"total_size": bytes}, "weight_map": {tensor: shard}}); Flax names are the
    parameter paths joined with "/". `tamper(shards, index)` edits both before they are written."""
    index_name, pattern = SHARD_NAMES[fmt]
    names = list(tensors)
    cuts = [round(k * len(names) / n) for k in range(n + 1)]
    shards = collections.OrderedDict()
    for k in range(n):
        shards[pattern.format(k + 1, n)] = collections.OrderedDict(
            (t, tensors[t]) for t in names[cuts[k]:cuts[k + 1]])
    index = {"metadata": {"total_size": int(sum(np.asarray(a).nbytes for a in tensors.values()))},
             "weight_map": {t: f for f, part in shards.items() for t in part}}
    if tamper:
        tamper(shards, index)
    model_dir(out, name, index_name + ".index.json", json.dumps(index, indent=2), vocab, config)
    for f, part in shards.items():
        write(f"{out}/{name}/{f}", part if isinstance(part, bytes) else shard_bytes(fmt, part))


# ---------------------------------------------------------------- a small Hugging Face BERT

BERT_B, BERT_L, BERT_LABELS = 3, 12, 3
BERT_LENGTHS = [12, 7, 3]


def bert_config(**over):
    c = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": V,
         "hidden_size": D, "num_hidden_layers": LAYERS, "num_attention_heads": 2,
         "intermediate_size": 20, "hidden_act": "gelu", "max_position_embeddings": LMAX,
         "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
         "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
         "position_embedding_type": "absolute", "pad_token_id": 0}
    c.update(over)
    return c


def bert_batch(rng):
    ids = np.zeros((BERT_B, BERT_L), np.int64)
    types = np.zeros((BERT_B, BERT_L), np.int64)
    for b, n in enumerate(BERT_LENGTHS):
        ids[b, :n] = rng.integers(1, V, n)
        ids[b, 0] = 2  # [CLS]
        types[b, n // 2:n] = 1
    mask = (np.arange(BERT_L)[None, :] < np.array(BERT_LENGTHS)[:, None]).astype(np.int64)
    return ids, types, mask


def bert_logits(model, ids, types, mask):
    m64 = model.double().eval()  # float64 from the float32 weights: only the engine's rounding
    with torch.no_grad():
        out = m64(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types))
    model.float()
    return out.numpy()


def torch_save_state(sd):
    buf = io.BytesIO()
    torch.save(collections.OrderedDict(sd), buf)
    return buf.getvalue()


def numpy_state(sd):
    return collections.OrderedDict((k, v.detach().numpy().copy()) for k, v in sd.items())


def bert_flax(sd):
    """A transformers BERT state_dict in the Flax port's names (transformers' FlaxBert*: Dense
    `kernel` [in, out], LayerNorm `scale`/`bias`, Embed `embedding`; no position_ids buffer and no
    decoder kernel: the MLM decoder is the word embeddings applied when tied)."""
    out = collections.OrderedDict()
    for k, v in sd.items():
        if k.endswith("position_ids") or k.startswith("cls.predictions.decoder"):
            continue
        a = v.detach().numpy().copy()
        *mod, leaf = k.split(".")
        if mod[-1].endswith("_embeddings"):
            leaf = "embedding"
        elif mod[-1] == "LayerNorm":
            leaf = {"weight": "scale", "bias": "bias"}[leaf]
        elif leaf == "weight":
            leaf, a = "kernel", np.ascontiguousarray(a.T)
        out["/".join(mod + [leaf])] = a
    return out


def as_official(tensors, official, what):
    """tensors in the official key set's order, asserting the same names and shapes."""
    assert set(tensors) == set(official), (what, sorted(set(tensors) ^ set(official)))
    for name, shape in official.items():
        assert tuple(tensors[name].shape) == shape, (what, name, tuple(tensors[name].shape), shape)
    return collections.OrderedDict((n, tensors[n]) for n in official)


def recent_safetensors(sd):
    """A state_dict as a recent release's save_pretrained(safe_serialization=True) writes it: no
    position_ids (a non-persistent buffer there) and one name per shared storage (here the
    first in sorted order, the one the tied-weight patterns leave), as numpy arrays."""
    by_storage = collections.defaultdict(list)
    for name, t in sd.items():
        if not name.endswith("position_ids"):
            by_storage[t.data_ptr()].append(name)  # tied: the same Parameter
    keep = {sorted(names)[0] for names in by_storage.values()}
    return numpy_state(collections.OrderedDict((n, t) for n, t in sd.items() if n in keep))


def write_bert(out, rng):
    """BertForMaskedLM, BertForSequenceClassification and BertForPreTraining with random weights in
    PyTorch, safetensors and Flax, and the logits tests/reference/hf_bert.py computes on a padded
    batch. Each file holds exactly the key set official_keys.py reads from transformers' code."""
    ids, types, mask = bert_batch(rng)
    mlm = hf_bert.BertForMaskedLM(bert_config())
    hf_bert.randomize(mlm, rng)
    cls_cfg = bert_config(architectures=["BertForSequenceClassification"],
                          num_labels=BERT_LABELS,
                          id2label={"0": "entailment", "1": "neutral", "2": "contradiction"})
    clf = hf_bert.BertForSequenceClassification(cls_cfg)
    hf_bert.randomize(clf, rng)
    with h5py.File(f"{out}/bert_expected.h5", "w") as h:
        h["input_ids"] = ids.astype(np.int32)
        h["token_type_ids"] = types.astype(np.int32)
        h["lengths"] = np.array(BERT_LENGTHS, np.int32)
        h["mlm_logits"] = bert_logits(mlm, ids, types, mask)
        h["cls_logits"] = bert_logits(clf, ids, types, mask)
    # The official key sets (official_keys.py) at this size. The PyTorch files are those of a
    # release that persists the position_ids buffer (transformers 004ad5f: torch.save repeats the
    # tied decoder); safetensors as a recent release writes it (8ec5810 + 040ba146: no position_ids
    # buffer, the tied aliases left out); Flax as FlaxBert*'s params tree.
    dims = (V, D, bert_config()["intermediate_size"], LMAX, 2, LAYERS)
    mlm_keys = official_keys.bert_for_masked_lm(*dims)
    cls_keys = official_keys.bert_for_sequence_classification(*dims, BERT_LABELS)
    pre_keys = official_keys.bert_for_pretraining(*dims)
    st = official_keys.bert_safetensors
    mlm_st = st(official_keys.bert_for_masked_lm(*dims, position_ids=False))
    cls_st = st(official_keys.bert_for_sequence_classification(*dims, BERT_LABELS,
                                                                position_ids=False))
    pre_st = st(official_keys.bert_for_pretraining(*dims, position_ids=False))
    mlm_sd = as_official(mlm.state_dict(), mlm_keys, "BertForMaskedLM")
    cls_sd = as_official(clf.state_dict(), cls_keys, "BertForSequenceClassification")
    assert mlm_sd["bert.embeddings.position_ids"].dtype == torch.int64
    model_dir(out, "bert_mlm_pytorch", "pytorch_model.bin", torch_save_state(mlm_sd),
              config=json.dumps(bert_config()))
    model_dir(out, "bert_mlm_safetensors", "model.safetensors", safetensors_bytes(
        as_official(recent_safetensors(mlm_sd), mlm_st, "BertForMaskedLM safetensors")),
        config=json.dumps(bert_config()))
    model_dir(out, "bert_cls_pytorch", "pytorch_model.bin", torch_save_state(cls_sd),
              config=json.dumps(cls_cfg))
    # Google's original release's config (bert_config.json: no model_type, architectures or
    # layer_norm_eps) beside the same MLM weights, as transformers' TF conversion leaves them.
    google = {k: v for k, v in bert_config().items()
              if k not in ("architectures", "model_type", "layer_norm_eps", "pad_token_id",
                           "position_embedding_type")}
    write(f"{out}/bert_google_config/bert_config.json", json.dumps(google, indent=2))
    write(f"{out}/bert_google_config/pytorch_model.bin", torch_save_state(mlm_sd))
    write(f"{out}/bert_google_config/vocab.txt", "\n".join(V_PIECES) + "\n")
    # The same classifier as transformers writes config.json when the label names are its
    # defaults: no id2label (a binary classifier's defaults are left out of the diff), or the
    # placeholders LABEL_0..LABEL_2.
    no_names = {k: v for k, v in cls_cfg.items() if k not in ("id2label", "label2id")}
    model_dir(out, "bert_cls_no_id2label", "pytorch_model.bin", torch_save_state(cls_sd),
              config=json.dumps(no_names))
    model_dir(out, "bert_cls_placeholder_labels", "pytorch_model.bin", torch_save_state(cls_sd),
              config=json.dumps({**no_names, "id2label": {str(i): f"LABEL_{i}" for i in range(3)}}))
    # The same 3-output classifier under a config.json that declares 2 labels (id2label and
    # num_labels, or num_labels alone): transformers builds a 2-row classifier from it and refuses
    # these weights (size mismatch).
    two = {"id2label": {"0": "negative", "1": "positive"}, "label2id": {"negative": 0, "positive": 1}}
    model_dir(f"{out}/bad", "bert_cls_id2label_2_of_3", "pytorch_model.bin", torch_save_state(cls_sd),
              config=json.dumps({**no_names, **two, "num_labels": 2}))
    model_dir(f"{out}/bad", "bert_cls_num_labels_2_of_3", "pytorch_model.bin",
              torch_save_state(cls_sd), config=json.dumps({**no_names, "num_labels": 2}))
    model_dir(out, "bert_cls_safetensors", "model.safetensors", safetensors_bytes(
        as_official(recent_safetensors(cls_sd), cls_st, "BertForSequenceClassification st")),
        config=json.dumps(cls_cfg))
    # Flax (FlaxBertForMaskedLM, FlaxBertForSequenceClassification).
    mlm_flax = as_official(bert_flax(mlm_sd), official_keys.flax_bert_for_masked_lm(*dims),
                           "FlaxBertForMaskedLM")
    model_dir(out, "bert_mlm_flax", "flax_model.msgpack", mp(flax_tree(mlm_flax)),
              config=json.dumps(bert_config()))
    # tie_word_embeddings false: FlaxBertLMPredictionHead then calls its own decoder Dense, whose
    # kernel [H, V] is saved under cls/predictions/decoder (modeling_flax_bert.py).
    untied = collections.OrderedDict(mlm_flax)
    word = next(v for k, v in mlm_flax.items() if k.endswith("word_embeddings/embedding"))
    untied["cls/predictions/decoder/kernel"] = np.ascontiguousarray(np.asarray(word).T)
    model_dir(out, "bert_mlm_flax_untied", "flax_model.msgpack", mp(flax_tree(untied)),
              config=json.dumps({**bert_config(), "tie_word_embeddings": False}))
    cls_flax = as_official(bert_flax(cls_sd), official_keys.flax_bert_for_sequence_classification(
        *dims, BERT_LABELS), "FlaxBertForSequenceClassification")
    model_dir(out, "bert_cls_flax", "flax_model.msgpack", mp(flax_tree(cls_flax)),
              config=json.dumps(cls_cfg))
    # Old BERT names (pytorch-pretrained-bert's files, not read in transformers' code here):
    # LayerNorm gamma/beta for weight/bias, otherwise BertForMaskedLM's key set.
    old = collections.OrderedDict(
        (k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"), v)
        for k, v in mlm_sd.items())
    assert len(old) == len(mlm_sd) and sum("LayerNorm.gamma" in k for k in old) == 2 * LAYERS + 2
    model_dir(out, "bert_mlm_gamma", "pytorch_model.bin", torch_save_state(old),
              config=json.dumps(bert_config()))
    # A pretraining checkpoint (BertForPreTraining) in the three layouts: the MLM model plus the
    # pooler and the next-sentence head, which an MLM import leaves out with a note. The tied
    # decoder stays tied in the .bin (the same tensors as the embeddings and the bias).
    pre = collections.OrderedDict(mlm_sd)
    pre["bert.pooler.dense.weight"] = torch.zeros(D, D)
    pre["bert.pooler.dense.bias"] = torch.zeros(D)
    pre["cls.seq_relationship.weight"] = torch.zeros(2, D)
    pre["cls.seq_relationship.bias"] = torch.zeros(2)
    pre = as_official(pre, pre_keys, "BertForPreTraining")
    pre_cfg = json.dumps(bert_config(architectures=["BertForPreTraining"]))
    model_dir(out, "bert_pretraining", "pytorch_model.bin", torch_save_state(pre), config=pre_cfg)
    model_dir(out, "bert_pretraining_safetensors", "model.safetensors", safetensors_bytes(
        as_official(recent_safetensors(pre), pre_st, "BertForPreTraining safetensors")),
        config=pre_cfg)
    pre_flax = as_official(bert_flax(pre), official_keys.flax_bert_for_pretraining(*dims),
                           "FlaxBertForPreTraining")
    model_dir(out, "bert_pretraining_flax", "flax_model.msgpack", mp(flax_tree(pre_flax)),
              config=pre_cfg)
    # BertModel as save_pretrained writes the encoder on its own: the pretraining model's "bert."
    # tensors without that prefix (embeddings, encoder, pooler), config architectures BertModel;
    # in PyTorch and Flax names.
    base = collections.OrderedDict((k[len("bert."):], v) for k, v in pre.items()
                                   if k.startswith("bert."))
    assert "pooler.dense.weight" in base and not any(k.startswith("cls") for k in base)
    base_cfg = json.dumps(bert_config(architectures=["BertModel"]))
    model_dir(out, "bert_base_model", "pytorch_model.bin", torch_save_state(base), config=base_cfg)
    base_flax = collections.OrderedDict((k[len("bert/"):], v) for k, v in pre_flax.items()
                                        if k.startswith("bert/"))
    model_dir(out, "bert_base_model_flax", "flax_model.msgpack", mp(flax_tree(base_flax)),
              config=base_cfg)
    # The same encoder under a config naming BertForMaskedLM: the MLM head is missing, not absent.
    model_dir(out, "bad/bert_mlm_without_head", "pytorch_model.bin", torch_save_state(base),
              config=json.dumps(bert_config()))
    # Bad: position ids that are not 0..Lmax-1; a hidden_act the MLM head cannot share.
    bad = collections.OrderedDict(mlm_sd)
    bad["bert.embeddings.position_ids"] = torch.arange(LMAX).flip(0)[None, :]
    model_dir(out, "bad/bert_position_ids", "pytorch_model.bin", torch_save_state(bad),
              config=json.dumps(bert_config()))
    model_dir(out, "bad/bert_gelu_new", "pytorch_model.bin", torch_save_state(mlm_sd),
              config=json.dumps(bert_config(hidden_act="gelu_new")))
    # transformers' BertModel always builds the token type table: weights without it are not a
    # BERT (refused, naming the tensor, where it used to import a model without type embeddings).
    no_types = collections.OrderedDict((k, v) for k, v in recent_safetensors(mlm_sd).items()
                                       if "token_type_embeddings" not in k)
    assert len(no_types) == len(recent_safetensors(mlm_sd)) - 1
    model_dir(out, "bad/bert_no_token_types", "model.safetensors", safetensors_bytes(no_types),
              config=json.dumps(bert_config()))
    # A safetensors header length 4 bytes too long: the JSON parser reads into the data, bytes
    # 0xD3 that are not UTF-8, and quotes them in its message ("last read: ...").
    header = json.dumps({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    model_dir(out, "bad/header_into_data", "model.safetensors",
              struct.pack("<Q", len(header) + 4) + header + b"\xd3" * 8,
              config=json.dumps(bert_config()))
    # The MLM bias under its tied alias only (cls.predictions.decoder.bias, the same parameter in
    # transformers, which loads such a file): the same model as bert_mlm_safetensors.
    alias = collections.OrderedDict(
        ("cls.predictions.decoder.bias" if k == "cls.predictions.bias" else k, v)
        for k, v in recent_safetensors(mlm_sd).items())
    assert "cls.predictions.bias" not in alias and "cls.predictions.decoder.bias" in alias
    model_dir(out, "bert_mlm_decoder_bias_alias", "model.safetensors", safetensors_bytes(alias),
              config=json.dumps(bert_config()))
    # Heads the engine does not have, which would import as something else (session 22): a causal
    # decoder, a one-output (regression / multiple-choice) head, a sigmoid multi-label head.
    model_dir(out, "bad/bert_lm_head", "pytorch_model.bin", torch_save_state(mlm_sd),
              config=json.dumps(bert_config(architectures=["BertLMHeadModel"], is_decoder=True)))
    model_dir(out, "bad/bert_lm_head_architecture", "pytorch_model.bin", torch_save_state(mlm_sd),
              config=json.dumps(bert_config(architectures=["BertLMHeadModel"])))
    one = collections.OrderedDict(cls_sd)
    one["classifier.weight"] = one["classifier.weight"][:1].clone()
    one["classifier.bias"] = one["classifier.bias"][:1].clone()
    model_dir(out, "bad/bert_one_output", "pytorch_model.bin", torch_save_state(one),
              config=json.dumps(bert_config(architectures=["BertForSequenceClassification"])))
    model_dir(out, "bad/bert_multi_label", "pytorch_model.bin", torch_save_state(cls_sd),
              config=json.dumps(bert_config(architectures=["BertForSequenceClassification"],
                                            problem_type="multi_label_classification")))
    model_dir(out, "bad/bert_multiple_choice", "pytorch_model.bin", torch_save_state(one),
              config=json.dumps(bert_config(architectures=["BertForMultipleChoice"])))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(16)

    # ---- readers: the same values in each format and dtype; expected float32 values in JSON
    values = {"a": (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5) / 8,
              "b": np.array([1e-7, -65504.0, 3.140625, 0.0, -0.0, 1.0 / 3.0], dtype=np.float32),
              "scalar": np.array(2.5, dtype=np.float32)}
    expected = {}
    # float64: the float32 values plus doubles float32 cannot hold, which the readers round to
    # nearest (numpy's astype(float32) gives the expected values).
    doubles = np.array([1.0 / 3.0, 1e-40, 0.1, -2.5e-7, 16777217.0], dtype=np.float64)
    for dt in ("float32", "float16", "bfloat16", "float64"):
        stored = dict(values)
        if dt == "float64":
            stored = {k: a.astype(np.float64) for k, a in values.items()}
            stored["double"] = doubles
        conv = {}
        for k, a in stored.items():
            if dt == "float16":
                conv[k] = a.astype(np.float16).astype(np.float32)
            elif dt == "bfloat16":
                conv[k] = torch.from_numpy(a).to(torch.bfloat16).to(torch.float32).numpy()
            else:
                conv[k] = a.astype(np.float32)
        expected[dt] = {k: {"shape": list(a.shape), "values": [float(x) for x in a.ravel()]}
                        for k, a in conv.items()}
        # Flax: nested maps ("group/a").
        flat = {"group/" + k: (a.astype(np.float16) if dt == "float16" else a) for k, a in stored.items()}
        write(f"{out}/readers/{dt}.msgpack", mp(flax_tree(flat, dt)))
        st_vals = {k: (a.astype(np.float16) if dt == "float16" else a) for k, a in stored.items()}
        write(f"{out}/readers/{dt}.safetensors", safetensors_bytes(st_vals, dt))
        tdt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
               "float64": torch.float64}[dt]
        sd = collections.OrderedDict((k, torch.from_numpy(np.asarray(a)).to(tdt))
                                     for k, a in stored.items())
        base = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(tdt)
        sd["view_t"] = base.t()           # non-contiguous view, shares a storage
        sd["view_slice"] = base[1:, 2:]   # offset + strides into the same storage
        expected[dt]["view_t"] = {"shape": [4, 3], "values": [float(x) for x in base.t().float().flatten()]}
        expected[dt]["view_slice"] = {"shape": [2, 2], "values": [float(x) for x in base[1:, 2:].float().flatten()]}
        # torch.Tensor.expand: stride 0, more elements than the storage holds (torch.load keeps
        # the view; its values are torch's own materialisation).
        row = torch.arange(4, dtype=torch.float32).to(tdt)
        sd["view_expanded"] = row.expand(3, 4)
        expected[dt]["view_expanded"] = {"shape": [3, 4], "values": [float(x) for x in row.expand(3, 4).float().flatten()]}
        # Overlapping strides (unfold: a Toeplitz matrix of 12 elements over a storage of 6):
        # more elements than the storage, every one inside it.
        line = torch.arange(6, dtype=torch.float32).to(tdt) - 2.5
        sd["view_overlap"] = line.unfold(0, 4, 1)
        assert sd["view_overlap"].stride() == (1, 1)
        expected[dt]["view_overlap"] = {"shape": [3, 4], "values": [float(x) for x in line.unfold(0, 4, 1).float().flatten()]}
        torch.save(sd, f"{out}/readers/{dt}.bin")
        torch.save(sd, f"{out}/readers/{dt}.legacy.bin", _use_new_zipfile_serialization=False)
        # The legacy format as Python 2.7 wrote it (torch <= 1.4); torch.load reads the same.
        write(f"{out}/readers/{dt}.py2.legacy.bin", legacy_bytes(sd))
        got = torch.load(f"{out}/readers/{dt}.py2.legacy.bin")
        assert list(got) == list(sd) and all(torch.equal(got[k], sd[k]) for k in sd)
    write(f"{out}/readers/expected.json", json.dumps(expected))
    # A safetensors header of exactly 640 bytes: the file starts 0x80 0x02 0 0 0 0 0 0 '{', as a
    # protocol-2 pickle starts 0x80 0x02 (it was refused as "a Python pickle").
    h640 = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "__metadata__": {"pad": ""}}
    h640["__metadata__"]["pad"] = "p" * (640 - len(json.dumps(h640).encode()))
    h640 = json.dumps(h640).encode()
    assert len(h640) == 640
    header_640 = struct.pack("<Q", 640) + h640 + np.array([1.5, -2.0], np.float32).tobytes()
    assert header_640[:2] == b"\x80\x02"
    write(f"{out}/readers/header_640.safetensors", header_640)

    # ---- the small BiGS in three formats
    p = small_bigs(rng)
    with h5py.File(f"{out}/bigs_expected.h5", "w") as h:
        for k, a in p.items():
            h[k] = a
    write_storage_cases(out, p)
    flax_bytes = mp(flax_tree(to_flax(p)))
    model_dir(out, "bigs_flax", "flax_model.msgpack", flax_bytes)
    model_dir(out, "bigs_pytorch", "pytorch_model.bin", torch_save_bytes(to_torch_names(p)))
    model_dir(out, "bigs_pytorch_legacy", "pytorch_model.bin",
              torch_save_bytes(to_torch_names(p), legacy=True))
    # float64 storage (exact doubles of the float32 values): rounds back to them exactly.
    model_dir(out, "bigs_safetensors_f64", "model.safetensors", safetensors_bytes(
        collections.OrderedDict((k, np.asarray(v, np.float64)) for k, v in to_torch_names(p).items())))
    model_dir(out, "bigs_safetensors", "model.safetensors",
              safetensors_bytes(to_torch_names(p)), vocab="tokenizer.json")
    # torch.save(..., pickle_protocol=3 or 4): the legacy format with another pickle protocol (the
    # magic number's pickle then starts 0x80 0x03, or 0x80 0x04 and a frame), which torch loads.
    for protocol in (3, 4):
        model_dir(out, f"bigs_pytorch_legacy_p{protocol}", "pytorch_model.bin",
                  torch_save_bytes(to_torch_names(p), legacy=True, protocol=protocol))
    # A vocab.txt saved "UTF-8 with BOM" by an editor.
    model_dir(out, "bigs_vocab_bom", "model.safetensors", safetensors_bytes(to_torch_names(p)))
    write(f"{out}/bigs_vocab_bom/vocab.txt", "\ufeff" + "\n".join(V_PIECES) + "\n")
    # config.json edited to far more layers than the weights hold (took minutes and gigabytes).
    model_dir(f"{out}/bad", "bigs_layers_2e6", "model.safetensors",
              safetensors_bytes(to_torch_names(p)), config=config_json(num_hidden_layers=2000000))
    # A torch.save zip from a big-endian machine (PyTorch ≥ 2.1 records archive/byteorder; the
    # torch here may predate it, so the record is added as torch writes it, stored).
    zipped = io.BytesIO(torch_save_bytes(to_torch_names(p)))
    big = io.BytesIO()
    with zipfile.ZipFile(zipped) as src, zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as dst:
        prefix = src.namelist()[0].split("/")[0]
        for info in src.infolist():
            if not info.filename.endswith("/byteorder"):
                dst.writestr(info, src.read(info.filename))
        dst.writestr(prefix + "/byteorder", b"big")
    model_dir(f"{out}/bad", "torch_big_endian", "pytorch_model.bin", big.getvalue())
    # pickle.dump of a state_dict (not torch.save): refused as such, never run.
    model_dir(f"{out}/bad", "plain_pickle", "pytorch_model.bin",
              pickle.dumps({k: np.asarray(v) for k, v in to_torch_names(p).items()}, protocol=4))
    # The same in protocols 0 and 1, which have no PROTO opcode (read as "not a zip archive").
    for protocol in (0, 1):
        model_dir(f"{out}/bad", f"plain_pickle_{protocol}", "pytorch_model.bin",
                  pickle.dumps(collections.OrderedDict(
                      (k, np.asarray(v)) for k, v in to_torch_names(p).items()), protocol=protocol))
    # ---- legacy torch.save, damaged: cut inside the last storage; a storage whose element count
    # (written before its bytes) disagrees with the pickle; a pickle calling os.system.
    legacy = torch_save_bytes(to_torch_names(p), legacy=True)
    model_dir(f"{out}/bad", "legacy_truncated", "pytorch_model.bin", legacy[:-7])
    small = torch_save_bytes(collections.OrderedDict(a=np.arange(6, dtype=np.float32)), legacy=True)
    six = struct.pack("<Q", 6) + np.arange(6, dtype=np.float32).tobytes()
    assert small.endswith(six)
    model_dir(f"{out}/bad", "legacy_count", "pytorch_model.bin",
              small[:-len(six)] + struct.pack("<Q", 5) + six[8:])

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch /tmp/routescope-legacy-pwned",))
    evil = io.BytesIO()
    torch.save(collections.OrderedDict(a=Evil()), evil, _use_new_zipfile_serialization=False)
    model_dir(f"{out}/bad", "legacy_evil", "pytorch_model.bin", evil.getvalue())

    # ---- the same BiGS sharded, in each format (3 shards), and bad shard indexes
    sharded_dir(out, "bigs_sharded_safetensors", "safetensors", to_torch_names(p), 3)
    sharded_dir(out, "bigs_sharded_pytorch", "pytorch", to_torch_names(p), 3)
    sharded_dir(out, "bigs_sharded_flax", "flax", to_flax(p), 3)
    sb = f"{out}/bad"

    def drop_last_shard(shards, index):
        shards.popitem()
    sharded_dir(sb, "sharded_missing_shard", "safetensors", to_torch_names(p), 3,
                tamper=drop_last_shard)

    def escape(shards, index):
        first = next(iter(index["weight_map"]))
        index["weight_map"][first] = "../bigs_sharded_safetensors/model-00001-of-00003.safetensors"
    sharded_dir(sb, "sharded_escape", "safetensors", to_torch_names(p), 3, tamper=escape)

    def unlisted(shards, index):
        del index["weight_map"]["bigs.embeddings.LayerNorm.bias"]
    sharded_dir(sb, "sharded_unlisted", "safetensors", to_torch_names(p), 3, tamper=unlisted)

    def misplaced(shards, index):
        index["weight_map"]["bigs.embeddings.LayerNorm.bias"] = "model-00003-of-00003.safetensors"
    sharded_dir(sb, "sharded_misplaced", "safetensors", to_torch_names(p), 3, tamper=misplaced)

    def absent(shards, index):
        index["weight_map"]["bigs.encoder.layer.9.dv.weight"] = "model-00002-of-00003.safetensors"
    sharded_dir(sb, "sharded_absent", "safetensors", to_torch_names(p), 3, tamper=absent)

    def mixed(shards, index):  # the second shard written as a PyTorch zip under the same name
        name, part = list(shards.items())[1]
        shards[name] = torch_save_bytes(part)
    sharded_dir(sb, "sharded_mixed", "safetensors", to_torch_names(p), 3, tamper=mixed)

    def no_map(shards, index):
        index.pop("weight_map")
    sharded_dir(sb, "sharded_no_weight_map", "safetensors", to_torch_names(p), 3, tamper=no_map)

    def split_tensor(shards, index):  # one tensor in two shards (the map can name only one)
        parts = list(shards.values())
        parts[2]["bigs.embeddings.LayerNorm.bias"] = parts[0]["bigs.embeddings.LayerNorm.bias"]
    sharded_dir(sb, "sharded_twice", "safetensors", to_torch_names(p), 3, tamper=split_tensor)

    # ---- BiGSForMaskedLM exactly as the official PyTorch port saves it (official_keys.py): the
    # position_ids buffer, the pooler BiGSModel always creates (unused by an MLM model: skipped
    # with a note), the tied decoder repeated. safetensors as transformers saves it: the tied
    # copies left out (they share storage with what they repeat).
    full = to_torch_names(p)
    full["bigs.embeddings.position_ids"] = np.arange(LMAX, dtype=np.int64)[None, :]
    full["bigs.pooler.dense.weight"] = rng.standard_normal((D, D)).astype(np.float32)
    full["bigs.pooler.dense.bias"] = rng.standard_normal(D).astype(np.float32)
    official = official_keys.bigs_for_masked_lm(V, D, I, N, LMAX, 2, LAYERS)
    assert set(full) == set(official), sorted(set(full) ^ set(official))
    for name, shape in official.items():
        got = tuple(np.shape(full[name]))
        # The engine-named fixture stores some S4D leaves with a unit head ([1, N]); the port's
        # are [N]: write them in the port's shapes.
        if got != shape:
            full[name] = np.asarray(full[name]).reshape(shape)
    full = collections.OrderedDict((n, full[n]) for n in official)  # the port's order
    model_dir(out, "bigs_official_pytorch", "pytorch_model.bin", torch_save_bytes(full))
    model_dir(out, "bigs_official_safetensors", "model.safetensors",
              safetensors_bytes(collections.OrderedDict(
                  (n, v) for n, v in full.items() if not n.startswith("cls.predictions.decoder"))))
    # FlaxBiGSForPreTraining: the MLM model's parameters plus the pooler and the next-sentence
    # head (official_keys.py), both unused by an MLM model.
    pre = to_flax(p)
    for name, shape in official_keys.flax_bigs_pretraining_extra(D).items():
        pre[name] = rng.standard_normal(shape).astype(np.float32)
    model_dir(out, "bigs_official_flax_pretraining", "flax_model.msgpack", mp(flax_tree(pre)),
              config=config_json(architectures=["BiGSForPreTraining"]))
    unknown = collections.OrderedDict(full)
    unknown["bigs.encoder.layer.0.extra.weight"] = np.zeros((2, 2), np.float32)
    model_dir(out, "bad/bigs_official_unknown", "pytorch_model.bin", torch_save_bytes(unknown))
    # JSON nested 10^5 deep beside the weights (a hostile download): refused by its depth, not a
    # stack overflow (the tokenizer_config.json reader crashed on it).
    deep = "[" * 100000 + "]" * 100000
    model_dir(out, "bad/deep_tokenizer_config", "pytorch_model.bin", torch_save_bytes(full))
    write(f"{out}/bad/deep_tokenizer_config/tokenizer_config.json",
          '{"do_lower_case": ' + deep + "}")
    # tokenizer.json whose WordPiece vocab is empty: said of its own key, not of a vocab.txt.
    model_dir(out, "bad/empty_tokenizer_json", "pytorch_model.bin", torch_save_bytes(full),
              vocab="tokenizer.json")
    write(f"{out}/bad/empty_tokenizer_json/tokenizer.json", json.dumps(
        {"version": "1.0", "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {}}}))
    model_dir(out, "bad/deep_config", "pytorch_model.bin", torch_save_bytes(full),
              config='{"model_type": "BiGS", "x": ' + deep + "}")

    write_bert(out, np.random.default_rng(1616))

    # ---- a BiGS classification fine-tune (BiGS_*_MNLI): no cls/, a pooler and a classifier
    pc = small_bigs(rng)
    for k in ("mlm.dense.weight", "mlm.dense.bias", "mlm.norm.weight", "mlm.norm.bias", "mlm.bias"):
        del pc[k]
    pc["classifier.pool.weight"], pc["classifier.pool.bias"] = rng.standard_normal((D, D)).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    pc["classifier.out.weight"], pc["classifier.out.bias"] = rng.standard_normal((3, D)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    with h5py.File(f"{out}/bigs_cls_expected.h5", "w") as h:
        for k, a in pc.items():
            h[k] = a
    fl = collections.OrderedDict((k, v) for k, v in to_flax({**small_bigs(np.random.default_rng(0)), **pc}).items()
                                 if not k.startswith("cls/"))
    fl["s4_bert/pooler/dense/kernel"] = np.ascontiguousarray(pc["classifier.pool.weight"].T)
    fl["s4_bert/pooler/dense/bias"] = pc["classifier.pool.bias"]
    fl["classifier/kernel"] = np.ascontiguousarray(pc["classifier.out.weight"].T)
    fl["classifier/bias"] = pc["classifier.out.bias"]
    tn = collections.OrderedDict((k, v) for k, v in to_torch_names({**small_bigs(np.random.default_rng(0)), **pc}).items()
                                 if not k.startswith("cls."))
    tn["bigs.pooler.dense.weight"], tn["bigs.pooler.dense.bias"] = pc["classifier.pool.weight"], pc["classifier.pool.bias"]
    tn["classifier.weight"], tn["classifier.bias"] = pc["classifier.out.weight"], pc["classifier.out.bias"]
    # BiGSForSequenceClassification's state_dict as the official port saves it (official_keys.py):
    # the position_ids buffer too.
    tn["bigs.embeddings.position_ids"] = np.arange(LMAX, dtype=np.int64)[None, :]
    official_cls = official_keys.bigs_for_sequence_classification(V, D, I, N, LMAX, 2, LAYERS, 3)
    assert set(tn) == set(official_cls), sorted(set(tn) ^ set(official_cls))
    assert all(tuple(np.shape(tn[n])) == s for n, s in official_cls.items())
    tn = collections.OrderedDict((n, tn[n]) for n in official_cls)
    mnli = config_json(architectures=["BiGSForSequenceClassification"], num_labels=3,
                       id2label={"0": "entailment", "1": "neutral", "2": "contradiction"})
    model_dir(out, "bigs_cls_flax", "flax_model.msgpack", mp(flax_tree(fl)), config=mnli)
    model_dir(out, "bigs_cls_pytorch", "pytorch_model.bin", torch_save_bytes(tn), config=mnli)
    model_dir(out, "bigs_cls_safetensors", "model.safetensors", safetensors_bytes(tn), config=mnli)

    # ---- bad inputs
    bad = f"{out}/bad"
    model_dir(bad, "truncated_msgpack", "flax_model.msgpack", flax_bytes[: len(flax_bytes) * 2 // 3])
    f = to_flax(p)
    f["s4_bert/encoder/layer/1/dv/kernel"] = np.zeros((D, I + 1), np.float32)
    model_dir(bad, "wrong_shape", "flax_model.msgpack", mp(flax_tree(f)))
    f = to_flax(p)
    del f["s4_bert/encoder/layer/0/bs4/log_step"]
    model_dir(bad, "missing_tensor", "flax_model.msgpack", mp(flax_tree(f)))
    f = to_flax(p)
    f["s4_bert/encoder/layer/0/extra/kernel"] = np.zeros((2, 2), np.float32)
    model_dir(bad, "unexpected_tensor", "flax_model.msgpack", mp(flax_tree(f)))
    # A key holding '/' beside the nested keys: two leaves joined to one name,
    # s4_bert/embeddings/LayerNorm/bias (zeros first, the real one nested after it).
    tree = flax_tree(to_flax(p))
    decoy = {"s4_bert/embeddings": {"LayerNorm": {"bias": flax_leaf(np.zeros(D, np.float32))}}}
    model_dir(bad, "flax_joined_duplicate", "flax_model.msgpack", mp({**decoy, **tree}))
    f = to_flax(p)
    leaf = f["s4_bert/embeddings/LayerNorm/bias"]
    f["s4_bert/embeddings/LayerNorm/bias"] = Ext(1, mp((tuple(leaf.shape), "int8", leaf.astype(np.int8).tobytes())))
    model_dir(bad, "unknown_dtype_flax", "flax_model.msgpack", mp(flax_tree(f)))
    t = to_torch_names(p)
    model_dir(bad, "unknown_dtype_safetensors", "model.safetensors", safetensors_bytes(
        t, tamper=lambda h: h["bigs.embeddings.LayerNorm.bias"].update(dtype="I8")))
    model_dir(bad, "unknown_model_type", "flax_model.msgpack", flax_bytes,
              config=config_json(model_type="gpt2"))
    # config.json integers read as they are (session 21: 2^32 + D wrapped to D, 16.5 became 16,
    # true became 1), and a vocab_size whose model would be gigabytes refused before allocating.
    model_dir(bad, "config_wrapped_width", "flax_model.msgpack", flax_bytes,
              config=config_json(hidden_size=2 ** 32 + D))
    model_dir(bad, "config_fractional_layers", "flax_model.msgpack", flax_bytes,
              config=config_json(num_hidden_layers=LAYERS + 0.5))
    model_dir(bad, "config_boolean_width", "flax_model.msgpack", flax_bytes,
              config=config_json(hidden_size=True))
    model_dir(bad, "config_vocab_1e8", "model.safetensors", safetensors_bytes(to_torch_names(p)),
              config=config_json(vocab_size=10 ** 8))
    # A NaN in a tensor is named as the input's tensor (it was exit 3, naming the import's
    # temporary checkpoint).
    t_nan = to_torch_names(p)
    t_nan["bigs.embeddings.LayerNorm.weight"] = np.array(t_nan["bigs.embeddings.LayerNorm.weight"],
                                                         np.float32)
    t_nan["bigs.embeddings.LayerNorm.weight"][3] = np.nan
    model_dir(bad, "nan_weight", "model.safetensors", safetensors_bytes(t_nan))
    # A vocabulary padded past the tokenizer: config.json says V, vocab.txt has V - 2 pieces and
    # the embeddings V rows. Imports, the last two rows with placeholder pieces.
    model_dir(out, "padded_vocab", "model.safetensors", safetensors_bytes(to_torch_names(p)))
    write(f"{out}/padded_vocab/vocab.txt", "\n".join(V_PIECES[:-2]) + "\n")
    # TensorFlow weights: Google's original release (bert_config.json, bert_model.ckpt.*) and
    # transformers' Keras file; import names them and the conversion (their contents are not read:
    # placeholder bytes, and an HDF5 file for the Keras one).
    write(f"{bad}/tf_checkpoint/bert_config.json", config_json())
    write(f"{bad}/tf_checkpoint/vocab.txt", "\n".join(V_PIECES) + "\n")
    write(f"{bad}/tf_checkpoint/bert_model.ckpt.index", b"\0" * 64)
    write(f"{bad}/tf_checkpoint/bert_model.ckpt.data-00000-of-00001", b"\0" * 256)
    write(f"{bad}/tf_checkpoint/bert_model.ckpt.meta", b"\0" * 64)
    os.makedirs(f"{bad}/tf_keras", exist_ok=True)
    write(f"{bad}/tf_keras/config.json", config_json())
    write(f"{bad}/tf_keras/vocab.txt", "\n".join(V_PIECES) + "\n")
    with h5py.File(f"{bad}/tf_keras/tf_model.h5", "w") as h:
        h["bert/embeddings/word_embeddings/weight:0"] = np.zeros((V, D), np.float32)
    model_dir(bad, "untied_decoder", "pytorch_model.bin", torch_save_bytes(
        {**t, "cls.predictions.decoder.weight": np.zeros((V, D), np.float32)}))
    # safetensors: overlapping offsets; offsets past the file; a header length past the file
    def overlap(h):
        h["bigs.embeddings.LayerNorm.bias"]["data_offsets"] = list(h["bigs.embeddings.LayerNorm.weight"]["data_offsets"])
    model_dir(bad, "st_overlap", "model.safetensors", safetensors_bytes(t, tamper=overlap))
    def past(h):
        b, e = h["cls.predictions.bias"]["data_offsets"]
        h["cls.predictions.bias"]["data_offsets"] = [b + 10 ** 6, e + 10 ** 6]
    model_dir(bad, "st_past_end", "model.safetensors", safetensors_bytes(t, tamper=past))
    # Session 37: what the safetensors format forbids (huggingface/safetensors README, "Format"):
    # "Duplicate keys are disallowed"; "The header data MUST begin with a { character";
    # "The byte buffer needs to be entirely indexed, and cannot contain holes". The header is
    # written as text here (json.dumps cannot repeat a key), the data as the offsets say.
    def raw_safetensors(entries, lead=b"", gaps=None, tail=b""):
        """entries: (name, float32 array) in order, repeats kept; gaps: {i: bytes of zeros
        before entry i}; tail: bytes after the last tensor."""
        gaps = gaps or {}
        parts, data = [], b""
        for i, (name, a) in enumerate(entries):
            data += b"\0" * gaps.get(i, 0)
            raw = np.ascontiguousarray(a, np.float32).tobytes()
            parts.append('"%s": {"dtype": "F32", "shape": %s, "data_offsets": [%d, %d]}'
                         % (name, json.dumps(list(np.shape(a))), len(data), len(data) + len(raw)))
            data += raw
        h = lead + ("{" + ", ".join(parts) + "}").encode()
        h += b" " * (-len(h) % 8)
        return struct.pack("<Q", len(h)) + h + data + tail
    entries = list(t.items())
    assert entries[0][0] == "bigs.embeddings.word_embeddings.weight"
    model_dir(bad, "st_duplicate_key", "model.safetensors", raw_safetensors(
        entries + [("bigs.embeddings.LayerNorm.bias", np.full(D, 7.0, np.float32))]))
    model_dir(bad, "st_hole_at_start", "model.safetensors", raw_safetensors(entries, gaps={0: 64}))
    model_dir(bad, "st_hole_between", "model.safetensors", raw_safetensors(entries, gaps={1: 8}))
    model_dir(bad, "st_trailing_bytes", "model.safetensors",
              raw_safetensors(entries, tail=b"\0" * 16))
    model_dir(bad, "st_header_leading_space", "model.safetensors",
              raw_safetensors(entries, lead=b" "))
    # A torch.save file under the safetensors name (its format is its content's).
    model_dir(bad, "st_is_torch_save", "model.safetensors", torch_save_bytes(t))
    # config.json's 30,000 layers against weights holding layers 0-1 and one stray tensor named
    # for layer 29,999 (the highest index passed the layer check).
    stray = collections.OrderedDict(t)
    stray["bigs.encoder.layer.29999.dv.weight"] = np.zeros((I, D), np.float32)
    model_dir(bad, "bigs_layers_stray", "model.safetensors", safetensors_bytes(stray),
              config=config_json(num_hidden_layers=30000))
    # Vocabularies: UTF-16 (Windows' "Unicode"); without [CLS] and [SEP], which BERT and BiGS
    # frame every input with (BertTokenizer.build_inputs_with_special_tokens: [CLS] X [SEP]);
    # an MLM model's without [MASK] (imports, with a note). Same number of pieces.
    model_dir(bad, "vocab_utf16", "model.safetensors", safetensors_bytes(t))
    write(f"{bad}/vocab_utf16/vocab.txt", ("\ufeff" + "\n".join(V_PIECES) + "\n").encode("utf-16-le"))
    renamed = {"[CLS]": "[unused1]", "[SEP]": "[unused2]", "[MASK]": "[unused3]"}
    model_dir(bad, "vocab_no_cls_sep", "model.safetensors", safetensors_bytes(t))
    write(f"{bad}/vocab_no_cls_sep/vocab.txt", "\n".join(
        renamed.get(q, q) if q != "[MASK]" else q for q in V_PIECES) + "\n")
    model_dir(out, "bigs_vocab_no_mask", "model.safetensors", safetensors_bytes(t))
    write(f"{out}/bigs_vocab_no_mask/vocab.txt", "\n".join(
        renamed[q] if q == "[MASK]" else q for q in V_PIECES) + "\n")
    write(f"{bad}/st_huge_header.safetensors", struct.pack("<Q", 2 ** 62) + b"{}")
    write(f"{bad}/st_huge_shape.safetensors", safetensors_bytes(
        {"x": np.zeros(2, np.float32)}, tamper=lambda h: h["x"].update(shape=[2 ** 31, 2 ** 31])))
    # msgpack declaring 2^32-1 array elements / a 4 GiB bin in a few bytes
    write(f"{bad}/mp_huge_array.msgpack", b"\x81\xa1x\xdd\xff\xff\xff\xff")
    write(f"{bad}/mp_huge_bin.msgpack", b"\x81\xa1x\xc6\xff\xff\xff\xff\x00")
    # PyTorch: a zip whose storage is missing
    good = torch_save_bytes(t)
    zin = zipfile.ZipFile(io.BytesIO(good))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zout:
        for item in zin.infolist():
            if not item.filename.endswith("/data/3"):
                zout.writestr(item, zin.read(item.filename))
    model_dir(bad, "zip_missing_storage", "pytorch_model.bin", buf.getvalue())
    # A zip naming storage 0 twice, the second copy all 7.0: torch.load reads the second, a zip
    # reader's lookup the first; refused.
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
        with zipfile.ZipFile(io.BytesIO(good)) as zin, zipfile.ZipFile(buf, "w") as zout:
            for item in zin.infolist():
                data = zin.read(item.filename)
                zout.writestr(item, data)
                if item.filename.endswith("/data/0"):
                    zout.writestr(item.filename, struct.pack("<f", 7.0) * (len(data) // 4))
    model_dir(bad, "zip_duplicate_entry", "pytorch_model.bin", buf.getvalue())
    # A pickle whose payload would run os.system('touch <marker>') if it were unpickled by Python.
    marker = os.path.join(os.path.abspath(bad), "PWNED")

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + marker,))
    payload = pickle.dumps(collections.OrderedDict(w=Evil()), protocol=2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", "3\n")
    model_dir(bad, "evil_pickle", "pytorch_model.bin", buf.getvalue())
    # A pickle declaring a 4 GiB string in a few bytes
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02X\xff\xff\xff\xffab")
    write(f"{bad}/pickle_huge_string.bin", buf.getvalue())
    # One element expanded to 2^29 (2 GiB as float32) in a file of a few hundred bytes.
    torch.save(collections.OrderedDict(w=torch.ones(1).expand(1 << 29)), f"{bad}/torch_huge_expand.bin")

    # Pickles found by an adversarial sweep (session 21): nesting 300,000 deep (the recursive free
    # of the value tree overflowed the stack: SIGSEGV), a state_dict naming one key twice (a dict
    # keeps the last: a model the file does not describe), an unknown protocol.
    def pickle_zip(name, body):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", body)
        write(f"{bad}/{name}", buf.getvalue())
    pickle_zip("pickle_deep_tuples.bin", b"\x80\x02)" + b"\x85" * 300000 + b".")
    pickle_zip("pickle_deep_lists.bin", b"\x80\x02]" + b"(]" * 300000 + b"e" * 300000 + b".")
    sd = collections.OrderedDict([("a", torch.zeros(2)), ("b", torch.ones(2))])
    dup = io.BytesIO()
    torch.save(sd, dup)
    out = io.BytesIO()
    with zipfile.ZipFile(dup) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            body = z.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                renamed = body.replace(b"X\x01\x00\x00\x00b", b"X\x01\x00\x00\x00a")
                assert renamed != body, "the key 'b' was not found in the pickle"
                body = renamed
            w.writestr(info.filename, body)
    write(f"{bad}/pickle_duplicate_key.bin", out.getvalue())
    pickle_zip("pickle_protocol_9.bin", b"\x80\x09}.")


if __name__ == "__main__":
    main()
