"""batch.h5, the one batch a parity run is given.

    input_ids       int32 [B, L]   token ids; positions >= lengths[b] are padding
    lengths         int32 [B]      1 <= length <= L
    labels          int32 [B, L]   MLM targets, -100 = ignored          (MLM batches)
    class_labels    int32 [B]      class index in [0, n_labels)          (classification batches)
    token_type_ids  int32 [B, L]   optional, 0/1 (only with model.type_embeddings)
    reset_mask      int32 [B, L]   optional, Birdie's reset mask: bit 1 new packed sample, bit 2
                                   causal region (birdie.py)
Exactly one of labels / class_labels is present.
"""
import h5py
import numpy as np
import torch

IGNORE = -100


def write(path, input_ids, lengths, labels=None, class_labels=None, token_type_ids=None):
    with h5py.File(path, "w") as f:
        f.create_dataset("input_ids", data=np.asarray(input_ids, dtype=np.int32))
        f.create_dataset("lengths", data=np.asarray(lengths, dtype=np.int32))
        if labels is not None:
            f.create_dataset("labels", data=np.asarray(labels, dtype=np.int32))
        if class_labels is not None:
            f.create_dataset("class_labels", data=np.asarray(class_labels, dtype=np.int32))
        if token_type_ids is not None:
            f.create_dataset("token_type_ids", data=np.asarray(token_type_ids, dtype=np.int32))


def read(path, cfg):
    """dict of int64 tensors (input_ids, lengths, labels | class_labels, token_type_ids or None),
    checked against the model configuration; errors name the dataset."""
    m = cfg["model"]
    out = {}
    with h5py.File(path, "r") as f:
        for key in ("input_ids", "lengths", "labels", "class_labels", "token_type_ids", "reset_mask"):
            if key in f:
                value = np.asarray(f[key][()])
                if value.dtype.kind not in "iu":
                    raise ValueError(f"{path}:/{key}: dtype {value.dtype} is not an integer")
                out[key] = torch.from_numpy(value.astype(np.int64))
    for key in ("input_ids", "lengths"):
        if key not in out:
            raise ValueError(f"{path}:/{key}: missing dataset")
    ids, lengths = out["input_ids"], out["lengths"]
    if ids.ndim != 2:
        raise ValueError(f"{path}:/input_ids: expected [B, L], got {list(ids.shape)}")
    B, L = ids.shape
    if L > m["max_len"]:
        raise ValueError(f"{path}:/input_ids: length {L} exceeds model.max_len={m['max_len']}")
    if ids.min() < 0 or ids.max() >= m["vocab_size"]:
        raise ValueError(f"{path}:/input_ids: ids must lie in [0, {m['vocab_size']})")
    if tuple(lengths.shape) != (B,) or lengths.min() < 1 or lengths.max() > L:
        raise ValueError(f"{path}:/lengths: expected [B] = [{B}] values in [1, {L}]")
    if ("labels" in out) == ("class_labels" in out):
        raise ValueError(f"{path}: exactly one of /labels (MLM) and /class_labels must be present")
    if "labels" in out:
        lab = out["labels"]
        ok = (lab == IGNORE) | ((lab >= 0) & (lab < m["vocab_size"]))
        if tuple(lab.shape) != (B, L) or not bool(ok.all()) or not bool((lab != IGNORE).any()):
            raise ValueError(f"{path}:/labels: expected [B, L] with ids in [0, V) or -100, at least one target")
    else:
        lab = out["class_labels"]
        if tuple(lab.shape) != (B,) or lab.min() < 0 or lab.max() >= m["n_labels"]:
            raise ValueError(f"{path}:/class_labels: expected [B] with values in [0, model.n_labels={m['n_labels']})")
    tt = out.get("token_type_ids")
    if tt is not None and (tuple(tt.shape) != (B, L) or tt.min() < 0 or tt.max() > 1):
        raise ValueError(f"{path}:/token_type_ids: expected [B, L] values in {{0, 1}}")
    rm = out.get("reset_mask")
    if rm is not None and (tuple(rm.shape) != (B, L) or rm.min() < 0 or rm.max() > 3):
        raise ValueError(f"{path}:/reset_mask: expected [B, L] values in 0..3")
    out.setdefault("token_type_ids", None)
    out.setdefault("reset_mask", None)
    return out
