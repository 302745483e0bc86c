#!/usr/bin/python3
"""Reads what `routescope-cli export` wrote, in Python (tests/io/test_importers.cpp):

- model.safetensors through a few lines of numpy (the safetensors package is not installed);
- pytorch_model.bin through torch.load(weights_only=True);
- the BERT exports loaded into tests/reference/hf_bert.py's transformers modules give the logits
  the fixture computed (bert_expected.h5) on its padded batch;
- the BiGS exports hold exactly the tensors (names, shapes, values, dtypes) of the official
  PyTorch port's BiGSForMaskedLM state_dict the fixture wrote from official_keys.py
  (bigs_official_pytorch/pytorch_model.bin: the int64 bigs.embeddings.position_ids buffer
  0..Lmax-1 included), the tied decoder included in pytorch_model.bin and left out of
  safetensors, except the pooler BiGSModel always creates (bigs.pooler.dense.*): Routescope's
  BiGS MLM model has none, and the export invents no weights (docs/cli.md, export).

Usage: check_export.py FIXTURES EXPORTS   (EXPORTS holds bert_{mlm,cls}_{safetensors,pytorch} and
bigs_{safetensors,pytorch}). Exit 0, or 1 with the failures on stderr.
"""
import json
import os
import struct
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import hf_bert  # noqa: E402

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
    return out


def load_weights(d):
    st = os.path.join(d, "model.safetensors")
    if os.path.exists(st):
        return {k: torch.from_numpy(v.copy()) for k, v in read_safetensors(st).items()}
    return torch.load(os.path.join(d, "pytorch_model.bin"), weights_only=True)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# The one name of the official BiGSForMaskedLM state_dict an export does not write: the pooler
# BiGSModel creates whatever add_pooling_layer says, which an MLM model never calls.
NOT_EXPORTED = ("bigs.pooler.dense.weight", "bigs.pooler.dense.bias")


def official_bigs(fixtures, fmt):
    """name -> tensor an export of the fixture's BiGS must hold in `fmt`: the official port's
    state_dict (bigs_official_pytorch, written from official_keys.py) less the pooler, and less the
    tied decoder in safetensors."""
    official = torch.load(os.path.join(fixtures, "bigs_official_pytorch", "pytorch_model.bin"),
                          weights_only=True)
    return {k: v for k, v in official.items() if k not in NOT_EXPORTED and
            (fmt == "pytorch" or not k.startswith("cls.predictions.decoder"))}


def check_position_ids(d, sd):
    ids = sd.get("bigs.embeddings.position_ids")
    check(ids is not None, f"{d}: no bigs.embeddings.position_ids")
    if ids is not None:
        with open(os.path.join(d, "config.json")) as f:
            lmax = json.load(f)["max_position_embeddings"]
        check(ids.dtype == torch.int64 and torch.equal(ids, torch.arange(lmax)[None, :]),
              f"{d}: position_ids {ids.dtype} {tuple(ids.shape)} is not arange({lmax})[None] int64")


def bigs_without_types(fixtures, exports):
    """A BiGS exported from a model without type embeddings: the official port's names, shapes and
    values, except the token type table, which is zeros."""
    types = "bigs.embeddings.token_type_embeddings.weight"
    for fmt in ("safetensors", "pytorch"):
        d = os.path.join(exports, f"bigs_{fmt}")
        sd = load_weights(d)
        want = official_bigs(fixtures, fmt)
        check_position_ids(d, sd)
        check(set(sd) == set(want), f"{d}: names {sorted(set(sd) ^ set(want))} differ")
        for k, v in want.items():
            if k not in sd:
                continue
            check(tuple(sd[k].shape) == tuple(v.shape), f"{d}: {k} shape {tuple(sd[k].shape)}")
            if k == types:
                check(not torch.any(sd[k] != 0), f"{d}: {k} is not zeros")
            else:
                check(torch.equal(sd[k].float(), v.float()), f"{d}: {k} values differ")
        with open(os.path.join(d, "config.json")) as f:
            check(json.load(f).get("type_vocab_size") == 2, f"{d}: type_vocab_size is not 2")
        print(f"{d}: {len(sd)} tensors, the official port's names; token type table zeros")


def main():
    if sys.argv[1] == "--bigs-without-types":
        bigs_without_types(sys.argv[2], sys.argv[3])
        for f in failures:
            print("FAIL:", f, file=sys.stderr)
        return 1 if failures else 0
    fixtures, exports = sys.argv[1], sys.argv[2]
    with h5py.File(os.path.join(fixtures, "bert_expected.h5"), "r") as h:
        ids = torch.from_numpy(h["input_ids"][()].astype(np.int64))
        types = torch.from_numpy(h["token_type_ids"][()].astype(np.int64))
        lengths = h["lengths"][()]
        expected = {"mlm": h["mlm_logits"][()], "cls": h["cls_logits"][()]}
    mask = torch.from_numpy((np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64))
    for kind in ("mlm", "cls"):
        for fmt in ("safetensors", "pytorch"):
            d = os.path.join(exports, f"bert_{kind}_{fmt}")
            with open(os.path.join(d, "config.json")) as f:
                cfg = json.load(f)
            model = (hf_bert.BertForMaskedLM(cfg) if kind == "mlm"
                     else hf_bert.BertForSequenceClassification(cfg))
            sd = load_weights(d)
            missing, unexpected = model.load_state_dict(sd, strict=False)
            check(set(missing) <= {"bert.embeddings.position_ids", "cls.predictions.decoder.weight",
                                   "cls.predictions.decoder.bias"}, f"{d}: missing {missing}")
            check(not unexpected, f"{d}: unexpected {unexpected}")
            with torch.no_grad():
                got = model.double().eval()(ids, mask, types).numpy()
            err = np.abs(got - expected[kind]).max() / np.abs(expected[kind]).max()
            print(f"{d}: logits max|export - fixture| / max|fixture| = {err:.3g}")
            check(err < 1e-6, f"{d}: logits differ by {err:.3g}")
            check(os.path.exists(os.path.join(d, "vocab.txt")), f"{d}: no vocab.txt")
    for fmt in ("safetensors", "pytorch"):
        d = os.path.join(exports, f"bigs_{fmt}")
        sd = load_weights(d)
        want = official_bigs(fixtures, fmt)
        check(list(sd) == list(want) or set(sd) == set(want),
              f"{d}: names {sorted(set(sd) ^ set(want))} differ from the official port's")
        check(not set(NOT_EXPORTED) & set(sd), f"{d}: holds a pooler the model does not have")
        check_position_ids(d, sd)
        for k, v in want.items():
            if k in sd:
                check(tuple(sd[k].shape) == tuple(v.shape), f"{d}: {k} shape {tuple(sd[k].shape)}")
                check(sd[k].dtype == v.dtype, f"{d}: {k} dtype {sd[k].dtype}, official {v.dtype}")
                check(torch.equal(sd[k].float(), v.float()), f"{d}: {k} values differ")
        print(f"{d}: {len(sd)} tensors, names/shapes/values as the official port's state_dict")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
