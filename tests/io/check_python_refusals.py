#!/usr/bin/python3
"""routescope.load on hostile or inconsistent exports (docs/python.md, "What load refuses"): each
is refused with a routescope.LoadError naming the file and the problem, never another exception,
a silently different model, a hang or gigabytes of memory. The fixtures are written here, by
hand: BERT and BiGS tensors under the names of docs/python.md's table, and safetensors files by a
writer of this file's own (the format as huggingface/safetensors specifies it), so that what is
expected comes from the format and the docs, not from the loader. Session 30's probe findings:

 1  tied tensors that differ in the file (decoder vs word embeddings, decoder bias vs MLM bias)
 2  bert.embeddings.position_ids other than 0..max_position_embeddings-1
 3  config.json sizes larger than the file holds: refused before any module is built (time and
    memory bounded), and a pytorch_model.bin whose tensors share storage
 4  JSON nested too deeply (safetensors header, config.json)
 5  shapes whose element count overflows int64, dimensions above int64, JSON booleans
 6  config.json keys of the wrong type or range, missing, unknown hidden_act, not UTF-8, not a file
 7  state dict keys that are not strings, values that are not tensors, classifier.bias not [n >= 1]
 8  parameters that are not floating point (I64, BOOL, complex)
 9  a FIFO, directory or device where a file is read (would block open() forever)
10  safetensors the reference reader refuses: a gap or trailing bytes, a __metadata__ that is
    not {str: str}, a header over 100 MB; and a name twice (the reference reader keeps the last:
    refused as the safer choice)

The second probe's findings (every message must also be printable as UTF-8):

11  a pytorch_model.bin whose deflated zip records inflate to ~1000 times the file (torch.load
    would inflate them all before any check), a compression method torch cannot read
12  bert type_vocab_size not a JSON integer; BiGS position_embedding_type other than "absolute";
    a BiGS MLM head with a hidden_act other than gelu (routescope-cli import refuses it)
13  model.load_state_dict(torch.load(pytorch_model.bin)) strict, with or without position_ids
14  safetensors headers serde_json rejects (NaN, Infinity, a lone surrogate); a tensor name
    holding a lone surrogate in a pytorch_model.bin, quoted printably
15  the format's dtypes I16, U16, U32, U64 read with their values (a LoadError where torch has no
    such type); F8 refused as unsupported
16  safetensors.write: a 0-d array keeps shape [], big-endian arrays are written little-endian,
    a tensor named __metadata__ or a key that is not a string is refused

Run by check_python_package.py (so by the test_python_package CTest), or alone:
    check_python_refusals.py WORKDIR        exit 0, or 1 with the failures on stderr
"""
import io
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import time
import zipfile

import numpy as np
import torch

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
sys.path.insert(0, PYTHON_DIR)
import routescope  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


# ---- fixtures ------------------------------------------------------------------------------

def bert_config(**changes):
    c = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 30,
         "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
         "intermediate_size": 16, "hidden_act": "gelu", "max_position_embeddings": 12,
         "type_vocab_size": 2, "layer_norm_eps": 1e-12, "position_embedding_type": "absolute"}
    c.update(changes)
    return c


def bigs_config(**changes):
    c = {"architectures": ["BiGSForMaskedLM"], "model_type": "BiGS", "vocab_size": 30,
         "hidden_size": 8, "num_hidden_layers": 2, "intermediate_size": 12, "num_ssm": 4,
         "max_position_embeddings": 12, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
         "hidden_act": "gelu", "pre_norm": True, "pooler_type": "non_padding_mean"}
    c.update(changes)
    return c


def _random(seed):
    rng = np.random.default_rng(seed)
    return lambda *shape: (rng.standard_normal(shape) * 0.5).astype(np.float32)


def bert_tensors(c, head="mlm", seed=0, labels=3):
    """Hugging Face BERT's names (docs/python.md's table), float32 numpy arrays; neither the tied
    decoder nor position_ids (as the engine exports it)."""
    r = _random(seed)
    V, d, P, T, I = (c["vocab_size"], c["hidden_size"], c["max_position_embeddings"],
                     c["type_vocab_size"], c["intermediate_size"])
    t = {"bert.embeddings.word_embeddings.weight": r(V, d),
         "bert.embeddings.position_embeddings.weight": r(P, d),
         "bert.embeddings.token_type_embeddings.weight": r(T, d),
         "bert.embeddings.LayerNorm.weight": 1 + r(d), "bert.embeddings.LayerNorm.bias": r(d)}
    for i in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        for name, shape in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                            ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                            ("intermediate.dense", (I, d)), ("output.dense", (d, I))):
            t[p + name + ".weight"], t[p + name + ".bias"] = r(*shape), r(shape[0])
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + name + ".weight"], t[p + name + ".bias"] = 1 + r(d), r(d)
    if head == "mlm":
        t.update({"cls.predictions.transform.dense.weight": r(d, d),
                  "cls.predictions.transform.dense.bias": r(d),
                  "cls.predictions.transform.LayerNorm.weight": 1 + r(d),
                  "cls.predictions.transform.LayerNorm.bias": r(d), "cls.predictions.bias": r(V)})
    else:
        t.update({"bert.pooler.dense.weight": r(d, d), "bert.pooler.dense.bias": r(d),
                  "classifier.weight": r(labels, d), "classifier.bias": r(labels)})
    return t


def bigs_tensors(c, head="mlm", seed=0):
    """The official BiGS PyTorch port's names (docs/python.md's table), float32 numpy arrays."""
    r = _random(seed)
    V, d, P, I, N = (c["vocab_size"], c["hidden_size"], c["max_position_embeddings"],
                     c["intermediate_size"], c["num_ssm"])
    t = {"bigs.embeddings.word_embeddings.weight": r(V, d),
         "bigs.embeddings.position_embeddings.weight": r(P, d),
         "bigs.embeddings.token_type_embeddings.weight": r(2, d),
         "bigs.embeddings.LayerNorm.weight": 1 + r(d), "bigs.embeddings.LayerNorm.bias": r(d)}
    for i in range(c["num_hidden_layers"]):
        p = f"bigs.encoder.layer.{i}."
        t[p + "LayerNorm.weight"], t[p + "LayerNorm.bias"] = 1 + r(d), r(d)
        for name, shape in (("dv", (I, d)), ("du_forward", (d, d)), ("du_backward", (d, d)),
                            ("duc_forward", (d, d)), ("duc_backward", (d, d)), ("dol", (I, d)),
                            ("do", (d, I))):
            t[p + name + ".weight"], t[p + name + ".bias"] = r(*shape), r(shape[0])
        for ssm in ("fs4", "bs4"):
            t[p + ssm + ".kernel.A_re"] = -0.5 + 0.1 * r(N)
            t[p + ssm + ".kernel.A_im"] = r(N)
            t[p + ssm + ".kernel.C"] = r(N, 2)
            t[p + ssm + ".kernel.log_step"] = np.log(np.array([0.1], np.float32))
            t[p + ssm + ".D"] = r(1)
    if head == "mlm":
        t.update({"cls.predictions.transform.dense.weight": r(d, d),
                  "cls.predictions.transform.dense.bias": r(d),
                  "cls.predictions.transform.LayerNorm.weight": 1 + r(d),
                  "cls.predictions.transform.LayerNorm.bias": r(d), "cls.predictions.bias": r(V)})
    else:
        t.update({"bigs.pooler.dense.weight": r(d, d), "bigs.pooler.dense.bias": r(d),
                  "classifier.weight": r(2, d), "classifier.bias": r(2)})
    return t


CODES = {np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("<f8"): "F64",
         np.dtype("<i8"): "I64", np.dtype("<i4"): "I32", np.dtype("<i2"): "I16",
         np.dtype("<u2"): "U16", np.dtype("<u4"): "U32", np.dtype("<u8"): "U64",
         np.dtype("u1"): "U8", np.dtype("bool"): "BOOL"}


def safetensors_bytes(tensors, edit=None, header_text=None, tail=b""):
    """The safetensors format by hand: 8-byte little-endian header length, the JSON header
    {name: {dtype, shape, data_offsets}} (offsets from the first data byte, contiguous in the
    order given), the data. edit(header) may change the header; header_text replaces it."""
    header, blobs, at = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": CODES[a.dtype.newbyteorder("<")], "shape": list(a.shape),
                        "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    if edit:
        edit(header)
    text = (header_text if header_text is not None else json.dumps(header)).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(blobs) + tail


class Fixtures:
    def __init__(self, work):
        self.work = work
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.n = 0

    def export(self, config, tensors=None, fmt="safetensors", weights=None, config_bytes=None):
        """A new export directory: config.json (a dict, or config_bytes as they are) and the
        weights (tensors written as model.safetensors or torch.save'd pytorch_model.bin, or the
        bytes `weights` as model.safetensors)."""
        self.n += 1
        d = os.path.join(self.work, f"case{self.n:03d}")
        os.makedirs(d)
        with open(os.path.join(d, "config.json"), "wb") as f:
            f.write(config_bytes if config_bytes is not None else json.dumps(config).encode())
        if weights is not None:
            with open(os.path.join(d, "model.safetensors"), "wb") as f:
                f.write(weights)
        elif fmt == "safetensors":
            with open(os.path.join(d, "model.safetensors"), "wb") as f:
                f.write(safetensors_bytes(tensors))
        elif fmt == "pytorch":
            torch.save({k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v)
                        for k, v in tensors.items()}, os.path.join(d, "pytorch_model.bin"))
        return d


def refused(what, path, needles, **kw):
    """routescope.load(path, **kw) must raise LoadError whose message has every needle; the
    message ("" where there was none)."""
    try:
        routescope.load(path, **kw)
    except routescope.LoadError as e:
        message = str(e)
        try:  # a message is printable: what it quotes from a file is escaped
            message.encode("utf-8")
            printable = True
        except UnicodeEncodeError:
            printable, message = False, ascii(message)
        ok = printable and all(n in message for n in needles)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {message[:160]}")
        check(printable, f"{what}: the LoadError cannot be printed as UTF-8: {message[:1000]}")
        check(ok or not printable, f"{what}: the LoadError lacks {needles}: {message[:1000]}")
        return message
    except BaseException as e:  # noqa: BLE001 (anything else is the defect under test)
        print(f"FAIL {what}: {type(e).__name__}: {ascii(str(e))[:160]}")
        check(False, f"{what}: {type(e).__name__} instead of LoadError: {ascii(str(e))[:300]}")
        return ""
    print(f"FAIL {what}: loaded")
    check(False, f"{what}: loaded, expected a LoadError with {needles}")
    return ""


def loads(what, path, **kw):
    try:
        model = routescope.load(path, **kw)
    except BaseException as e:  # noqa: BLE001
        check(False, f"{what}: not loaded: {type(e).__name__}: {e}")
        return None
    print(f"ok   {what}: loads")
    return model


IDS = torch.tensor([[2, 5, 7, 11, 3]])


def logits(model):
    with torch.no_grad():
        return model(IDS, torch.ones_like(IDS), torch.zeros_like(IDS))


# ---- the findings --------------------------------------------------------------------------

def tied_tensors(fx):
    """1: the decoder is the word embeddings (and its bias cls.predictions.bias): one parameter
    under two names, so a file whose two copies differ is refused, naming both."""
    c = bert_config()
    t = bert_tensors(c)
    W, B = "bert.embeddings.word_embeddings.weight", "cls.predictions.bias"
    equal = dict(t, **{"cls.predictions.decoder.weight": t[W].copy(),
                       "cls.predictions.decoder.bias": t[B].copy()})
    for fmt in ("pytorch", "safetensors"):
        model = loads(f"tied copies equal ({fmt})", fx.export(c, equal, fmt))
        if model is not None:
            check(torch.equal(model.bert.embeddings.word_embeddings.weight, torch.from_numpy(t[W])),
                  f"tied copies equal ({fmt}): word embeddings are not the file's")
        bad = dict(equal, **{"cls.predictions.decoder.weight": np.zeros_like(t[W])})
        refused(f"decoder.weight differs from the word embeddings ({fmt})", fx.export(c, bad, fmt),
                ["cls.predictions.decoder.weight", W, "tied"])
        bad = dict(equal, **{"cls.predictions.decoder.bias": t[B] + 1})
        refused(f"decoder.bias differs from cls.predictions.bias ({fmt})", fx.export(c, bad, fmt),
                ["cls.predictions.decoder.bias", B, "tied"])
    bad = dict(equal, **{"cls.predictions.decoder.weight": t[W][:-1].copy()})
    refused("decoder.weight of another shape", fx.export(c, bad, "pytorch"),
            ["cls.predictions.decoder.weight", W, "tied"])


def position_ids(fx):
    """2: bert.embeddings.position_ids, when the file has it, must be arange(max_position_
    embeddings) as [1, P] integers (the module's positions); anything else is refused."""
    c = bert_config()
    t = {k: torch.from_numpy(v) for k, v in bert_tensors(c).items()}
    P, name = c["max_position_embeddings"], "bert.embeddings.position_ids"
    base = loads("without position_ids", fx.export(c, t, "pytorch"))
    model = loads("position_ids = arange", fx.export(c, dict(t, **{name: torch.arange(P)[None]}),
                                                     "pytorch"))
    if base is not None and model is not None:
        check(torch.equal(logits(base), logits(model)), "position_ids = arange changes the logits")
    for what, value in (("permuted", torch.arange(P).flip(0)[None]),
                        ("out of range", torch.full((1, P), 10 ** 6)),
                        ("float", torch.arange(P, dtype=torch.float32)[None]),
                        ("shorter", torch.arange(P - 1)[None])):
        refused(f"position_ids {what}", fx.export(c, dict(t, **{name: value}), "pytorch"), [name])
    # 13 (docs/python.md, "Parameter names"): the file's own state_dict loads into the module with
    # load_state_dict (strict), as the engine writes it (the tied decoder repeated, no
    # position_ids) and as older transformers releases save it (with position_ids)
    W, B = "bert.embeddings.word_embeddings.weight", "cls.predictions.bias"
    full = dict(t, **{"cls.predictions.decoder.weight": t[W], "cls.predictions.decoder.bias": t[B]})
    for what, sd in (("without position_ids", full),
                     ("with position_ids", dict(full, **{name: torch.arange(P)[None]}))):
        d = fx.export(c, sd, "pytorch")
        model = loads(f"state_dict {what}", d)
        if model is None:
            continue
        try:
            model.load_state_dict(torch.load(os.path.join(d, "pytorch_model.bin"),
                                             weights_only=True))
        except RuntimeError as e:
            check(False, f"load_state_dict(torch.load(...)) {what}: {str(e)[:300]}")
            continue
        check(torch.equal(model.bert.embeddings.position_ids, torch.arange(P)[None]) and
              all(torch.equal(model.state_dict()[k], v) for k, v in sd.items()),
              f"load_state_dict(torch.load(...)) {what}: the module's tensors are not the file's")


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def config_bombs(fx):
    """3: config.json is compared with the file's shapes before anything is built: a 20 kB
    export claiming 3e7 words or 10^12 layers is refused at once, without the memory."""
    cases = [("bert", "vocab_size", 3 * 10 ** 7), ("bert", "num_hidden_layers", 20000),
             ("bert", "num_hidden_layers", 10 ** 12), ("bert", "hidden_size", 10 ** 9),
             ("bert", "intermediate_size", 10 ** 9), ("bert", "max_position_embeddings", 10 ** 9),
             ("bert", "type_vocab_size", 10 ** 9), ("bigs", "num_ssm", 10 ** 9),
             ("bigs", "num_hidden_layers", 10 ** 6), ("bigs", "intermediate_size", 10 ** 9)]
    for arch, key, value in cases:
        c = bert_config() if arch == "bert" else bigs_config()
        t = bert_tensors(c) if arch == "bert" else bigs_tensors(c)
        d = fx.export(dict(c, **{key: value}), t)
        before, start = _peak_mb(), time.monotonic()
        named = "num_hidden_layers" if key == "num_hidden_layers" else "model.safetensors"
        refused(f"{arch} config.json {key} = {value}", d, [named])
        seconds, grown = time.monotonic() - start, _peak_mb() - before
        check(seconds < 5 and grown < 200, f"{arch} {key} = {value}: {seconds:.1f} s, peak "
                                           f"memory +{grown:.0f} MB before the refusal")
    # pytorch_model.bin: tensors that are views of one storage stand for more than the file holds
    c = bert_config(hidden_size=64, intermediate_size=256, num_hidden_layers=300)
    r = _random(1)
    shared = {(64, 64): torch.from_numpy(r(64, 64)), (64,): torch.from_numpy(r(64)),
              (256, 64): torch.from_numpy(r(256, 64)), (256,): torch.from_numpy(r(256)),
              (64, 256): torch.from_numpy(r(64, 256))}
    small = bert_tensors(bert_config(hidden_size=64, intermediate_size=256, num_hidden_layers=1))
    t = {k: torch.from_numpy(v) for k, v in small.items() if ".layer." not in k}
    for i in range(c["num_hidden_layers"]):
        for k, v in small.items():
            if ".layer.0." in k:
                t[k.replace(".layer.0.", f".layer.{i}.")] = shared[v.shape]
    refused("pytorch_model.bin of 300 layers sharing one layer's storage",
            fx.export(c, t, "pytorch"), ["pytorch_model.bin", "sharing storage"])
    c = bert_config()
    t = {k: torch.from_numpy(v) for k, v in bert_tensors(c).items()}
    t["bert.embeddings.word_embeddings.weight"] = torch.ones(1, 8).expand(30, 8)
    refused("pytorch_model.bin with an expanded view", fx.export(c, t, "pytorch"),
            ["pytorch_model.bin", "bert.embeddings.word_embeddings.weight", "overlap"])
    # a layer index of 5000 digits (Python refuses to convert it to an int) and a name of 10^5
    # characters: refused, the message cut to a readable length
    t = bert_tensors(c)
    t["bert.encoder.layer." + "9" * 5000 + ".output.dense.bias"] = t["cls.predictions.bias"]
    t["x" * 100000] = t["cls.predictions.bias"]
    message = refused("a 5000-digit layer index and a 100000-character name",
                      fx.export(dict(c, num_hidden_layers=3), t),
                      ["model.safetensors", "bert.encoder.layer.2.", "unexpected"])
    check(len(message) < 5000, f"the message of a 100000-character name has {len(message)}")


def deep_json(fx):
    """4: JSON nested 100000 deep (Python's parser recurses) is 'not valid JSON', named."""
    c = bert_config()
    bomb = b'{"__metadata__": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    refused("safetensors header nested 100000 deep",
            fx.export(c, weights=struct.pack("<Q", len(bomb)) + bomb),
            ["model.safetensors", "header", "not valid JSON"])
    refused("config.json nested 100000 deep",
            fx.export(None, bert_tensors(c), config_bytes=b"[" * 100000 + b"]" * 100000),
            ["config.json", "not valid JSON"])


def shapes(fx):
    """5: a shape is a list of non-negative integers (JSON true is not one) whose product, in
    exact arithmetic, times the dtype's width is the data_offsets span."""
    c = bert_config()
    t = bert_tensors(c)
    W = "bert.embeddings.word_embeddings.weight"  # 30 x 8 float32: 960 bytes
    for what, shape in (("whose count wraps int64 to 240", [2 ** 62 + 60, 4]),
                        ("with a dimension above int64", [2 ** 70, 0]),
                        ("with a boolean dimension", [True, 240]),
                        ("with a float dimension", [30.0, 8])):
        def edit(h, shape=shape):
            h[W]["shape"] = shape
        refused(f"shape {what}", fx.export(c, weights=safetensors_bytes(t, edit)),
                ["model.safetensors", W])


def configs(fx):
    """6: every key the architecture reads is checked: sizes positive ints, heads dividing the
    hidden size, layer_norm_eps a positive finite number, hidden_act one the module has,
    architectures a list of names; config.json UTF-8 JSON in a regular file."""
    c = bert_config()
    t = bert_tensors(c)
    cases = [(f"no {k}", {x: v for x, v in c.items() if x != k}, k)
             for k in ("model_type", "vocab_size", "hidden_size", "num_hidden_layers",
                       "num_attention_heads", "intermediate_size", "max_position_embeddings",
                       "type_vocab_size", "layer_norm_eps", "hidden_act")]
    cases += [("hidden_size '8'", dict(c, hidden_size="8"), "hidden_size"),
              ("hidden_size 8.0", dict(c, hidden_size=8.0), "hidden_size"),
              ("hidden_size true", dict(c, hidden_size=True), "hidden_size"),
              ("hidden_size -8", dict(c, hidden_size=-8), "hidden_size"),
              ("vocab_size 0", dict(c, vocab_size=0), "vocab_size"),
              ("num_hidden_layers null", dict(c, num_hidden_layers=None), "num_hidden_layers"),
              ("num_attention_heads 0", dict(c, num_attention_heads=0), "num_attention_heads"),
              ("num_attention_heads 3 (8 % 3)", dict(c, num_attention_heads=3),
               "num_attention_heads"),
              ("layer_norm_eps '1e-12'", dict(c, layer_norm_eps="1e-12"), "layer_norm_eps"),
              ("layer_norm_eps 0", dict(c, layer_norm_eps=0), "layer_norm_eps"),
              ("layer_norm_eps -1e-5", dict(c, layer_norm_eps=-1e-5), "layer_norm_eps"),
              ("layer_norm_eps true", dict(c, layer_norm_eps=True), "layer_norm_eps"),
              # A valid JSON integer too large for a float: OverflowError, not a LoadError,
              # until session 38 (probe X3).
              ("layer_norm_eps 10**400", dict(c, layer_norm_eps=10 ** 400), "layer_norm_eps"),
              ("hidden_act 'swish'", dict(c, hidden_act="swish"), "hidden_act"),
              ("hidden_act ['gelu']", dict(c, hidden_act=["gelu"]), "hidden_act"),
              ("model_type 'gpt2'", dict(c, model_type="gpt2"), "model_type"),
              ("model_type 5", dict(c, model_type=5), "model_type"),
              ("architectures [5]", dict(c, architectures=[5]), "architectures"),
              ("architectures a string", dict(c, architectures="BertForMaskedLM"),
               "architectures"),
              ("position_embedding_type relative_key",
               dict(c, position_embedding_type="relative_key"), "position_embedding_type"),
              ("type_vocab_size 2.0", dict(c, type_vocab_size=2.0), "type_vocab_size"),
              ("type_vocab_size '2'", dict(c, type_vocab_size="2"), "type_vocab_size"),
              ("type_vocab_size true", dict(c, type_vocab_size=True), "type_vocab_size"),
              ("type_vocab_size null", dict(c, type_vocab_size=None), "type_vocab_size"),
              ("a list, not an object", [c], "not a JSON object")]
    for what, config, key in cases:
        refused(f"bert config.json {what}", fx.export(config, t), ["config.json", key])
    text = json.dumps(c).replace("1e-12", "Infinity").encode()
    refused("bert config.json layer_norm_eps Infinity", fx.export(None, t, config_bytes=text),
            ["config.json", "layer_norm_eps"])
    refused("config.json not UTF-8", fx.export(None, t, config_bytes=b'{"model_type": "\xff"}'),
            ["config.json", "UTF-8"])
    refused("config.json with a 5000-digit integer",
            fx.export(None, t, config_bytes=b'{"vocab_size": ' + b"9" * 5000 + b"}"),
            ["config.json", "not valid JSON"])
    d = fx.export(c, t)
    os.remove(os.path.join(d, "config.json"))
    os.mkdir(os.path.join(d, "config.json"))
    refused("config.json a directory", d, ["config.json", "not a regular file"])
    d = fx.export(c, t)
    os.remove(os.path.join(d, "config.json"))
    refused("config.json missing", d, ["config.json", "missing"])

    b = bigs_config()
    bt = bigs_tensors(b)
    for what, config, key in [("num_ssm '4'", dict(b, num_ssm="4"), "num_ssm"),
                              ("num_ssm 0", dict(b, num_ssm=0), "num_ssm"),
                              ("type_vocab_size 2.0", dict(b, type_vocab_size=2.0),
                               "type_vocab_size"),
                              ("hidden_act 'relu' (not a gelu)", dict(b, hidden_act="relu"),
                               "hidden_act"),
                              ("layer_norm_eps NaN-like string", dict(b, layer_norm_eps="nan"),
                               "layer_norm_eps"),
                              ("pooler_type 'max'", dict(b, pooler_type="max"), "pooler_type"),
                              ("pre_norm false", dict(b, pre_norm=False), "pre_norm"),
                              # the official port adds position embeddings only for "absolute"
                              ("position_embedding_type relative_key",
                               dict(b, position_embedding_type="relative_key"),
                               "position_embedding_type"),
                              ("position_embedding_type null",
                               dict(b, position_embedding_type=None), "position_embedding_type"),
                              # the port's MLM transform applies hidden_act (tanh here), the
                              # module's is the erf gelu: routescope-cli import refuses it too
                              ("hidden_act 'gelu_new' with an MLM head",
                               dict(b, hidden_act="gelu_new"), "hidden_act"),
                              ("hidden_act 'gelu_fast' with an MLM head",
                               dict(b, hidden_act="gelu_fast"), "hidden_act")]:
        refused(f"BiGS config.json {what}", fx.export(config, bt), ["config.json", key])
    loads("BiGS config.json position_embedding_type 'absolute'",
          fx.export(dict(b, position_embedding_type="absolute"), bt))
    for act in ("gelu", "gelu_exact", "gelu_erf"):  # the MLM head's erf gelu, as the engine's
        loads(f"BiGS MLM hidden_act {act!r}", fx.export(dict(b, hidden_act=act), bt))
    bc = dict(b, architectures=["BiGSForSequenceClassification"], hidden_act="gelu_new")
    loads("BiGS classifier hidden_act 'gelu_new' (no MLM head)",
          fx.export(bc, bigs_tensors(bc, "classify")))
    # BiGS's optional keys take the official port's defaults (docs/python.md)
    bare = {k: v for k, v in b.items() if k not in ("type_vocab_size", "layer_norm_eps",
                                                   "hidden_act", "pooler_type", "pre_norm")}
    loads("BiGS config.json with only the required keys and num_ssm", fx.export(bare, bt))
    # the shapes load() compares the file with are the modules' own
    for config, heads in ((dict(c, num_labels=3), ("mlm", "classify")),
                          (dict(b, num_labels=2), ("mlm", "classify")),
                          (dict(b, num_labels=2, type_embeddings=False), ("mlm", "classify"))):
        arch = routescope.bigs if config["model_type"] == "BiGS" else routescope.bert
        for head in heads:
            cls = routescope.model_class(config, head)
            built = {k: tuple(v.shape) for k, v in cls(config).state_dict().items()}
            check(built == arch.state_dict_shapes(config, head),
                  f"state_dict_shapes({config['model_type']}, {head}) is not {cls.__name__}'s")


def state_dicts(fx):
    """7: a pytorch_model.bin maps str names to tensors; a classifier's bias is [n_labels >= 1]."""
    c = bert_config()
    t = {k: torch.from_numpy(v) for k, v in bert_tensors(c).items()}
    refused("a key that is not a string", fx.export(c, {**t, 7: torch.zeros(1)}, "pytorch"),
            ["pytorch_model.bin", "7"])
    refused("an int under a parameter name",
            fx.export(c, dict(t, **{"bert.embeddings.LayerNorm.weight": 5}), "pytorch"),
            ["pytorch_model.bin", "bert.embeddings.LayerNorm.weight", "not a tensor"])
    refused("a dict under a parameter name",
            fx.export(c, dict(t, **{"bert.embeddings.LayerNorm.weight": {"a": 1}}), "pytorch"),
            ["pytorch_model.bin", "bert.embeddings.LayerNorm.weight", "not a tensor"])
    refused("a nested state_dict", fx.export(c, {"state_dict": t}, "pytorch"),
            ["pytorch_model.bin", "state_dict"])
    d = fx.export(c, t, "pytorch")
    path = os.path.join(d, "pytorch_model.bin")
    os.truncate(path, os.path.getsize(path) // 2)
    refused("a truncated pytorch_model.bin", d, ["pytorch_model.bin", "not a readable"])
    cc = bert_config(architectures=["BertForSequenceClassification"])
    tc = {k: torch.from_numpy(v) for k, v in bert_tensors(cc, "classify").items()}
    loads("a 3-label classifier", fx.export(cc, tc, "pytorch"))
    for what, bias in (("0-d", torch.tensor(0.5)), ("[0]", torch.zeros(0)),
                       ("[3, 1]", torch.zeros(3, 1))):
        refused(f"classifier.bias {what}", fx.export(cc, dict(tc, **{"classifier.bias": bias}),
                                                     "pytorch"),
                ["pytorch_model.bin", "classifier.bias"])


def dtypes(fx):
    """8: parameters are floating point in the file (F16/BF16/F32/F64); integers, booleans and
    complex numbers are refused, not cast."""
    c = bert_config()
    t = bert_tensors(c)
    W = "bert.embeddings.word_embeddings.weight"
    for what, value in (("I64", np.full((30, 8), 7, np.int64)), ("I32", np.ones((30, 8), np.int32)),
                        ("BOOL", np.ones((30, 8), bool))):
        refused(f"safetensors {what} parameter", fx.export(c, dict(t, **{W: value})),
                ["model.safetensors", W, "floating"])
    tt = {k: torch.from_numpy(v) for k, v in t.items()}
    for what, value in (("complex64", torch.complex(torch.ones(30, 8), torch.ones(30, 8))),
                        ("int64", torch.ones(30, 8, dtype=torch.int64))):
        refused(f"pytorch {what} parameter", fx.export(c, dict(tt, **{W: value}), "pytorch"),
                ["pytorch_model.bin", W, "floating"])
    model = loads("F64 and F16 parameters", fx.export(c, dict(t, **{
        W: t[W].astype(np.float64), "cls.predictions.bias": t["cls.predictions.bias"].astype(
            np.float16)})))
    if model is not None:
        check(all(p.dtype == torch.float32 for p in model.parameters()),
              "F64/F16 parameters: the model is not float32")


def _child_load(path):
    """routescope.load(path) in a child process with a timeout: (output, timed out)."""
    code = ("import sys; sys.path.insert(0, %r); import routescope\n"
            "try:\n    routescope.load(%r)\nexcept routescope.LoadError as e:\n"
            "    print('LoadError:', e)\n" % (PYTHON_DIR, path))
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        return p.stdout + p.stderr, False
    except subprocess.TimeoutExpired:
        return "", True


def not_files(fx):
    """9: only regular files are opened: a FIFO would block open() forever."""
    c = bert_config()
    t = bert_tensors(c)
    for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
        d = fx.export(c, t, fmt="safetensors" if name == "config.json" else None)
        if name == "config.json":
            os.remove(os.path.join(d, name))
        os.mkfifo(os.path.join(d, name))
        out, hung = _child_load(d)
        os.remove(os.path.join(d, name))  # no FIFO left behind for whatever copies test data
        print(f"{'FAIL' if hung else 'ok  '} FIFO {name}: {out.strip()[:160]}")
        check(not hung and "LoadError" in out and name in out and "not a regular file" in out,
              f"FIFO {name}: {'still blocked after 120 s' if hung else out.strip()[-300:]}")
    d = fx.export(c, fmt=None)
    os.mkdir(os.path.join(d, "model.safetensors"))
    refused("a directory named model.safetensors", d, ["model.safetensors", "not a regular file"])
    if os.path.exists("/dev/null"):
        d = fx.export(c, fmt=None)
        os.symlink("/dev/null", os.path.join(d, "model.safetensors"))
        refused("model.safetensors a link to /dev/null", d,
                ["model.safetensors", "not a regular file"])
    d = fx.export(c, fmt=None)
    os.symlink("model.safetensors", os.path.join(d, "model.safetensors"))
    refused("model.safetensors a link to itself", d, ["model.safetensors"])


def safetensors_spec(fx):
    """10: what the safetensors format (and its reference reader) refuses."""
    c = bert_config()
    t = bert_tensors(c)
    W = "bert.embeddings.word_embeddings.weight"
    good = safetensors_bytes(t)
    (n,) = struct.unpack("<Q", good[:8])
    header, data = json.loads(good[8:8 + n]), good[8 + n:]
    end = len(data)
    twice = (json.dumps(header)[:-1] + f', "{W}": {{"dtype": "F32", "shape": [30, 8], '
             f'"data_offsets": [{end}, {end + 960}]}}}}')
    refused("a tensor name given twice", fx.export(c, weights=safetensors_bytes(
        t, header_text=twice, tail=bytes(960))), ["model.safetensors", W, "twice"])
    entry_twice = json.dumps(header).replace('"dtype": "F32"', '"dtype": "F32", "dtype": "F32"', 1)
    refused("a key given twice inside an entry", fx.export(c, weights=safetensors_bytes(
        t, header_text=entry_twice)), ["model.safetensors", "twice"])
    refused("100 trailing bytes", fx.export(c, weights=good + bytes(100)),
            ["model.safetensors", "belong to no tensor"])

    def gap(h):  # every tensor after the first moved 4 bytes on: a 4-byte hole
        first = min(h, key=lambda k: h[k]["data_offsets"][0])
        for k in h:
            if k != first:
                h[k]["data_offsets"] = [o + 4 for o in h[k]["data_offsets"]]
    with_gap = safetensors_bytes(t, gap)
    (m,) = struct.unpack("<Q", with_gap[:8])
    first_size = 960  # the first tensor written is the word embeddings, 30 x 8 float32
    data_gap = with_gap[8 + m:8 + m + first_size] + bytes(4) + with_gap[8 + m + first_size:]
    refused("a 4-byte gap between tensors", fx.export(c, weights=with_gap[:8 + m] + data_gap),
            ["model.safetensors", "belong to no tensor"])
    for what, meta in (("a list", [1, 2]), ("a map to numbers", {"format": 1}),
                       ("a string", "pt")):
        refused(f"__metadata__ {what}", fx.export(c, weights=safetensors_bytes(
            t, lambda h, meta=meta: h.update(__metadata__=meta))),
            ["model.safetensors", "__metadata__"])
    loads("__metadata__ {'format': 'pt'}", fx.export(c, weights=safetensors_bytes(
        t, lambda h: h.update(__metadata__={"format": "pt"}))))
    loads("header in another order than the data", fx.export(c, weights=safetensors_bytes(
        t, header_text=json.dumps(dict(reversed(list(header.items())))))))
    loads("header padded with spaces", fx.export(c, weights=safetensors_bytes(
        t, header_text=json.dumps(header) + "       ")))
    refused("header not UTF-8", fx.export(c, weights=struct.pack("<Q", 4) + b'{"\xff"' + data),
            ["model.safetensors", "header"])
    # 14: what serde_json (the reference reader's parser) rejects and Python's json accepts: the
    # constants NaN / Infinity, a \u escape of a lone UTF-16 surrogate. In a key of an entry the
    # reader ignores, they would otherwise load; in a name, the message must stay printable.
    text = json.dumps(header)
    for what, entry_text in (("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                             ("a lone surrogate", '"\\ud800"'),
                             ("a lone low surrogate", '"x\\udc00y"')):
        bad = text.replace('"dtype": "F32"', f'"note": {entry_text}, "dtype": "F32"', 1)
        refused(f"header with {what} in an entry", fx.export(c, weights=safetensors_bytes(
            t, header_text=bad)), ["model.safetensors", "header", "not valid JSON"])
    named = (text[:-1] + ', "\\ud800x": {"dtype": "F32", "shape": [0], '
             f'"data_offsets": [{end}, {end}]}}}}')
    refused("a tensor named by a lone surrogate", fx.export(c, weights=safetensors_bytes(
        t, header_text=named)), ["model.safetensors", "header", "not valid JSON"])
    loads("__metadata__ with a surrogate pair (one character, valid JSON)", fx.export(
        c, weights=safetensors_bytes(t, header_text=text[:-1] +
                                     ', "__metadata__": {"emoji": "\\ud83d\\ude00"}}')))
    tt = {k: torch.from_numpy(v) for k, v in t.items()}
    refused("pytorch_model.bin key with a lone surrogate (pickle keeps it)",
            fx.export(c, dict(tt, **{"bad\ud800name": torch.zeros(1)}), "pytorch"),
            ["pytorch_model.bin", "bad", "unexpected"])
    refused("dtype a list", fx.export(c, weights=safetensors_bytes(
        t, lambda h: h[W].update(dtype=["F32"]))), ["model.safetensors", W, "dtype"])
    # A header length above the format's 100,000,000 bytes, in a (sparse) file long enough
    d = fx.export(c, fmt=None)
    path = os.path.join(d, "model.safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 100_000_001) + b"{")
    os.truncate(path, 100_000_200)
    refused("a 100,000,001-byte header", d, ["model.safetensors", "header", "100000000"])
    os.remove(path)


def _rezip(raw, method):
    """The zip `raw` (a torch.save file) rewritten with every record compressed by `method`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as zin, zipfile.ZipFile(out, "w") as z:
        for info in zin.infolist():
            z.writestr(info.filename, zin.read(info.filename), compress_type=method)
    return out.getvalue()


def _child_growth(path):
    """routescope.load(path) in a child process: (its output, its peak RSS growth in MB during
    the load)."""
    code = ("import sys; sys.path.insert(0, %r); import routescope\n"
            "def hwm():\n"
            "    return int([l for l in open('/proc/self/status')\n"
            "                if l.startswith('VmHWM')][0].split()[1])\n"
            "base = hwm()\n"
            "try:\n    routescope.load(%r); print('loaded')\n"
            "except routescope.LoadError as e:\n    print('LoadError:', e)\n"
            "print('GROWTH_KB', hwm() - base)\n" % (PYTHON_DIR, path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    grown = out.split("GROWTH_KB")[-1].split()
    return out, (int(grown[0]) / 1024 if "GROWTH_KB" in out and grown else float("inf"))


def pytorch_zip(fx):
    """11: a pytorch_model.bin (a zip) is checked before torch.load inflates its records: their
    sizes may total at most a small multiple (8) of the file's (docs/python.md)."""
    c = bert_config()
    t = {k: torch.from_numpy(v) for k, v in bert_tensors(c).items()}
    W = "bert.embeddings.word_embeddings.weight"
    d = fx.export(c, t, "pytorch")
    path = os.path.join(d, "pytorch_model.bin")
    with open(path, "rb") as f:
        stored = f.read()
    with open(path, "wb") as f:
        f.write(_rezip(stored, zipfile.ZIP_DEFLATED))
    model = loads("a deflated copy of a valid pytorch_model.bin", d)
    if model is not None:
        check(torch.equal(model.bert.embeddings.word_embeddings.weight, t[W]),
              "deflated pytorch_model.bin: word embeddings are not the file's")
    # The word embeddings a view of 32 MiB of zeros: deflated, the file is some 100 kB
    big = torch.zeros(2 ** 23)
    big[:t[W].numel()] = t[W].flatten()
    buffer = io.BytesIO()
    torch.save(dict(t, **{W: big[:t[W].numel()].view_as(t[W])}), buffer)
    del big
    bomb = _rezip(buffer.getvalue(), zipfile.ZIP_DEFLATED)
    del buffer
    d = fx.export(c, fmt=None)
    with open(os.path.join(d, "pytorch_model.bin"), "wb") as f:
        f.write(bomb)
    refused(f"deflated records inflating to {2 ** 25 / len(bomb):.0f} x the file", d,
            ["pytorch_model.bin", "inflate", str(len(bomb))])
    out, grown = _child_growth(d)
    print(f"{'ok  ' if grown < 16 else 'FAIL'} deflate bomb in a child: peak +{grown:.1f} MB")
    check("LoadError" in out and grown < 16,
          f"deflate bomb: peak memory +{grown:.1f} MB (32 MiB inflated?): {out.strip()[-300:]}")
    d = fx.export(c, fmt=None)
    with open(os.path.join(d, "pytorch_model.bin"), "wb") as f:
        f.write(_rezip(stored, zipfile.ZIP_BZIP2))
    refused("records compressed with bzip2", d, ["pytorch_model.bin", "compression method"])
    # Probe Q7: a storage's record cut to 8 bytes while the pickle still declares the whole
    # storage (an unread record of padding keeps the file large enough): torch 1.13's torch.load
    # built the storage over the short record, and the model held memory past it (or segfaulted).
    # The record's size comes from the zip directory; the declared size from the tensor's shape.
    with zipfile.ZipFile(io.BytesIO(stored)) as z:
        records = {i.filename: z.read(i.filename) for i in z.infolist()}
    victim = max((n for n in records if "/data/" in n), key=lambda n: len(records[n]))
    cut = io.BytesIO()
    with zipfile.ZipFile(cut, "w", zipfile.ZIP_STORED) as z:
        for name, data in records.items():
            z.writestr(name, data[:8] if name == victim else data)
        z.writestr(victim.rsplit("/", 2)[0] + "/padding", bytes(len(records[victim])))
    d = fx.export(c, fmt=None)
    with open(os.path.join(d, "pytorch_model.bin"), "wb") as f:
        f.write(cut.getvalue())
    refused("a storage record shorter than its storage", d,
            ["pytorch_model.bin", victim, "holds 8 bytes", f"({len(records[victim])} bytes)"])
    # Probe Q7: dtype=float64 of a float64 file gives the file's values, not their float32
    # rounding (the module was built in float32 and converted after the weights went in).
    t64 = {k: v.double() if v.is_floating_point() else v for k, v in t.items()}
    t64[W] = t64[W] + 1e-12 * torch.arange(t64[W].numel(), dtype=torch.float64).view_as(t64[W])
    d = fx.export(c, t64, "pytorch")
    model = loads("a float64 pytorch_model.bin as dtype=float64", d, dtype=torch.float64)
    if model is not None:
        check(torch.equal(model.bert.embeddings.word_embeddings.weight.detach(), t64[W]),
              "float64 load: the word embeddings are not the file's float64 values")


def safetensors_dtypes(fx):
    """15: the format's integer dtypes read with their values (numpy has them all); a torch
    without the type gives a LoadError, F8 is refused as unsupported."""
    from routescope import safetensors as st
    for code, a in (("I16", np.array([-2, 3], "<i2")), ("U16", np.array([1, 65535], "<u2")),
                    ("U32", np.array([7, 2 ** 32 - 1], "<u4")),
                    ("U64", np.array([9, 2 ** 64 - 1], "<u8"))):
        d = fx.export(bert_config(), weights=safetensors_bytes({"x": a}))
        path = os.path.join(d, "model.safetensors")
        try:
            got = st.read(path)["x"]
            check(got.dtype == a.dtype and np.array_equal(got, a),
                  f"safetensors {code}: read {got!r}, expected {a!r}")
        except st.SafetensorsError as e:
            check(False, f"safetensors {code}: refused: {e}")
        try:
            want = torch.from_numpy(a)  # torch's own verdict on the type
        except TypeError:
            want = None
        try:
            sd = routescope.load_state_dict(path)
            check(want is not None and torch.equal(sd["x"], want),
                  f"load_state_dict {code}: {sd['x']!r}, expected {want!r}")
            print(f"ok   load_state_dict {code}: {sd['x'].dtype}")
        except routescope.LoadError as e:
            check(want is None and all(n in str(e) for n in (path, "x", code)),
                  f"load_state_dict {code}: LoadError {e}")
            print(f"ok   load_state_dict {code}: {e}")
        except BaseException as e:  # noqa: BLE001
            check(False, f"load_state_dict {code}: {type(e).__name__} instead of LoadError: {e}")
    for code in ("F8_E5M2", "F8_E4M3"):
        d = fx.export(bert_config(), weights=safetensors_bytes(
            {"x": np.array([1, 2], "u1")}, lambda h, code=code: h["x"].update(dtype=code)))
        message = refused(f"safetensors {code}", d, ["model.safetensors", code, "not supported"])
        check("unknown" not in message, f"safetensors {code}: called unknown: {message}")


def _parse(path):
    """(header, data) of a safetensors file, by the format (not by routescope's reader)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def safetensors_writer(fx):
    """16: safetensors.write keeps what the format can hold: 0-d arrays (shape []), any byte order
    (the format is little-endian); a name is a string other than __metadata__."""
    from routescope import safetensors as st
    path = os.path.join(fx.work, "written.safetensors")
    big_endian = np.array([1.5, -2.25, 3.0], ">f4")
    try:
        st.write(path, {"scalar": np.array(3.0, np.float32), "be": big_endian,
                        "be64": np.array([[7, -8]], ">i8")})
    except st.SafetensorsError as e:
        check(False, f"safetensors.write of a 0-d and big-endian arrays: {e}")
        return
    header, data = _parse(path)
    for name, dtype, shape, value in (("scalar", "F32", [], struct.pack("<f", 3.0)),
                                      ("be", "F32", [3], struct.pack("<3f", 1.5, -2.25, 3.0)),
                                      ("be64", "I64", [1, 2], struct.pack("<2q", 7, -8))):
        e = header.get(name, {})
        begin, end = e.get("data_offsets", [0, 0])
        check(e.get("dtype") == dtype and e.get("shape") == shape and data[begin:end] == value,
              f"safetensors.write {name}: {e}, bytes {data[begin:end]!r}, expected {dtype} "
              f"{shape} {value!r}")
    back = st.read(path)
    check(back["scalar"].shape == () and back["scalar"] == 3.0 and
          np.array_equal(back["be"], big_endian), f"safetensors round trip: {back}")
    for what, tensors in (("a tensor named __metadata__", {"__metadata__": np.zeros(1)}),
                          ("an int key", {7: np.zeros(1)}),
                          ("a name with a lone surrogate", {"x\ud800": np.zeros(1)})):
        try:
            st.write(path + ".bad", tensors)
            check(False, f"safetensors.write {what}: written")
        except st.SafetensorsError as e:
            print(f"ok   safetensors.write {what}: {e}")
            check("name" in str(e) or "__metadata__" in str(e), f"write {what}: {e}")
        check(not os.path.exists(path + ".bad"), f"safetensors.write {what}: a file was left")


def run(work):
    """Every case above, fixtures under `work`; the failures (also in `failures`)."""
    fx = Fixtures(work)
    for group in (tied_tensors, position_ids, config_bombs, deep_json, shapes, configs,
                  state_dicts, dtypes, not_files, safetensors_spec, pytorch_zip,
                  safetensors_dtypes, safetensors_writer):
        print(f"-- {group.__name__}: {group.__doc__.splitlines()[0]}")
        group(fx)
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    run(sys.argv[1])
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    sys.exit(1 if failures else 0)
