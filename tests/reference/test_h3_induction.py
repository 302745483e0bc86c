#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks of tests/reference/h3_induction.py, the PyTorch re-statement of H3's induction
experiment (docs/experiments.md, "Why the contrast did not appear"), against what safari's
configuration says, computed here independently:

- the data: 32 tokens, the copy prefix at the end of the 31 the model reads and at one position
  in [0, 28), the last token equal to the one after that first prefix, no `.` (noop), no repeated
  sequence, 5000 / 500;
- causality: changing the token at t leaves every logit before t unchanged, for each mixer;
- --mixer routescope-bert: the engine's [CLS] … [SEP] layout, ids and labels, the answer's
  position, and causality;
- the S4D kernel: its closed form (ZOH, C' = C (exp(dt w) - 1) / w, K = 2 Re sum C' exp(dt w l))
  equals running the diagonal recurrence x <- exp(dt w) x + u, y = 2 Re(C' . x) on an impulse.
Exit 0 when all hold."""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import h3_induction as h3  # noqa: E402


def check_data():
    train, test = h3.generate(0, 5000, 500)
    assert train.shape == (5000, 32) and test.shape == (500, 32), (train.shape, test.shape)
    for ex in (train, test):
        seqs = ex.numpy()
        assert len({tuple(r) for r in seqs}) == len(seqs), "repeated sequences"
        assert (seqs != h3.NOOP_ID).all(), "noop token in a sequence"
        for r in seqs:
            assert r[30] == h3.PREFIX_ID
            first = np.flatnonzero(r[:30] == h3.PREFIX_ID)
            assert len(first) == 1 and 0 <= first[0] < 28, r
            assert r[31] == r[first[0] + 1], r
            assert np.isin(np.delete(r, [first[0], 30]), h3.CONTENT_IDS).all(), r


def make(mixer):
    ap = argparse.Namespace(mixer=mixer, ssm_act="gelu" if mixer == "s4d" else "none",
                            dt=(1e-3, 1e-1) if mixer == "s4d" else (0.01, 1.0),
                            a_init="inv" if mixer == "s4d" else "legs",
                            pos_emb=mixer == "attention", init_std=0.3 if mixer == "gated" else 0.02)
    torch.manual_seed(3)
    return h3.LM(ap).eval()


def check_causal():
    ids = torch.randint(1, 19, (2, 31))
    for mixer in ("s4d", "stack", "gated", "attention"):
        model = make(mixer)
        with torch.no_grad():
            for t in (5, 17, 30):
                changed = ids.clone()
                changed[:, t] = (changed[:, t] % 18) + 1
                a, b = model(ids), model(changed)
                assert torch.allclose(a[:, :t], b[:, :t], atol=1e-5), (mixer, t)
                assert not torch.allclose(a[:, t:], b[:, t:]), (mixer, t, "no effect at all")


def check_routescope_bert():
    """--mixer routescope-bert: the engine's layout (34 tokens: [CLS] 32 [SEP] in the engine's ids,
    labels the next token, none after [SEP], the answer predicted at the second trigger), every
    parameter name of the engine's bert ([CLS]/[SEP] layout and safari's 31 tokens), causal."""
    train, _ = h3.generate(0, 20, 1)
    for layout in (False, True):
        args = argparse.Namespace(**{k: False for k in ("rb_emb_norm", "rb_head", "rb_ln_eps", "rb_init",
                                                        "rb_layout", "rb_clip", "rb_schedule")})
        args.rb_layout = layout
        torch.manual_seed(3)
        model = h3.RoutescopeBert(args).eval()
        ids, labels, at = model.rows(train)
        if layout:
            assert ids.shape == (20, 31) and at == 30, (ids.shape, at)
        else:
            assert ids.shape == (20, 34) and at == 31, (ids.shape, at)
            assert (ids[:, 0] == h3.RS_CLS).all() and (ids[:, 33] == h3.RS_SEP).all()
            assert (labels[:, :33] == ids[:, 1:]).all() and (labels[:, 33] == -100).all()
        # the trigger (engine id 23) at the answer's position, the answer the symbol after the first
        assert (ids[:, at] == 23).all() and (labels[:, at] == h3.RS_ID[train[:, 31]]).all()
        names = set(dict(model.net.named_parameters()))
        assert "embeddings.norm.weight" in names and "mlm.dense.weight" in names, sorted(names)
        with torch.no_grad():
            for t in (5, 17, 30):
                changed = ids.clone()
                changed[:, t] = 5 + (changed[:, t] - 4) % 18
                a, b = model(ids), model(changed)
                assert torch.allclose(a[:, :t], b[:, :t], atol=1e-5), ("routescope-bert", t)
                assert not torch.allclose(a[:, t:], b[:, t:]), ("routescope-bert", t, "no effect")


def check_kernel():
    torch.manual_seed(5)
    k = h3.SafariS4DKernel(4, N=8)
    L = 12
    with torch.no_grad():
        K = k(L).double().numpy()
        dt = np.exp(k.log_dt.double().numpy())
        w = (-np.exp(k.log_w_real.double().numpy()) + 1j * k.w_imag.double().numpy())[0]
        C = torch.view_as_complex(k.C.double()).numpy()[0]
    for h in range(4):
        dA = np.exp(dt[h] * w)
        Cp = C[h] * (dA - 1.0) / w
        x = np.zeros_like(w)
        for l in range(L):
            x = dA * x + (1.0 if l == 0 else 0.0)
            y = 2 * np.real(np.sum(Cp * x))
            assert abs(y - K[h, l]) < 1e-5 * max(1.0, abs(y)), (h, l, y, K[h, l])


if __name__ == "__main__":
    check_data()
    check_causal()
    check_routescope_bert()
    check_kernel()
    print("h3_induction: data, causality, the engine-layout mirror and the S4D kernel hold")
