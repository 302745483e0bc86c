#!/usr/bin/env python3
"""Real Hugging Face BERT checkpoints against `routescope-cli import` (issue 25: the official key
sets). Runs where `transformers` is installed (the GPU machine; Debian has no transformers), so the
key sets come from the library itself, not from reading its code:

    python3 tests/io/hf_real_checkpoints.py --cli build-gpu/bin/routescope-cli --out OUT/hf

For BertForPreTraining, BertForMaskedLM and BertForSequenceClassification (a tiny BertConfig) it
saves each model with `save_pretrained` as pytorch_model.bin (safe_serialization=False),
model.safetensors and, through FlaxBert*.from_pretrained(from_pt=True), flax_model.msgpack; writes
each state_dict's key set with shapes and dtypes to OUT/keys/<class>.<layout>.json (the fixtures
tests/io/fixtures/hf_bert_keys/ are copied from there); imports every directory with the CLI and
records the exit code and the notes (the skipped tensors); imports BertForMaskedLM saved sharded
(max_shard_size="20KB": an index and its shards) in each layout, which must give the unsharded
import's parameters exactly; then imports a safetensors file with one
unknown tensor added, which must be refused naming it; and, for BertForMaskedLM, compares the
engine's last hidden state (`routescope-cli dump`) with transformers' on the same tokens; and a
cased BERT's tokenizer files (BertTokenizerFast, do_lower_case false) import as wordpiece_cased
and give transformers' input_ids.

Prints one line per case (PASS/FAIL) and a summary JSON line; exit 0 when every case passed, 1
otherwise, 3 when transformers (or flax for the Flax layout, reported as SKIP) is missing.
"""
import argparse
import json
import os
import subprocess
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        import torch
        import transformers
        from transformers import BertConfig
    except ImportError as e:
        print(f"hf_real_checkpoints.py: needs transformers and torch: {e}", file=sys.stderr)
        return 3
    try:
        import flax  # noqa: F401
        have_flax = True
    except ImportError:
        have_flax = False
    os.makedirs(os.path.join(a.out, "keys"), exist_ok=True)
    torch.manual_seed(0)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"tok{i}" for i in range(94)]
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=37, max_position_embeddings=64,
                     type_vocab_size=2, num_labels=3)
    classes = ["BertForPreTraining", "BertForMaskedLM", "BertForSequenceClassification"]
    results = []

    def case(name, ok, detail):
        results.append({"case": name, "ok": bool(ok), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)

    def keys_of(state, path):
        with open(path, "w") as f:
            json.dump({k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in state.items()},
                      f, indent=1, sort_keys=True)

    def run_import(src, dst, extra=()):
        p = subprocess.run([a.cli, "import", src, "--out", dst, *extra], capture_output=True,
                           text=True)
        return p.returncode, (p.stdout + p.stderr).strip()

    for cls_name in classes:
        cls = getattr(transformers, cls_name)
        model = cls(cfg).eval()
        base = os.path.join(a.out, cls_name)
        layouts = {}
        for layout, safe in (("pytorch", False), ("safetensors", True)):
            d = os.path.join(base, layout)
            model.save_pretrained(d, safe_serialization=safe)
            with open(os.path.join(d, "vocab.txt"), "w") as f:
                f.write("\n".join(vocab) + "\n")
            layouts[layout] = d
        keys_of(model.state_dict(), os.path.join(a.out, "keys", f"{cls_name}.pytorch.json"))
        if have_flax:
            try:
                fcls = getattr(transformers, "Flax" + cls_name)
                fmodel = fcls.from_pretrained(layouts["pytorch"], from_pt=True)
                d = os.path.join(base, "flax")
                fmodel.save_pretrained(d)
                with open(os.path.join(d, "vocab.txt"), "w") as f:
                    f.write("\n".join(vocab) + "\n")
                layouts["flax"] = d
                from flax.traverse_util import flatten_dict
                flat = flatten_dict(fmodel.params, sep="/")
                with open(os.path.join(a.out, "keys", f"{cls_name}.flax.json"), "w") as f:
                    json.dump({k: {"shape": list(v.shape), "dtype": str(v.dtype)}
                               for k, v in flat.items()}, f, indent=1, sort_keys=True)
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                case(f"{cls_name} flax save", False, f"{type(e).__name__}: {e}")
        else:
            print(f"SKIP {cls_name} flax: flax is not installed", flush=True)
        for layout, d in layouts.items():
            code, text = run_import(d, os.path.join(base, f"{layout}.ckpt.h5"))
            case(f"import {cls_name} {layout}", code == 0, f"exit {code}: {text[-600:]}")

    # Sharded: save_pretrained past max_shard_size writes <weights>.index.json beside the shards;
    # each layout imports to exactly the unsharded file's parameters.
    try:
        import h5py
        import numpy as np
        mlm_base = os.path.join(a.out, "BertForMaskedLM")
        model = transformers.BertForMaskedLM.from_pretrained(os.path.join(mlm_base, "pytorch"))
        sharded = {}
        for layout, safe in (("pytorch", False), ("safetensors", True)):
            d = os.path.join(mlm_base, layout + "-sharded")
            model.save_pretrained(d, safe_serialization=safe, max_shard_size="20KB")
            sharded[layout] = d
        if have_flax and os.path.isdir(os.path.join(mlm_base, "flax")):
            fmodel = transformers.FlaxBertForMaskedLM.from_pretrained(os.path.join(mlm_base, "flax"))
            d = os.path.join(mlm_base, "flax-sharded")
            fmodel.save_pretrained(d, max_shard_size="20KB")
            sharded["flax"] = d
        # torch.save's legacy format, as transformers' files of 2018–2020 are.
        d = os.path.join(mlm_base, "pytorch-legacy")
        os.makedirs(d, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(d, "pytorch_model.bin"),
                   _use_new_zipfile_serialization=False)
        model.config.to_json_file(os.path.join(d, "config.json"))
        sharded["pytorch-legacy"] = d
        for layout, d in sharded.items():
            with open(os.path.join(d, "vocab.txt"), "w") as f:
                f.write("\n".join(vocab) + "\n")
            shards = sorted(f for f in os.listdir(d) if "-of-" in f)
            out = os.path.join(mlm_base, f"{layout}-imported.ckpt.h5")
            code, text = run_import(d, out)
            detail = f"{len(shards)} shards; exit {code}: {text[-400:]}"
            same = False
            if code == 0:
                with h5py.File(out, "r") as g, \
                        h5py.File(os.path.join(mlm_base, f"{layout.split('-')[0]}.ckpt.h5"),
                                  "r") as w:
                    names = sorted(w["params"].keys())
                    same = names == sorted(g["params"].keys()) and all(
                        np.array_equal(g["params"][k][()], w["params"][k][()]) for k in names)
                    detail += f"; {len(names)} parameters equal to the unsharded import: {same}"
            case(f"import BertForMaskedLM {layout}" + ("" if "legacy" in layout else " sharded"),
                 code == 0 and same and (len(shards) > 1 or "legacy" in layout), detail)
    except Exception as e:  # noqa: BLE001
        case("sharded imports", False, f"{type(e).__name__}: {e}")

    # BertModel (the encoder alone, no prefix, no head) imports as an encoder whose parameters
    # are BertForMaskedLM's encoder: saved from that model's .bert, compared by name.
    try:
        import h5py
        import numpy as np
        mlm_base = os.path.join(a.out, "BertForMaskedLM")
        bert = transformers.BertForMaskedLM.from_pretrained(os.path.join(mlm_base, "pytorch")).bert
        d = os.path.join(a.out, "BertModel", "safetensors")
        bert.save_pretrained(d)
        with open(os.path.join(d, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
        out = os.path.join(a.out, "BertModel", "safetensors.ckpt.h5")
        code, text = run_import(d, out)
        same = False
        if code == 0:
            with h5py.File(out, "r") as g, \
                    h5py.File(os.path.join(mlm_base, "safetensors.ckpt.h5"), "r") as w:
                names = sorted(g["params"].keys())
                same = all(np.array_equal(g["params"][k][()], w["params"][k][()]) for k in names)
                same = same and not any(k.startswith("mlm.") for k in names)
        case("import BertModel as an encoder", code == 0 and same and "an encoder" in text,
             f"exit {code}; encoder parameters equal to BertForMaskedLM's: {same}; {text[-300:]}")
    except Exception as e:  # noqa: BLE001
        case("import BertModel as an encoder", False, f"{type(e).__name__}: {e}")

    # A binary classifier with transformers' default label names: its config.json has no id2label
    # (written as a diff against the defaults). It imports with labels 0/1 and `eval --data`
    # scores an integer-labelled TSV.
    try:
        binary = transformers.BertForSequenceClassification(
            BertConfig(**{**cfg.to_dict(), "num_labels": 2, "id2label": {0: "LABEL_0", 1: "LABEL_1"},
                          "label2id": {"LABEL_0": 0, "LABEL_1": 1}})).eval()
        d = os.path.join(a.out, "binary", "safetensors")
        binary.save_pretrained(d)
        with open(os.path.join(d, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
        with open(os.path.join(d, "config.json")) as f:
            has_names = "id2label" in json.load(f)
        out = os.path.join(a.out, "binary", "model.ckpt.h5")
        code, text = run_import(d, out)
        tsv = os.path.join(a.out, "binary", "dev.tsv")
        with open(tsv, "w") as f:
            f.write("sentence\tlabel\ntok1 tok2\t1\ntok3\t0\n")
        p = subprocess.run([a.cli, "eval", "--checkpoint", out, "--data", tsv, "--out",
                            os.path.join(a.out, "binary", "preds.jsonl")],
                           capture_output=True, text=True)
        case("binary classifier with default labels", code == 0 and p.returncode == 0,
             f"config.json id2label present: {has_names}; import exit {code}; eval exit "
             f"{p.returncode}: {(text + p.stderr)[-300:]}")
    except Exception as e:  # noqa: BLE001
        case("binary classifier with default labels", False, f"{type(e).__name__}: {e}")

    # Heads the engine does not have are refused by name, not imported as something else: a causal
    # decoder, multiple choice (one output row), token classification, question answering.
    for cls_name, needle in (("BertLMHeadModel", "is_decoder"),
                             ("BertForMultipleChoice", "BertForMultipleChoice"),
                             ("BertForTokenClassification", "BertForTokenClassification"),
                             ("BertForQuestionAnswering", "BertForQuestionAnswering")):
        try:
            kw = {"is_decoder": True} if cls_name == "BertLMHeadModel" else {}
            model = getattr(transformers, cls_name)(BertConfig(**{**cfg.to_dict(), **kw})).eval()
            d = os.path.join(a.out, "refused", cls_name)
            model.save_pretrained(d)
            with open(os.path.join(d, "vocab.txt"), "w") as f:
                f.write("\n".join(vocab) + "\n")
            code, text = run_import(d, os.path.join(d, "out.ckpt.h5"))
            case(f"{cls_name} refused", code == 2 and needle in text, f"exit {code}: {text[-300:]}")
        except Exception as e:  # noqa: BLE001
            case(f"{cls_name} refused", False, f"{type(e).__name__}: {e}")

    # An unknown tensor is still refused, naming it.
    try:
        from safetensors.torch import load_file, save_file
        src = os.path.join(a.out, "BertForMaskedLM", "safetensors")
        bad = os.path.join(a.out, "unknown-tensor")
        os.makedirs(bad, exist_ok=True)
        tensors = load_file(os.path.join(src, "model.safetensors"))
        tensors["bert.encoder.layer.0.surprise.weight"] = torch.zeros(4, 4)
        save_file(tensors, os.path.join(bad, "model.safetensors"), metadata={"format": "pt"})
        for name in ("config.json", "vocab.txt"):
            with open(os.path.join(src, name)) as f, open(os.path.join(bad, name), "w") as g:
                g.write(f.read())
        code, text = run_import(bad, os.path.join(bad, "out.ckpt.h5"))
        case("unknown tensor refused", code != 0 and "surprise" in text, f"exit {code}: {text[-400:]}")
    except ImportError as e:
        case("unknown tensor refused", False, f"safetensors missing: {e}")

    # The imported BertForMaskedLM computes what transformers computes: last hidden state.
    try:
        import h5py
        import numpy as np
        mlm_dir = os.path.join(a.out, "BertForMaskedLM")
        ckpt = os.path.join(mlm_dir, "safetensors.ckpt.h5")
        ids = [2] + [5 + (7 * i) % 90 for i in range(14)] + [3]
        corpus = os.path.join(a.out, "tokens.jsonl")
        with open(corpus, "w") as f:
            f.write(json.dumps({"text": " ".join(vocab[i] for i in ids[1:-1]), "label": 0}) + "\n")
        dump = os.path.join(a.out, "mlm.dump.h5")
        p = subprocess.run([a.cli, "dump", "--checkpoint", ckpt, "--data", corpus, "--out", dump,
                            "--length", str(len(ids))], capture_output=True, text=True)
        if p.returncode != 0:
            case("BertForMaskedLM hidden states", False, f"dump exit {p.returncode}: "
                 f"{(p.stdout + p.stderr)[-600:]}")
        else:
            with h5py.File(dump, "r") as f:
                layers = sorted(int(k) for k in f["layers"].keys())
                n = int(f["data"]["lengths"][0])
                our_ids = [int(t) for t in f["data"]["tokens"][0][:n]]
                ours = np.asarray(f["layers"][str(layers[-1])]["hidden"][0][:n], dtype=np.float64)
            model = transformers.BertForMaskedLM.from_pretrained(os.path.join(mlm_dir, "pytorch")).eval()
            with torch.no_grad():
                ref = model.bert(torch.tensor([our_ids])).last_hidden_state[0].double().numpy()
            err = float(np.max(np.abs(ours - ref)) / max(1e-12, np.max(np.abs(ref))))
            case("BertForMaskedLM hidden states", err < 1e-4 and our_ids == ids,
                 f"ids {our_ids}; max |engine − transformers| / max |transformers| = {err:.2e} "
                 f"over {n} tokens")
    except Exception as e:  # noqa: BLE001
        case("BertForMaskedLM hidden states", False, f"{type(e).__name__}: {e}")

    # A cased BERT (bert-base-cased's tokenizer files): BertTokenizerFast(do_lower_case=False)
    # saved beside the model (tokenizer_config.json, tokenizer.json, vocab.txt) imports as
    # wordpiece_cased, and the dump's tokens are transformers' input_ids for texts with capitals,
    # accents, punctuation and CJK; with vocab.txt alone (the tokenizer files removed) the import
    # reads it uncased and says so.
    try:
        import h5py
        texts = ["Café au lait, DON'T stop: naïve Ångström!", "The U.S.A. and Straße 中文 x",
                 "unknown Wörds HeLLo yoU"]
        cased_vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(
            "Café au lait , DON ' T stop : naïve Å ##ng ##st ##röm ! The U . S A and Straße 中 文 x "
            "unknown W ##ö ##rds He ##LL ##o yo ##U don t caf ##é the".split()))
        cased_vocab += [f"tok{i}" for i in range(len(vocab) - len(cased_vocab))]
        d = os.path.join(a.out, "BertCased")
        transformers.BertForMaskedLM(cfg).eval().save_pretrained(d, safe_serialization=True)
        with open(os.path.join(d, "vocab.txt"), "w") as f:
            f.write("\n".join(cased_vocab) + "\n")
        tok = transformers.BertTokenizerFast(os.path.join(d, "vocab.txt"), do_lower_case=False)
        tok.save_pretrained(d)
        ckpt = os.path.join(d, "cased.ckpt.h5")
        code, text = run_import(d, ckpt)
        corpus = os.path.join(d, "texts.jsonl")
        with open(corpus, "w") as f:
            for t in texts:
                f.write(json.dumps({"text": t, "label": 0}) + "\n")
        dump = os.path.join(d, "cased.dump.h5")
        p = subprocess.run([a.cli, "dump", "--checkpoint", ckpt, "--data", corpus, "--out", dump,
                            "--length", "48"], capture_output=True, text=True) if code == 0 else None
        ok, detail = False, f"import exit {code}: {text[-300:]}"
        if p is not None and p.returncode != 0:
            detail = f"dump exit {p.returncode}: {(p.stdout + p.stderr)[-400:]}"
        elif p is not None:
            with h5py.File(dump, "r") as f:
                ours = [[int(t) for t in f["data"]["tokens"][i][:int(f["data"]["lengths"][i])]]
                        for i in range(len(texts))]
            want = [tok(t)["input_ids"] for t in texts]
            with h5py.File(ckpt, "r") as f:
                kind = f["tokenizer"].attrs["kind"]
                kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            ok = ours == want and kind == "wordpiece_cased"
            detail = f"kind {kind}; ids equal to BertTokenizerFast(do_lower_case=False): {ours == want}"
            if ours != want:
                detail += f"; ours {ours}; transformers {want}"
        case("cased BERT tokenizer", ok, detail)
        for name in ("tokenizer_config.json", "tokenizer.json", "special_tokens_map.json"):
            if os.path.exists(os.path.join(d, name)):
                os.remove(os.path.join(d, name))
        code, text = run_import(d, os.path.join(d, "bare.ckpt.h5"))
        case("cased vocab.txt alone: uncased with a note", code == 0 and "capital letters" in text,
             f"exit {code}: {text[-300:]}")
    except Exception as e:  # noqa: BLE001
        case("cased BERT tokenizer", False, f"{type(e).__name__}: {e}")

    failed = [r for r in results if not r["ok"]]
    print(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__,
                      "flax": have_flax, "passed": len(results) - len(failed),
                      "failed": len(failed)}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
