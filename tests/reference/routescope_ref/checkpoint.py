"""Checkpoint files, CHECKPOINT_FORMAT.md version 1 (`*.ckpt.h5`), read and written with h5py.

    /                 attrs format = "routescope-checkpoint", format_version = 1, producer, created
    /config           attr json: the full run configuration
    /params/<name>    float32, PyTorch names and shapes (Linear weight [out, in])
    /tokenizer        attr kind (bytes | sentencepiece | wordpiece | wordpiece_cased);
                      /tokenizer/model uint8 [n]
    /train            optional: attrs step, tokens_seen, rng_state (uint64 [k]), data_position;
                      /train/adam_m/<name>, /train/adam_v/<name>

Writing goes to a temporary name in the same directory, then os.replace, so a crash never leaves a
half-written checkpoint under the real name. Reading rejects, naming the dataset, a missing or
unexpected parameter, a shape that disagrees with /config, an unknown format_version or a
non-finite value; a malformed file is a CheckpointError, never a crash.
"""
import datetime
import os

import h5py
import numpy as np
import torch

from . import config as config_mod
from .errors import CheckpointError, ConfigError

FORMAT = "routescope-checkpoint"
FORMAT_VERSION = 1
PRODUCER = f"routescope tests/reference (PyTorch {torch.__version__})"


def _to_numpy32(value):
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.ascontiguousarray(value, dtype=np.float32)


def write(path, cfg, params, *, tokenizer_kind=None, tokenizer_model=None, train=None):
    """Write a checkpoint atomically.

    params: name -> tensor/array (stored float32). tokenizer_kind defaults to cfg tokenizer.kind
    ("bytes" when none). train: optional dict with step, tokens_seen, rng_state, data_position,
    adam_m / adam_v (name -> tensor/array).
    """
    kind = tokenizer_kind or cfg.get("tokenizer", {}).get("kind") or "bytes"
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = np.int64(FORMAT_VERSION)
            f.attrs["producer"] = PRODUCER
            f.attrs["created"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            f.create_group("config").attrs["json"] = config_mod.to_json(cfg)
            group = f.create_group("params")
            for name, value in params.items():
                group.create_dataset(name, data=_to_numpy32(value))
            tok = f.create_group("tokenizer")
            tok.attrs["kind"] = kind
            if tokenizer_model is not None:
                tok.create_dataset("model", data=np.frombuffer(bytes(tokenizer_model), dtype=np.uint8))
            if train is not None:
                tr = f.create_group("train")
                tr.attrs["step"] = np.int64(train.get("step", 0))
                for key in ("tokens_seen", "data_position"):
                    if key in train:
                        tr.attrs[key] = np.int64(train[key])
                if "rng_state" in train:
                    tr.attrs["rng_state"] = np.asarray(train["rng_state"], dtype=np.uint64)
                for moment in ("adam_m", "adam_v"):
                    if moment in train:
                        g = tr.create_group(moment)
                        for name, value in train[moment].items():
                            g.create_dataset(name, data=_to_numpy32(value))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _text_attr(obj, name, where):
    if name not in obj.attrs:
        raise CheckpointError(f"{where}: missing attr {name}")
    value = obj.attrs[name]
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise CheckpointError(f"{where}: attr {name} is not a string")
    return value


def _float_dataset(f, where):
    if where not in f or not isinstance(f[where], h5py.Dataset):
        raise CheckpointError(f"{where}: missing dataset")
    ds = f[where]
    if ds.dtype.kind != "f":
        raise CheckpointError(f"{where}: dtype {ds.dtype} is not floating point")
    value = np.asarray(ds[()], dtype=np.float32)
    if not np.all(np.isfinite(value)):
        raise CheckpointError(f"{where}: non-finite value")
    return value


def read(path, expected_shapes=None):
    """Read a checkpoint into a dict: config (parsed), params (name -> float32 ndarray), tokenizer
    (kind, model bytes or None), train (dict or None).

    expected_shapes: name -> shape, the model of /config (see expected_shapes()); when given every
    parameter must be present with that shape and no other parameter may be present.
    """
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise CheckpointError(f"{path}: cannot open as HDF5 ({e})") from None
    try:
        with f:
            return _read_open(f, path, expected_shapes)
    except CheckpointError as e:
        raise CheckpointError(f"{path}: {e}") from None
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise CheckpointError(f"{path}: malformed checkpoint ({e})") from None


def _read_open(f, path, expected_shapes):
    fmt = _text_attr(f, "format", "/")
    if fmt != FORMAT:
        raise CheckpointError(f"/: attr format is '{fmt}', expected '{FORMAT}'")
    if "format_version" not in f.attrs:
        raise CheckpointError("/: missing attr format_version")
    version = f.attrs["format_version"]
    if np.ndim(version) != 0 or int(version) != FORMAT_VERSION:
        raise CheckpointError(f"/: unknown format_version {version} (this reader knows {FORMAT_VERSION})")
    if "config" not in f:
        raise CheckpointError("/config: missing group")
    try:
        cfg = config_mod.parse(_text_attr(f["config"], "json", "/config"))
    except ConfigError as e:
        raise CheckpointError(f"/config attr json: {e}") from None
    if expected_shapes is None:
        from .models import Model  # the model of /config names the parameters
        try:
            expected_shapes = expected_shape_map(Model(cfg))
        except ConfigError as e:
            raise CheckpointError(f"/config attr json: {e}") from None
    if "params" not in f or not isinstance(f["params"], h5py.Group):
        raise CheckpointError("/params: missing group")
    params = {}
    for name, shape in expected_shapes.items():
        where = f"/params/{name}"
        value = _float_dataset(f, where)
        if tuple(value.shape) != tuple(shape):
            raise CheckpointError(f"{where}: shape {list(value.shape)} disagrees with /config (expected {list(shape)})")
        params[name] = value
    for name in f["params"]:
        if name not in expected_shapes:
            raise CheckpointError(f"/params/{name}: unexpected parameter (not in the model of /config)")
    if "tokenizer" not in f:
        raise CheckpointError("/tokenizer: missing group")
    kind = _text_attr(f["tokenizer"], "kind", "/tokenizer")
    if kind not in ("bytes", "sentencepiece", "wordpiece", "wordpiece_cased"):
        raise CheckpointError(f"/tokenizer: attr kind '{kind}' is not bytes, sentencepiece, "
                              "wordpiece or wordpiece_cased")
    model_bytes = None
    if "model" in f["tokenizer"]:
        model_bytes = bytes(np.asarray(f["tokenizer/model"][()], dtype=np.uint8))
    train = None
    if "train" in f:
        tr = f["train"]
        if "step" not in tr.attrs:
            raise CheckpointError("/train: missing attr step")
        train = {"step": int(tr.attrs["step"])}
        for key in ("tokens_seen", "data_position"):
            if key in tr.attrs:
                train[key] = int(tr.attrs[key])
        if "rng_state" in tr.attrs:
            train["rng_state"] = np.asarray(tr.attrs["rng_state"], dtype=np.uint64)
        for moment in ("adam_m", "adam_v"):
            if moment in tr:
                train[moment] = {}
                for name, shape in expected_shapes.items():
                    where = f"/train/{moment}/{name}"
                    value = _float_dataset(f, where)
                    if tuple(value.shape) != tuple(shape):
                        raise CheckpointError(f"{where}: shape {list(value.shape)} disagrees with /params/{name}")
                    train[moment][name] = value
    return {"config": cfg, "params": params, "tokenizer": {"kind": kind, "model": model_bytes}, "train": train}


def expected_shape_map(model):
    """name -> shape of every parameter of a reference Model (its state_dict is the checkpoint list)."""
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def load_model(path, dtype=torch.float32):
    """The reference Model of a checkpoint's /config with its /params loaded, and the read dict."""
    from .models import Model
    ck = read(path)
    model = Model(ck["config"]).to(dtype)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(ck["params"][name]).to(dtype))
    return model, ck
