"""Independent recount of `routescope-cli eval --task` for a causal checkpoint (clm, prefix_lm,
birdie): the answer span written after the prompt, scored with the PyTorch reference model.

Usage: score_task_answers.py CHECKPOINT EXAMPLES.json OUT.json [prefix_lm|next_token]
EXAMPLES.json: [{"tokens": [completed ids], "first": i, "last": j}, ...] (the answer span is
tokens[first..last]). OUT.json: [{"predicted": [ids], "expected": [ids], "correct": bool}, ...].

Rows, from docs/decisions.md ("Phone book: scoring a causal checkpoint on a task"):
  clm        the completed example, every position causal (reset-mask bit 2 everywhere);
  prefix_lm  the same tokens, positions [0, first) the bidirectional prefix;
  birdie     [prefix-LM paradigm = V + 5] tokens[1:first] [start = V + 7] tokens[first:], with V
             the tokenizer's size (model vocab - 42); the prefix is up to and including [start].
             With the fourth argument next_token (eval --birdie-layout next_token): the next-token
             arm's row [next-token paradigm = V + 6] [start] tokens[1:], the prefix the first two.
The logits at the position before each answer token predict it (argmax).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routescope_ref.checkpoint import load_model  # noqa: E402

BIRDIE_SPECIALS = 42
NEW_SAMPLE, CAUSAL = 1, 2


def main():
    ck_path, examples_path, out_path = sys.argv[1:4]
    layout = sys.argv[4] if len(sys.argv) > 4 else "prefix_lm"
    if layout not in ("prefix_lm", "next_token"):
        sys.exit(f"layout: {layout} is neither prefix_lm nor next_token")
    model, ck = load_model(ck_path)
    model.eval()
    cfg = ck["config"]
    objective = cfg["train"]["objective"]
    V = cfg["model"]["vocab_size"] - (BIRDIE_SPECIALS if objective == "birdie" else 0)
    examples = json.load(open(examples_path))
    out = []
    for e in examples:
        seq, first, last = e["tokens"], e["first"], e["last"]
        if objective == "birdie" and layout == "next_token":
            row = [V + 6, V + 7] + seq[1:]
            causal_from = 2
            predict_at = {j: j for j in range(first, last + 1)}  # seq[j] sits at j + 1
        elif objective == "birdie":
            row = [V + 5] + seq[1:first] + [V + 7] + seq[first:]
            causal_from = first + 1
            predict_at = {j: j for j in range(first, last + 1)}  # seq[j] sits at j + 1
        else:
            row = list(seq)
            causal_from = first if objective == "prefix_lm" else 0
            predict_at = {j: j - 1 for j in range(first, last + 1)}
        L = len(row)
        mask = [(NEW_SAMPLE if t == 0 else 0) | (CAUSAL if t >= causal_from else 0) for t in range(L)]
        with torch.no_grad():
            h, _ = model.encode(torch.tensor([row]), torch.tensor([L]),
                                reset_mask=torch.tensor([mask]))
            logits = model.mlm_logits(h)[0]
        predicted = [int(logits[predict_at[j]].argmax()) for j in range(first, last + 1)]
        expected = seq[first:last + 1]
        out.append({"predicted": predicted, "expected": expected, "correct": predicted == expected})
    json.dump(out, open(out_path, "w"))


if __name__ == "__main__":
    main()
