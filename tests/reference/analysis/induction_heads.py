"""Where a causal attention model looks on the induction task: the two heads of the induction
circuit, read from dumps written with `routescope-cli dump --task induction --attention`.

    /usr/bin/python3 induction_heads.py A.dump.h5 [B.dump.h5 ...]

For each dump of a two-layer, one-head causal attention model (the induction experiment's
STACK/ATT) over the induction task, whose rows are "[CLS] ... trigger x ... trigger x [SEP]"
(the copied symbol x written after the second trigger, as `dump` writes a causal checkpoint's
rows), prints one JSON line:
  - accuracy: the mean of /data/attributes/correct (eval's exact match);
  - l1_copied_to_trigger: layer 1's attention from the copied symbol's first occurrence (the token
    after the first trigger) to the trigger before it — the "previous token" head that marks
    "my predecessor was the trigger" — with the uniform weight 1/(t+1) of its causal row beside
    it, and how often it is that row's largest weight;
  - l2_query_to_copied: layer 2's attention from the query (the second trigger, whose next-token
    logits answer) to the copied symbol's first occurrence — the induction head — and how often
    it is the query row's largest weight; the uniform weight 1/(q+1) beside it.
Everything is computed here from the dumped attention probabilities and tokens with numpy.
"""
import json
import sys

import h5py
import numpy as np


def heads(path):
    with h5py.File(path, "r") as f:
        vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][()]]
        tokens = f["data/tokens"][()]
        a1 = f["layers/1/attention"][:, 0]
        a2 = f["layers/2/attention"][:, 0]
        correct = f["data/attributes/correct"][()]
    trigger = vocab.index("trigger")
    l1, l1_uniform, l1_top, l2, l2_uniform, l2_top = [], [], [], [], [], []
    for i in range(tokens.shape[0]):
        at = np.nonzero(tokens[i] == trigger)[0]
        first, query = int(at[0]), int(at[-1])
        copied = first + 1
        l1.append(a1[i, copied, first])
        l1_uniform.append(1.0 / (copied + 1))
        l1_top.append(np.argmax(a1[i, copied, : copied + 1]) == first)
        l2.append(a2[i, query, copied])
        l2_uniform.append(1.0 / (query + 1))
        l2_top.append(np.argmax(a2[i, query, : query + 1]) == copied)
    r = lambda x: round(float(np.mean(x)), 3)
    return {"dump": path, "examples": int(tokens.shape[0]), "accuracy": r(correct),
            "l1_copied_to_trigger": r(l1), "l1_uniform": r(l1_uniform), "l1_largest": r(l1_top),
            "l2_query_to_copied": r(l2), "l2_uniform": r(l2_uniform), "l2_largest": r(l2_top)}


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(json.dumps(heads(p)))
