"""routescope.load: an export directory (config.json + model.safetensors or pytorch_model.bin)
into the module of its architecture, by load_state_dict with the file's own names."""
import json
import os

import numpy as np
import torch

from . import safetensors as st
from .bert import BertForMaskedLM, BertForSequenceClassification
from .bigs import BigsForMaskedLM, BigsForSequenceClassification

WEIGHTS = ("model.safetensors", "pytorch_model.bin")

# The heads' own names: a model exported with both heads (a classifier fine-tuned from an MLM
# checkpoint keeps its MLM head) loads into either class, the other head's tensors left out.
MLM_ONLY = ("cls.predictions.",)
CLASSIFY_ONLY = ("bigs.pooler.", "bert.pooler.", "classifier.")

# Tensors a state_dict repeats for the tied decoder; safetensors leaves them out.
TIED = {"cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias"}


class LoadError(ValueError):
    """An export that cannot be loaded; the message names the file and the key or tensor."""


def _locate(path):
    """(config.json, weights file) of an export directory or of a weights file."""
    if os.path.isdir(path):
        for name in WEIGHTS:
            if os.path.exists(os.path.join(path, name)):
                return os.path.join(path, "config.json"), os.path.join(path, name)
        raise LoadError(f"{path}: no {' or '.join(WEIGHTS)}")
    if not os.path.exists(path):
        raise LoadError(f"{path}: no such file or directory")
    return os.path.join(os.path.dirname(os.path.abspath(path)), "config.json"), path


def load_config(path):
    """config.json of an export (directory, weights file or the config itself) as a dict."""
    config = path if path.endswith(".json") else _locate(path)[0]
    try:
        with open(config) as f:
            c = json.load(f)
    except FileNotFoundError:
        raise LoadError(f"{config}: missing (export writes it beside the weights)") from None
    except json.JSONDecodeError as e:
        raise LoadError(f"{config}: not valid JSON ({e})") from None
    if not isinstance(c, dict):
        raise LoadError(f"{config}: not a JSON object")
    for key in ("model_type", "vocab_size", "hidden_size", "num_hidden_layers",
                "intermediate_size", "max_position_embeddings"):
        if key not in c:
            raise LoadError(f"{config}: missing key {key}")
    return c


def load_state_dict(path):
    """{name: float32 tensor} of an export's weights file (safetensors by hand, pytorch_model.bin
    by torch.load(weights_only=True))."""
    weights = _locate(path)[1]
    if weights.endswith(".safetensors"):
        try:
            arrays = st.read(weights)
        except st.SafetensorsError as e:
            raise LoadError(str(e)) from None
        return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()}
    try:
        sd = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 (torch raises several kinds for a bad file)
        raise LoadError(f"{weights}: not a readable torch.save state_dict ({e})") from None
    if not isinstance(sd, dict):
        raise LoadError(f"{weights}: holds a {type(sd).__name__}, not a state_dict")
    return dict(sd)


def model_class(config, head=None):
    """The module class of `config` (model_type BiGS | bert) for `head` (mlm | classify; None:
    config's architectures)."""
    kind = str(config.get("model_type", "")).lower()
    if head is None:
        arch = (config.get("architectures") or [""])[0]
        head = "classify" if arch.endswith("ForSequenceClassification") else "mlm"
    if head not in ("mlm", "classify"):
        raise LoadError(f"head {head!r}: mlm or classify")
    if kind == "bigs":
        return BigsForMaskedLM if head == "mlm" else BigsForSequenceClassification
    if kind == "bert":
        return BertForMaskedLM if head == "mlm" else BertForSequenceClassification
    raise LoadError(f"config.json: model_type {config.get('model_type')!r} (BiGS or bert)")


def load(path, head=None, dtype=torch.float32):
    """The model of an export (directory or weights file), its parameters loaded by name, in eval
    mode. head: mlm | classify (default: config.json's architectures)."""
    config_path, weights = _locate(path)
    c = dict(load_config(config_path))
    sd = load_state_dict(weights)
    cls = model_class(c, head)
    root = "bigs." if cls in (BigsForMaskedLM, BigsForSequenceClassification) else "bert."
    c["type_embeddings"] = root + "embeddings.token_type_embeddings.weight" in sd
    if cls in (BigsForSequenceClassification, BertForSequenceClassification):
        if "classifier.bias" not in sd:
            raise LoadError(f"{weights}: classifier.bias: missing (no classification head)")
        c["num_labels"] = int(sd["classifier.bias"].shape[0])
    model = cls(c)
    want = model.state_dict()
    for copy, original in TIED.items():  # safetensors leaves the tied decoder out
        original = original if original.startswith("cls.") else root + original
        if copy in want and copy not in sd and original in sd:
            sd[copy] = sd[original]
    other = CLASSIFY_ONLY if cls in (BigsForMaskedLM, BertForMaskedLM) else MLM_ONLY
    problems = []
    for name, t in sd.items():
        if name not in want:
            if not name.startswith(other) and name != "bert.embeddings.position_ids":
                problems.append(f"{name}: unexpected")
        elif tuple(t.shape) != tuple(want[name].shape):
            problems.append(f"{name}: shape {list(t.shape)}, expected {list(want[name].shape)}")
    for name, buffer in model.named_buffers():  # bert's position_ids: 0..Lmax-1 by construction
        if name in want and name not in sd:
            sd[name] = buffer
    problems += [f"{name}: missing" for name in want if name not in sd]
    if problems:
        raise LoadError(f"{weights}: " + "; ".join(problems))
    model.load_state_dict({k: v for k, v in sd.items() if k in want}, strict=True)
    return model.to(dtype).eval()
