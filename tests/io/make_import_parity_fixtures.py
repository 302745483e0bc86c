#!/usr/bin/python3
"""Fixtures for tests/io/test_import_parity.cpp (issue 16): the importer against the published
semantics, with expected values from the independent references in tests/reference.

* A small random BiGS (the published PyTorch port's state_dict names and layouts: A_re/A_im [N],
  C [N, 2], log_step [1], D [1], Dense weights [out, in]) with every tensor random and
  non-trivial, MLM (BiGSForMaskedLM) and classification (BiGSForSequenceClassification, MNLI's
  3 labels), each written as pytorch_model.bin (torch.save of the state dict), model.safetensors
  and flax_model.msgpack (the release's s4_bert/… tree, kernels [in, out]); and the logits
  tests/reference/bigs_published.py computes in float64 from that state dict on two padded
  batches (L = Lmax and L < Lmax).
* A WordPiece vocabulary (a few hundred pieces: specials, ASCII, ## pieces, CJK, kana, Hangul
  jamo, Greek, accent-stripped words) as vocab.txt and as an equivalent Hugging Face
  tokenizer.json, test texts (accents, CJK, punctuation, unknown words, a word over 100
  characters, control and exotic whitespace characters) as JSON Lines classification files, and
  the ids tests/reference/bert_uncased_tokenizer.py gives them. The BiGS above uses this
  vocabulary, so importing it embeds the tokenizer under test.
* config.json with hidden_act "gelu_new" (the MLM transform's activation in the release).
* A cased vocabulary of the same size (capitalised and accented pieces in place of the tail),
  as vocab.txt with tokenizer_config.json {"do_lower_case": false}, as a tokenizer.json with
  lowercase false, and as a bare vocab.txt (nothing says cased: read uncased, with a note), with
  the ids the reference gives the texts cased (lower=False).
* Tokenizers that are not BERT's (accents stripped but case kept or the reverse, no CJK
  splitting, another continuation prefix or word limit), which the importer must refuse.

Usage: make_import_parity_fixtures.py OUT_DIR
"""
import collections
import io
import json
import math
import os
import sys

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import bert_uncased_tokenizer as bert_tok  # noqa: E402
import bigs_published  # noqa: E402
from make_import_fixtures import flax_tree, mp, safetensors_bytes  # noqa: E402  (format writers)

# ---------------------------------------------------------------- the vocabulary

LETTERS = "abcdefghijklmnopqrstuvwxyz"
WORDS = ["the", "cafe", "naive", "angstrom", "don", "quotes", "usa", "creme", "brulee", "facade",
         "strasse", "istanbul", "resume", "book", "stop", "rose", "in", "winning", "user", "tilde",
         "caret", "back", "brace", "bracket", "pipe", "slash", "tab", "here", "new", "line", "bell",
         "repl", "nul", "pua", "zero", "width", "nbsp", "ideo", "au", "lait", "un", "word",
         "known", "xylophone", "fish", "hello", "world", "gdp", "running", "affable"]
SUBWORDS = ["##s", "##ing", "##known", "##word", "##strom", "##st", "##rom", "##ee", "##ade",
            "##able", "##aff", "##phone", "##lo", "##ed", "##er", "##ly", "ang", "xy", "runn",
            "bru", "fac"]
CJK = "中文字日本語书名引用的是一"
KANA = "のテキストひらがな"
JAMO = ["\u1112", "\u1161", "\u11ab", "\u1100", "\u116e", "\u11a8", "\u110b", "\u1165"]  # 한국어
GREEK = "αθηνελικσ"


def vocabulary():
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces += [f"[unused{i}]" for i in range(8)]
    pieces += [chr(c) for c in range(33, 127) if not chr(c).isalnum()]  # ASCII punctuation
    pieces += list("0123456789") + ["##" + d for d in "0123456789"]
    pieces += list(LETTERS) + ["##" + c for c in LETTERS]
    pieces += WORDS + SUBWORDS
    pieces += list(CJK) + list("，。《》「」—–…’“”")
    for ch in list(KANA) + JAMO + list(GREEK):
        pieces += [ch, "##" + ch]
    seen = set()
    out = []
    for p in pieces:  # keep the first of any repeat
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


SINGLES = [
    'Café naïve Ångström — don\'t U.S.A. "quotes" 中文字 unknownword',
    "Crème BRÛLÉE, façade; Straße İstanbul résumé ΑΘΗΝΑ Ελληνικά",
    "日本語のテキスト，中文。《书名》「引用」是一 ひらがな 한국어",
    "zebra€ 😀 xylophone ﬁsh Привет мир",
    "a" * 101 + " " + "b" * 100 + " " + "c" * 99 + "é" + " " + "d" * 100 + "!",
    "tab\there\u00a0nbsp\u3000ideo\u200bzero\x07bell\ufffdrepl\x00nul\ue000pua\u0378x\r\nnew line",
    "Don't stop—U.S.A.'s (GDP) rose 3.5% in 2021!!! #winning @user ~tilde^caret `back` {brace} "
    "[bracket] |pipe| \\slash",
    "cafe\u0301 nai\u0308ve running unaffable worlds hello…",
    "",
]
PAIRS = [("Café au lait?", "中文 naïve!"),
         ("Don't — U.S.A.", "unknown€word résumé"),
         ("x" * 120, "ΑΘΗΝΑ 한국어 ひらがな")]


# Pieces a cased vocabulary holds that the uncased one cannot (the texts' capitals and accents).
CASED = ["Café", "C", "##afé", "The", "Don", "U", "S", "A", "Crème", "BR", "##Û", "##LÉ", "##E",
         "Ångström", "İ", "##stanbul", "Straße", "É", "é", "##é", "ï", "##ï", "Å", "##è", "GDP",
         "Α", "##Θ", "##Η", "##Ν", "Ελληνικά", "Привет", "мир", "##ç", "##ade", "naïve", "résumé",
         "X", "Y", "Z", "Q", "##s"]


def cased_vocabulary(pieces):
    """The uncased vocabulary with its tail replaced by CASED: the same number of pieces, so the
    small BiGS (V rows) takes it."""
    extra = [p for p in CASED if p not in pieces]
    return pieces[:len(pieces) - len(extra)] + extra


def tokenizer_json(pieces, **over):
    """A Hugging Face tokenizer.json of bert-base-uncased's layout over `pieces`; `over` replaces
    normalizer or model fields (for the refused variants)."""
    vocab = {p: i for i, p in enumerate(pieces)}
    vocab = dict(reversed(list(vocab.items())))  # ids are read from the map, not its order
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    normalizer = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                  "strip_accents": None, "lowercase": True}
    model = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
             "max_input_chars_per_word": 100, "vocab": vocab}
    for k, v in over.items():
        (normalizer if k in normalizer else model)[k] = v
    seq = lambda which, t: {"Sequence": {"id": which, "type_id": t}}
    special = lambda s, t: {"SpecialToken": {"id": s, "type_id": t}}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[s], "content": s, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for s in specials],
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)],
            "pair": [special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1),
                     special("[SEP]", 1)],
            "special_tokens": {s: {"id": s, "ids": [vocab[s]], "tokens": [s]}
                               for s in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": model}, ensure_ascii=False, indent=1)


# ---------------------------------------------------------------- the small BiGS

D, I, LAYERS, N, LMAX, LABELS = 16, 40, 2, 6, 16, 3
LINEARS = {"dv": (D, I), "du_forward": (D, D), "du_backward": (D, D), "duc_forward": (D, D),
           "duc_backward": (D, D), "dol": (D, I), "do": (I, D)}  # (in, out)
BATCHES = {"full": (LMAX, [16, 9, 4]), "short": (11, [11, 6, 2])}


def random_bigs(rng, V, classification):
    """The PyTorch port's state dict (float32), every tensor random."""
    sd = collections.OrderedDict()
    f = lambda shape, scale=1.0, shift=0.0: (shift + scale * rng.standard_normal(shape)).astype(np.float32)
    e = "bigs.embeddings."
    sd[e + "word_embeddings.weight"] = f((V, D))
    sd[e + "position_embeddings.weight"] = f((LMAX, D))
    sd[e + "token_type_embeddings.weight"] = f((2, D))
    sd[e + "LayerNorm.weight"], sd[e + "LayerNorm.bias"] = f(D, 0.3, 1.0), f(D, 0.3)
    for i in range(LAYERS):
        p = f"bigs.encoder.layer.{i}."
        sd[p + "LayerNorm.weight"], sd[p + "LayerNorm.bias"] = f(D, 0.3, 1.0), f(D, 0.3)
        for ssm in ("fs4", "bs4"):
            a_re = -np.exp(rng.uniform(-3, 1, N))
            a_re[rng.choice(N, 2, replace=False)] = rng.uniform(0.01, 0.5, 2)  # clamped to -1e-4
            sd[p + ssm + ".kernel.A_re"] = a_re.astype(np.float32)
            sd[p + ssm + ".kernel.A_im"] = f(N, 4.0)
            sd[p + ssm + ".kernel.C"] = f((N, 2), math.sqrt(0.5))
            sd[p + ssm + ".kernel.log_step"] = rng.uniform(math.log(0.01), math.log(2), 1).astype(np.float32)
            sd[p + ssm + ".D"] = f(1)
        for lin, (fin, fout) in LINEARS.items():
            sd[p + lin + ".weight"] = f((fout, fin), 1.5 / math.sqrt(fin))
            sd[p + lin + ".bias"] = f(fout, 0.3)
    if classification:
        sd["bigs.pooler.dense.weight"], sd["bigs.pooler.dense.bias"] = f((D, D), 1 / math.sqrt(D)), f(D, 0.3)
        sd["classifier.weight"], sd["classifier.bias"] = f((LABELS, D), 1 / math.sqrt(D)), f(LABELS, 0.3)
    else:
        c = "cls.predictions."
        sd[c + "transform.dense.weight"] = f((D, D), 1.5 / math.sqrt(D))
        sd[c + "transform.dense.bias"] = f(D, 0.3)
        sd[c + "transform.LayerNorm.weight"] = f(D, 0.3, 1.0)
        sd[c + "transform.LayerNorm.bias"] = f(D, 0.3)
        sd[c + "bias"] = f(V)
        sd[c + "decoder.weight"] = sd[e + "word_embeddings.weight"]  # tied, as the port saves it
        sd[c + "decoder.bias"] = sd[c + "bias"]
    return sd


def flax_names(sd):
    """The release's Flax tree (MODELS.md): s4_bert/…, kernels [in, out], LN scale, no decoder."""
    out = collections.OrderedDict()
    for name, a in sd.items():
        if name.startswith("cls.predictions.decoder"):
            continue
        parts = name.replace("bigs.", "s4_bert.", 1).split(".")
        leaf = parts[-1]
        if parts[-2] == "kernel" and leaf in ("A_re", "A_im", "C", "log_step"):
            parts = parts[:-2] + [leaf]                     # fs4.kernel.A_re -> fs4/A_re
        elif leaf == "weight" and "LayerNorm" in parts:
            parts[-1] = "scale"
        elif leaf == "weight" and "embeddings" in parts:
            parts[-1] = "embedding"
        elif leaf == "weight":
            parts[-1] = "kernel"
            a = np.ascontiguousarray(a.T)
        out["/".join(parts)] = a
    return out


def config_json(V, classification):
    c = {"architectures": ["BiGSForSequenceClassification" if classification else "BiGSForMaskedLM"],
         "model_type": "BiGS", "vocab_size": V, "hidden_size": D, "num_hidden_layers": LAYERS,
         "intermediate_size": I, "num_ssm": N, "max_position_embeddings": LMAX,
         "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
         "hidden_dropout_prob": 0.1, "initializer_range": 0.02, "pre_norm": True,
         "pooler_type": "non_padding_mean", "pad_token_id": 0, "scaling": "hippo"}
    if classification:
        c.update(num_labels=LABELS, id2label={"0": "entailment", "1": "neutral", "2": "contradiction"})
    return c


def batch(rng, V, L, lengths):
    ids = np.zeros((len(lengths), L), np.int64)  # [PAD] = 0 after each length
    types = np.zeros_like(ids)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(5, V, n)
        ids[b, 0] = 2  # [CLS]
        types[b, (n + 1) // 2:n] = 1
    mask = (np.arange(L)[None, :] < np.array(lengths)[:, None]).astype(np.int64)
    return ids, types, mask


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1616)
    bert_tok.selfcheck()  # the references against their published examples and other forms
    bigs_published.selfcheck()

    # ---- the vocabulary, the texts and their ids
    pieces = vocabulary()
    vocab = {p: i for i, p in enumerate(pieces)}
    V = len(pieces)
    vocab_txt = "\n".join(pieces) + "\n"
    write(f"{out}/vocab.txt", vocab_txt)
    with open(f"{out}/singles.jsonl", "w", encoding="utf-8") as f:
        for t in SINGLES:
            f.write(json.dumps({"text": t, "label": "x"}) + "\n")
    with open(f"{out}/pairs.jsonl", "w", encoding="utf-8") as f:
        for a, b in PAIRS:
            f.write(json.dumps({"text_a": a, "text_b": b, "label": "x"}) + "\n")
    expected = {"singles": [bert_tok.encode(t, vocab) for t in SINGLES],
                "pairs": [bert_tok.encode(a, vocab, b) for a, b in PAIRS],
                "pieces": [bert_tok.tokenize(t, vocab) for t in SINGLES]}
    write(f"{out}/expected_ids.json", json.dumps(expected, ensure_ascii=False, indent=1))
    cased = cased_vocabulary(pieces)
    assert len(cased) == len(pieces) and len(set(cased)) == len(cased)
    cased_ids = {p: i for i, p in enumerate(cased)}
    cased_txt = "\n".join(cased) + "\n"
    write(f"{out}/cased_vocab/vocab.txt", cased_txt)
    write(f"{out}/cased_vocab/tokenizer_config.json",
          json.dumps({"do_lower_case": False, "tokenizer_class": "BertTokenizer"}))
    write(f"{out}/cased_json/tokenizer.json", tokenizer_json(cased, lowercase=False))
    write(f"{out}/cased_bare/vocab.txt", cased_txt)
    write(f"{out}/cased_stripping/vocab.txt", cased_txt)
    write(f"{out}/cased_stripping/tokenizer_config.json",
          json.dumps({"do_lower_case": False, "strip_accents": True}))
    expected_cased = {"singles": [bert_tok.encode(t, cased_ids, lower=False) for t in SINGLES],
                      "pairs": [bert_tok.encode(a, cased_ids, b, lower=False) for a, b in PAIRS]}
    write(f"{out}/expected_ids_cased.json",
          json.dumps(expected_cased, ensure_ascii=False, indent=1))
    for name, over in {"cased_stripping": {"lowercase": False, "strip_accents": True},
                       "strip_accents_false": {"strip_accents": False},
                       "chinese_false": {"handle_chinese_chars": False},
                       "prefix": {"continuing_subword_prefix": "@@"},
                       "max_chars": {"max_input_chars_per_word": 200}}.items():
        write(f"{out}/bad_tokenizer/{name}/tokenizer.json", tokenizer_json(pieces, **over))
    # The tokenizers library writes a missing normalizer or pre-tokenizer as null: none at all
    # (no cleaning, lower-casing or CJK split; no split at whitespace and punctuation).
    for key in ("normalizer", "pre_tokenizer"):
        j = json.loads(tokenizer_json(pieces))
        j[key] = None
        write(f"{out}/bad_tokenizer/{key}_null/tokenizer.json", json.dumps(j))
    # transformers' BertTokenizer arguments that change ids: another unknown piece, no basic
    # tokenizer (no punctuation split); an AddedToken object naming BERT's own piece is fine.
    for name, cfg in {"unk_unused0": {"do_lower_case": True, "unk_token": "[unused0]"},
                      "no_basic": {"do_lower_case": True, "do_basic_tokenize": False},
                      "added_token_ok": {"do_lower_case": True,
                                         "unk_token": {"__type": "AddedToken", "content": "[UNK]",
                                                       "lstrip": False, "rstrip": False}}}.items():
        write(f"{out}/bad_config/{name}/vocab.txt", "\n".join(pieces) + "\n")
        write(f"{out}/bad_config/{name}/tokenizer_config.json", json.dumps(cfg))

    # ---- the BiGS, MLM and classification, in three formats, with the reference's logits
    batches = {k: batch(rng, V, L, lengths) for k, (L, lengths) in BATCHES.items()}
    for kind in ("mlm", "cls"):
        classification = kind == "cls"
        sd = random_bigs(rng, V, classification)
        config = config_json(V, classification)
        for fmt, name in (("pytorch", "pytorch_model.bin"), ("safetensors", "model.safetensors"),
                          ("flax", "flax_model.msgpack")):
            d = f"{out}/bigs_{kind}_{fmt}"
            write(f"{d}/config.json", json.dumps(config, indent=2))
            if fmt == "pytorch":
                buf = io.BytesIO()
                torch.save(collections.OrderedDict((k, torch.from_numpy(v)) for k, v in sd.items()), buf)
                write(f"{d}/{name}", buf.getvalue())
            elif fmt == "safetensors":  # as transformers saves it: the tied decoder left out
                write(f"{d}/{name}", safetensors_bytes(collections.OrderedDict(
                    (k, v) for k, v in sd.items() if not k.startswith("cls.predictions.decoder"))))
            else:
                write(f"{d}/{name}", mp(flax_tree(flax_names(sd))))
            # vocab.txt beside the PyTorch and Flax files, tokenizer.json beside safetensors
            if fmt == "safetensors":
                write(f"{d}/tokenizer.json", tokenizer_json(pieces))
            else:
                write(f"{d}/vocab.txt", vocab_txt)
        # hidden_act "gelu_new": the release's MLM transform would be the tanh gelu (refused with
        # an MLM head); a classifier does not use it (imports, same logits)
        write(f"{out}/config_{kind}_gelu_new.json",
              json.dumps({**config, "hidden_act": "gelu_new"}, indent=2))
        ref = bigs_published.as_float64({k: torch.from_numpy(v) for k, v in sd.items()})
        for bname, (ids, types, mask) in batches.items():
            t_ids, t_types, t_mask = (torch.from_numpy(x) for x in (ids, types, mask))
            with torch.no_grad():
                logits = (bigs_published.classification_logits(ref, config, t_ids, t_types, t_mask)
                          if classification else
                          bigs_published.mlm_logits(ref, config, t_ids, t_types))
            with h5py.File(f"{out}/bigs_{kind}_{bname}_expected.h5", "w") as h:
                h["input_ids"] = ids.astype(np.int32)
                h["token_type_ids"] = types.astype(np.int32)
                h["lengths"] = mask.sum(1).astype(np.int32)
                h["logits"] = logits.numpy()
        if classification:
            # pooler_type as the release's pooler reads it: "mean" is the mean of every position
            # (padding included, rows of Lmax), "first" and "cls" the non-padding mean (the
            # release has no first-token pooler).
            for ptype in ("mean", "first", "cls"):
                write(f"{out}/config_cls_pooler_{ptype}.json",
                      json.dumps({**config, "pooler_type": ptype}, indent=2))
            ids, types, mask = batches["full"]
            with torch.no_grad():
                logits = bigs_published.classification_logits(
                    ref, {**config, "pooler_type": "mean"}, *(torch.from_numpy(x) for x in
                                                             (ids, types, mask)))
            with h5py.File(f"{out}/bigs_cls_full_mean_expected.h5", "w") as h:
                h["input_ids"] = ids.astype(np.int32)
                h["token_type_ids"] = types.astype(np.int32)
                h["lengths"] = mask.sum(1).astype(np.int32)
                h["logits"] = logits.numpy()


if __name__ == "__main__":
    main()
