"""Logits and loss of one batch (MLM or classification).

MLM: cross-entropy averaged over every target position of the batch (labels != -100), i.e. one
mean over all target tokens, not a mean of per-sequence means. Classification: cross-entropy
averaged over the batch.
"""
import torch.nn.functional as F

from .batch import IGNORE


def logits_and_loss(model, batch):
    h, valid = model.encode(batch["input_ids"], batch["lengths"], batch["token_type_ids"],
                            reset_mask=batch.get("reset_mask"))
    if "labels" in batch:
        logits = model.mlm_logits(h)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1),
                               ignore_index=IGNORE, reduction="mean")
    else:
        logits = model.class_logits(h, valid)
        loss = F.cross_entropy(logits, batch["class_labels"], reduction="mean")
    return logits, loss
