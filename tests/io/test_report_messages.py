#!/usr/bin/python3
"""Messages about files written by other people's code say what is wrong (the format probe of
session 31 wrote dumps and checkpoints with h5py from docs/formats alone). Each file is made with
h5py from a valid one the CLI wrote; the expected wording follows docs/formats/README.md's report
form, "PATH: expected WHAT, found WHAT".

- an empty /layers/<l> group (its `hidden` left out) was "expected a dataset, found another kind
  of object", where nothing is there;
- a /train attribute the loader refuses was "expected a checkpoint every command can load, found
  expected 2 integers [seed, step], found ...";
- a task checkpoint whose vocabulary has the task's size but other pieces was "its vocabulary of
  22 ids is not the task's 22", which names no difference;
- an evaluation whose forward pass overflows (a finite, huge weight) was a score, "loss": null and
  exact_match 0.0 with exit 0;
- probe M: validate accepted a data.task no command loads and a negative /train/adam_v (the resume
  then blamed train.lr for a NaN loss); analyze kernels called a string format_version "missing";
  validate refused every ten-digit layer index, though n_layers may be 2^31 - 1;
- probe W: inspect called a bfloat16 dataset "float16", and a dangling soft link where a group
  belongs was "expected a group, found a dataset".

    test_report_messages.py --cli routescope-cli --work DIR
"""
import os
import shutil
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    t = suite_from_args()
    run = t.path("run")
    t.ok(t.run("train", "--config", os.path.join(SOURCE, "resources/configs/bigs-tiny.json"),
               "--out", run, "--set", "train.steps=2", "--set", "data.task=induction",
               "--set", "model.d_model=32", "--set", "model.ssm.n_modes=8", "--threads", "1"))
    ckpt = os.path.join(run, "model.ckpt.h5")

    def edited_copy(name, edit):
        """A copy of the run's checkpoint named `name`, changed by edit(h5py file)."""
        path = t.path(name)
        shutil.copy(ckpt, path)
        with h5py.File(path, "r+") as f:
            edit(f)
        return path

    def validate_says(path, said, not_said):
        """validate finds `path` invalid (exit 1), saying `said` and not `not_said`."""
        r = t.run("validate", path)
        text = r.stdout + r.stderr
        assert r.returncode == 1, (r.returncode, text[-400:])
        assert all(s in text for s in said), text[-600:]
        assert not_said not in text, text[-600:]

    def an_empty_layer_group_is_said_to_miss_its_hidden():
        dump = t.path("empty-layer.dump.h5")
        t.ok(t.run("sample-dump", "--out", dump, "--examples", "8", "--layers", "2"))
        with h5py.File(dump, "r+") as f:
            del f["layers/1/hidden"]
            assert "layers/1" in f and len(f["layers/1"]) >= 0
        validate_says(dump, ("/layers/1/hidden", "expected a dataset, found nothing"),
                      "another kind of object")
    t.case("an empty /layers/<l> group: its hidden is said to be missing",
           an_empty_layer_group_is_said_to_miss_its_hidden)

    def a_train_attribute_the_loader_refuses_reads_as_expected_found():
        def three_integers(f):
            assert "train" in f, list(f)
            if "rng_state" in f["train"].attrs:
                del f["train"].attrs["rng_state"]
            f["train"].attrs.create("rng_state", np.array([1, 2, 3], dtype=np.uint64))
        validate_says(edited_copy("rng.ckpt.h5", three_integers),
                      ("rng_state", "expected 2 integers"), "every command can load, found expected")
    t.case("a /train attribute the loader refuses is said as expected/found",
           a_train_attribute_the_loader_refuses_reads_as_expected_found)

    def a_task_vocabulary_of_the_right_size_names_the_first_difference():
        lines = []  # the checkpoint's vocabulary as written, two pieces swapped

        def swap_two_pieces(f):
            lines[:] = bytes(f["tokenizer/model"][()]).decode("utf-8").split("\n")
            # Two pieces past the specials change places: same size, other vocabulary.
            i, j = len(lines) - 3, len(lines) - 2
            assert lines[i] and lines[j], lines[-4:]
            lines[i], lines[j] = lines[j], lines[i]
            swapped = "\n".join(lines).encode("utf-8")
            attrs = dict(f["tokenizer/model"].attrs)
            del f["tokenizer/model"]
            ds = f["tokenizer"].create_dataset("model", data=np.frombuffer(swapped, np.uint8))
            for k, v in attrs.items():
                ds.attrs[k] = v
        other = edited_copy("vocab.ckpt.h5", swap_two_pieces)
        i, j = len(lines) - 3, len(lines) - 2
        r = t.run("dump", "--checkpoint", other, "--task", "induction", "--examples", "4",
                  "--out", t.path("never.dump.h5"), "--threads", "1")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert f"id {i}" in r.stderr and lines[i] in r.stderr and lines[j] in r.stderr, \
            r.stderr[-600:]
        assert not os.path.exists(t.path("never.dump.h5"))
    t.case("a task vocabulary of the task's size but other pieces names where they part",
           a_task_vocabulary_of_the_right_size_names_the_first_difference)

    def an_evaluation_whose_loss_overflows_is_an_error_not_a_score():
        # A finite but huge weight (validate accepts it) makes every logit NaN: eval reported
        # "loss": null and exact_match 0.0 with exit 0, every prediction the first id, while dump
        # and train refuse the same checkpoint with exit 3 (session 32's probe).
        def huge_c(f):
            c = f["params/layers.0.ssm_forward.C"]
            c[...] = np.full(c.shape, 3e38, np.float32)
        huge = edited_copy("huge.ckpt.h5", huge_c)
        r = t.run("validate", huge)
        assert r.returncode == 0, (r.returncode, r.stdout + r.stderr)
        preds = t.path("huge-preds.jsonl")
        r = t.run("eval", "--checkpoint", huge, "--out", preds, "--threads", "1")
        assert r.returncode == 3, (r.returncode, r.stdout[-300:], r.stderr[-400:])
        assert huge in r.stderr and "not finite" in r.stderr, r.stderr[-400:]
        assert not os.path.exists(preds) and not os.path.exists(
            t.path("huge-preds.summary.json")), os.listdir(t.path(""))
    t.case("an evaluation whose loss overflows is exit 3 naming the checkpoint, nothing written",
           an_evaluation_whose_loss_overflows_is_an_error_not_a_score)

    def dump_seed_zero_is_a_seed():
        # --seed 0 was taken for "not given" (the checkpoint's seed, 1), though 0 is a valid
        # data.task_params.seed (docs/config.md): three dumps of the task's valid split.
        def tokens(*seed):
            out = t.path("seed%s.dump.h5" % "-".join(seed or ("default",)))
            t.ok(t.run("dump", "--checkpoint", ckpt, "--task", "induction", "--examples", "6",
                       "--layers", "0", "--out", out, "--threads", "1",
                       *(("--seed",) + seed if seed else ())))
            with h5py.File(out, "r") as f:
                return f["data/tokens"][()]
        default, one, zero = tokens(), tokens("1"), tokens("0")
        assert np.array_equal(default, one), "the checkpoint's seed is 1"
        assert not np.array_equal(zero, one), "--seed 0 gave the examples of seed 1"
    t.case("dump --seed 0 is the task's seed 0, not the checkpoint's", dump_seed_zero_is_a_seed)

    def options_are_named_before_any_work():
        # eval --doc-sep para named the configuration key, not the option typed; tokenizer train
        # --out DIR trained to the end, then could not rename its model onto the directory.
        r = t.run("eval", "--checkpoint", ckpt, "--data", t.path("none.txt"), "--doc-sep", "para")
        assert r.returncode == 2 and "--doc-sep" in r.stderr, (r.returncode, r.stderr)
        corpus = t.path("corpus.txt")
        with open(corpus, "w") as f:
            f.write("".join(f"line {i} of a small corpus\n" for i in range(200)))
        os.makedirs(t.path("outdir"), exist_ok=True)
        r = t.run("tokenizer", "train", "--corpus", corpus, "--out", t.path("outdir"),
                  "--vocab-size", "50")
        assert r.returncode == 2 and "directory" in r.stderr, (r.returncode, r.stderr)
        assert os.listdir(t.path("outdir")) == [], os.listdir(t.path("outdir"))
    t.case("eval --doc-sep and tokenizer train --out are checked before any work",
           options_are_named_before_any_work)

    def pretraining_without_an_mlm_head_is_refused_before_the_run():
        # It printed the start record and failed at the first batch (session 32's docs probe).
        out = t.path("no-head")
        r = t.run("train", "--config", os.path.join(SOURCE, "resources/configs/bigs-tiny.json"),
                  "--out", out, "--set", "model.mlm_head=false", "--set", "model.n_labels=2",
                  "--set", "train.steps=2", "--threads", "1")
        assert r.returncode == 2 and "model.mlm_head" in r.stderr, (r.returncode, r.stderr)
        assert '"start"' not in r.stdout, r.stdout[-300:]
        assert not os.path.exists(os.path.join(out, "model.ckpt.h5"))
    t.case("pretraining without an MLM head is refused before the run",
           pretraining_without_an_mlm_head_is_refused_before_the_run)

    # ---- probe M: what validate accepts, every command loads; what a reader refuses, it names.
    def an_unknown_task_is_refused_by_validate():
        # docs/formats/checkpoint.md: a checkpoint validate accepts is one every command loads,
        # and eval, dump and train --resume refuse a data.task that is not a built-in task.
        import json

        def nosuch(f):
            c = json.loads(f["config"].attrs["json"])
            c["data"]["task"] = "nosuch"
            f["config"].attrs["json"] = json.dumps(c)
        bad = edited_copy("task.ckpt.h5", nosuch)
        validate_says(bad, ("/config", "data.task", "induction", "'nosuch'"),
                      "every command can load")
        r = t.run("dump", "--checkpoint", bad, "--examples", "2", "--out", t.path("task.dump.h5"))
        assert r.returncode in (1, 2) and "nosuch" in r.stderr, (r.returncode, r.stderr)
        assert not os.path.exists(t.path("task.dump.h5"))
    t.case("a checkpoint whose data.task is no built-in task is invalid (validate)",
           an_unknown_task_is_refused_by_validate)

    def a_negative_second_moment_is_refused_by_validate_and_resume():
        # AdamW's second moment is an average of squares, never negative (docs/formats/
        # checkpoint.md, /train): validate accepted -1 and the resume stopped on a NaN loss
        # blaming train.lr (exit 3).
        name = "train/adam_v/layers.0.dv.weight"

        def negative(f):
            v = f[name]
            v[...] = np.zeros(v.shape, v.dtype)
            v[(0,) * len(v.shape)] = -1.0
        validate_says(edited_copy("adam_v.ckpt.h5", negative),
                      ("/" + name, "found -1", "1 negative"), "every command can load")
        copy = t.path("negative-run")
        shutil.copytree(run, copy)
        with h5py.File(os.path.join(copy, "model.ckpt.h5"), "r+") as f:
            negative(f)
        before = open(os.path.join(copy, "model.ckpt.h5"), "rb").read()
        # the input check (validate's verdict, exit 1), then the loader itself (--no-check:
        # a file that breaks its format, exit 2); both name the dataset, neither trains
        for extra, code in (((), 1), (("--no-check",), 2)):
            r = t.run("train", "--resume", copy, "--set", "train.steps=4", "--threads", "1",
                      *extra)
            assert r.returncode == code, (extra, r.returncode, r.stderr[-500:])
            assert "/" + name in r.stderr and "NaN" not in r.stderr, (extra, r.stderr[-500:])
            assert open(os.path.join(copy, "model.ckpt.h5"), "rb").read() == before, extra
    t.case("a negative /train/adam_v value is refused by validate and train --resume",
           a_negative_second_moment_is_refused_by_validate_and_resume)

    def a_format_version_of_another_type_is_not_called_missing():
        # The string "1" is present, of the wrong type (docs/formats/checkpoint.md: an
        # integer): analyze kernels --checkpoint said "format_version (missing)".
        for label, edit, said in (
                ("string", lambda f: f.attrs.__setitem__("format_version", "1"),
                 ("format_version", "string", "not an integer")),
                ("float", lambda f: f.attrs.__setitem__("format_version", 1.0),
                 ("format_version", "float64", "not an integer")),
                ("missing", lambda f: f.attrs.__delitem__("format_version"),
                 ("format_version", "missing"))):
            path = edited_copy(f"version-{label}.ckpt.h5", edit)
            r = t.run("analyze", "kernels", "--checkpoint", path, "--length", "16",
                      "--out", t.path("k.json"))
            assert r.returncode == 2, (label, r.returncode, r.stderr)
            assert path in r.stderr and all(s in r.stderr for s in said), (label, r.stderr)
            if label != "missing":
                assert "missing" not in r.stderr, (label, r.stderr)
    t.case("analyze kernels names a format_version of another type, not 'missing'",
           a_format_version_of_another_type_is_not_called_missing)

    def ten_digit_layer_indices_are_layer_indices():
        # docs/formats/dump.md: n_layers is 0 … 2^31 − 1, <l> decimal without leading zeros
        # between 0 and n_layers; validate refused every ten-digit name as not such an integer.
        dump = t.path("digits.dump.h5")
        t.ok(t.run("sample-dump", "--out", dump, "--examples", "4", "--length", "8",
                   "--d-model", "4", "--layers", "2"))

        def renamed(name, n_layers, new):
            path = t.path(name)
            shutil.copy(dump, path)
            with h5py.File(path, "r+") as f:
                f["model"].attrs["n_layers"] = n_layers
                for group in ("layers", "kernels"):
                    if f"{group}/2" in f:
                        f.move(f"{group}/2", f"{group}/{new}")
            return path
        r = t.run("validate", renamed("ten.dump.h5", 2**31 - 1, "1000000000"))
        assert r.returncode == 0, (r.returncode, r.stdout + r.stderr)
        r = t.run("validate", renamed("last.dump.h5", 2**31 - 1, str(2**31 - 1)))
        assert r.returncode == 0, (r.returncode, r.stdout + r.stderr)
        for n_layers, new in ((1000000000, "1000000001"), (2**31 - 1, str(2**31)),
                              (2, "9" * 25)):
            validate_says(renamed("beyond.dump.h5", n_layers, new),
                          (f"/layers/{new}: expected a layer index in 0..{n_layers} "
                           f"(/model n_layers), found {new}",), "without leading zeros")
    t.case("a ten-digit layer index up to n_layers is valid, beyond it is said so",
           ten_digit_layer_indices_are_layer_indices)

    def float_layouts_and_dangling_links_are_named_as_they_are():
        # docs/formats/dump.md accepts a 2-byte float in another layout, bfloat16 among them:
        # inspect called it "float16" (IEEE half), naming the size, not the layout. A dangling
        # soft link where a group is required was "expected a group, found a dataset".
        dump = t.path("layouts.dump.h5")
        t.ok(t.run("sample-dump", "--out", dump, "--examples", "4", "--length", "8",
                   "--d-model", "4", "--layers", "2"))
        bf16 = t.path("bf16.dump.h5")
        shutil.copy(dump, bf16)
        with h5py.File(bf16, "r+") as f:
            x = f["layers/1/hidden"][...].astype(np.float32)
            del f["layers/1/hidden"]
            # bfloat16: sign bit 15, 8 exponent bits at 7..14 with bias 127, 7 mantissa bits
            # (the top half of a float32)
            bt = h5py.h5t.IEEE_F32LE.copy()
            bt.set_fields(15, 7, 8, 0, 7)
            bt.set_offset(0)
            bt.set_size(2)
            bt.set_ebias(127)
            ds = h5py.h5d.create(f.id, b"layers/1/hidden", bt, h5py.h5s.create_simple(x.shape))
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, (x.view(np.uint32) >> 16).astype(np.uint16),
                     mtype=bt)
        t.ok(t.run("validate", bf16))
        r = t.run("inspect", bf16)
        t.ok(r)
        lines = [line for line in r.stdout.splitlines() if "hidden" in line]
        assert any("1: hidden bfloat16 [4, 8, 4]" in line for line in lines), lines
        assert any("0: hidden float32 [4, 8, 4]" in line for line in lines), lines
        # a float64 attribute stored as bfloat16: validate's "found" names the layout too
        gap = t.path("bf16-attr.dump.h5")
        shutil.copy(dump, gap)
        with h5py.File(gap, "r+") as f:
            f.require_group("data/attributes")
            ds = h5py.h5d.create(f.id, b"data/attributes/x", bt, h5py.h5s.create_simple((4,)))
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.full(4, 0x3f80, np.uint16), mtype=bt)
        validate_says(gap, ("/data/attributes/x: expected float64, found bfloat16",),
                      "found float16")
        for where in ("layers", "layers/1"):
            path = t.path("dangling-" + where.replace("/", "-") + ".dump.h5")
            shutil.copy(dump, path)
            with h5py.File(path, "r+") as f:
                del f[where]
                f[where] = h5py.SoftLink("/nowhere")
            said = f"/{where}: expected a group, found a dangling link to /nowhere"
            validate_says(path, (said,), "found a dataset")
            r = t.run("analyze", "anisotropy", "--dump", path, "--out", t.path("a.json"))
            assert r.returncode == 2 and said in r.stderr, (where, r.returncode, r.stderr)
            assert not os.path.exists(t.path("a.json")), where
    t.case("a bfloat16 dataset is named bfloat16, a dangling link where a group belongs as such",
           float_layouts_and_dangling_links_are_named_as_they_are)

    # ---- eval --data: what the per-example form cannot score is exit 2 (docs/cli.md, eval),
    # nothing written: --split (a task's split) beside a file, a file the checkpoint's tokenizer
    # reads as [UNK] only (a task's symbols against English), --out for a checkpoint without a
    # classifier (it read a GLUE file's header and labels as corpus text, exit 0, no --out).
    def eval_data_refusals():
        tiny = os.path.join(SOURCE, "resources/configs/bigs-tiny.json")
        small = ["--set", "model.d_model=16", "--set", "model.ssm.n_modes=8", "--threads", "1"]
        gap = t.path("gap-run")
        t.ok(t.run("train", "--config", tiny, "--out", gap, "--set", "data.task=gap-matching",
                   "--set", "data.task_params.n_train=16", "--set", "data.task_params.n_valid=4",
                   "--set", "data.task_params.n_test=4", "--set", "train.steps=1", *small))
        mlm = t.path("mlm-run")
        t.ok(t.run("train", "--config", tiny, "--out", mlm, "--set", "train.steps=1", *small))
        dev = t.path("sst2-dev.tsv")
        with open(dev, "w") as f:
            f.write("sentence\tlabel\n")
            for i in range(12):
                f.write(f"the film was {'good' if i % 2 else 'dull'} and long \t{i % 2}\n")
        out = t.path("refused.jsonl")
        for args, says in (
                (["--checkpoint", os.path.join(gap, "model.ckpt.h5"), "--split", "test"],
                 "--split test"),
                (["--checkpoint", os.path.join(gap, "model.ckpt.h5")], "every token is [UNK]"),
                (["--checkpoint", os.path.join(mlm, "model.ckpt.h5")], "has no classifier")):
            r = t.run("eval", *args, "--data", dev, "--out", out)
            assert r.returncode == 2 and says in r.stderr, (args, r.returncode, r.stderr)
            assert not os.path.exists(out), args
    t.case("eval --data: --split, an all-[UNK] file and --out without a classifier are exit 2",
           eval_data_refusals)

    # ---- probe Z8: a published-layout BERT whose config.json declares 2^20 embedding rows beside
    # a vocab.txt of 7 pieces: each missing row gets a placeholder piece, and 2^27 of them (a
    # sparse weights file) ran into a bare bad_alloc after 9 GB. Held against the memory the
    # process may use (here a 400 MB ulimit -v): exit 2 naming config.json, vocab_size and the
    # limit, nothing written.
    def placeholder_rows_beyond_memory_are_refused():
        import json
        import resource
        import struct
        rows, d = 1 << 20, 8
        folder = t.path("many-rows")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"architectures": ["BertForMaskedLM"], "model_type": "bert",
                       "vocab_size": rows, "hidden_size": d, "num_hidden_layers": 1,
                       "num_attention_heads": 2, "intermediate_size": 4 * d,
                       "max_position_embeddings": 16, "type_vocab_size": 2,
                       "hidden_act": "gelu", "layer_norm_eps": 1e-12}, f)
        with open(os.path.join(folder, "vocab.txt"), "w") as f:
            f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n")
        shapes = {"bert.embeddings.word_embeddings.weight": [rows, d],
                  "bert.embeddings.position_embeddings.weight": [16, d],
                  "bert.embeddings.token_type_embeddings.weight": [2, d],
                  "bert.embeddings.LayerNorm.weight": [d], "bert.embeddings.LayerNorm.bias": [d]}
        q = "bert.encoder.layer.0."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value",
                  "attention.output.dense"):
            shapes[q + n + ".weight"], shapes[q + n + ".bias"] = [d, d], [d]
        for n in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[q + n + ".weight"], shapes[q + n + ".bias"] = [d], [d]
        shapes[q + "intermediate.dense.weight"] = [4 * d, d]
        shapes[q + "intermediate.dense.bias"] = [4 * d]
        shapes[q + "output.dense.weight"], shapes[q + "output.dense.bias"] = [d, 4 * d], [d]
        shapes["cls.predictions.transform.dense.weight"] = [d, d]
        for n in ("dense.bias", "LayerNorm.weight", "LayerNorm.bias"):
            shapes["cls.predictions.transform." + n] = [d]
        shapes["cls.predictions.bias"] = [rows]
        header, blobs, offset = {}, [], 0
        rng = np.random.default_rng(20)
        for name, shape in shapes.items():
            data = (0.02 * rng.standard_normal(shape)).astype("<f4").tobytes()
            header[name] = {"dtype": "F32", "shape": shape,
                            "data_offsets": [offset, offset + len(data)]}
            offset += len(data)
            blobs.append(data)
        text = json.dumps(header).encode()
        text += b" " * ((8 - len(text) % 8) % 8)
        with open(os.path.join(folder, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
        out = t.path("many-rows.ckpt.h5")

        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20))
        r = t.run("import", folder, "--out", out, preexec=limited)
        assert r.returncode == 2, (r.returncode, r.stderr[-600:])
        assert "config.json: vocab_size 1048576" in r.stderr and "placeholder" in r.stderr and \
            "ulimit -v" in r.stderr and "bad_alloc" not in r.stderr, r.stderr[-600:]
        assert not os.path.exists(out)
    t.case("an import whose vocab_size far exceeds its vocabulary's pieces is refused by memory",
           placeholder_rows_beyond_memory_are_refused)

    # ---- probe Q4: what a checkpoint holds is in it, and what it says of itself is so.
    def a_soft_link_through_an_external_link_is_never_followed():
        # docs/formats/checkpoint.md: a checkpoint holds everything "and nothing outside it";
        # external links are never followed. A direct one was refused, but a soft link whose
        # target crosses one (/params/X -> /store/X, /store an external link to other.h5:/grp)
        # was: validate said valid and dump read the other file's values, --no-check too; a
        # named pipe as the other file blocked validate for good.
        name = "embeddings.word.weight"
        other = t.path("elsewhere.h5")

        def through_external(f):
            values = f["params/" + name][()]
            with h5py.File(other, "w") as g:
                g.create_group("grp").create_dataset(name, data=values)
            del f["params/" + name]
            f["store"] = h5py.ExternalLink(other, "/grp")
            f["params/" + name] = h5py.SoftLink("/store/" + name)
        linked = edited_copy("through-external.ckpt.h5", through_external)
        said = (f"/params/{name} is a soft link to /store/{name}",
                f"/store, an external link to {other}:/grp", "not followed")
        validate_says(linked, said, "(format version")
        corpus = t.path("through-external.txt")
        with open(corpus, "w") as f:
            f.write("abc\n")
        for extra, code in (((), 1), (("--no-check",), 2)):
            out = t.path("through-external.dump.h5")
            r = t.run("dump", "--checkpoint", linked, "--data", corpus, "--out", out,
                      "--layers", "0", "--threads", "1", *extra)
            assert r.returncode == code, (extra, r.returncode, r.stderr[-500:])
            assert all(s in r.stderr for s in said), (extra, r.stderr[-500:])
            assert not os.path.exists(out), extra
        # The other file a named pipe: never opened, so nothing waits on it.
        os.remove(other)
        os.mkfifo(other)
        r = t.run("validate", linked, timeout=60)
        assert r.returncode == 1 and all(s in r.stdout + r.stderr for s in said), \
            (r.returncode, (r.stdout + r.stderr)[-500:])
        os.remove(other)
    t.case("a soft link whose target crosses an external link is refused, never followed",
           a_soft_link_through_an_external_link_is_never_followed)

    def a_parameter_never_written_is_refused_in_any_layout():
        # h5py's create_dataset(name, shape, dtype) without data allocates no contiguous storage:
        # every value reads as the fill value 0, and validate accepted what it refuses chunked
        # ("chunks never written"; docs/formats/dump.md, as checkpoints' sizes are checked).
        name = "embeddings.word.weight"
        for layout in ("contiguous", "chunked"):
            def unwritten(f):
                shape, dtype = f["params/" + name].shape, f["params/" + name].dtype
                del f["params/" + name]
                f["params"].create_dataset(name, shape=shape, dtype=dtype,
                                           chunks=True if layout == "chunked" else None)
                assert f["params/" + name].id.get_storage_size() == 0
            path = edited_copy(f"unwritten-{layout}.ckpt.h5", unwritten)
            said = ("fill values",) if layout == "contiguous" else ()
            validate_says(path, (f"/params/{name}", "never written") + said, "(format version")
    t.case("a parameter whose data were never written is refused, contiguous as chunked",
           a_parameter_never_written_is_refused_in_any_layout)

    def a_nul_inside_a_config_value_is_escaped_not_the_end_of_the_message():
        # The message quoted the value raw and stopped at its NUL: "found model.arch: 'big".
        import json

        def nul_arch(f):
            c = json.loads(f["config"].attrs["json"])
            c["model"]["arch"] = "big\u0000s"
            f["config"].attrs["json"] = json.dumps(c)
        path = edited_copy("nul-arch.ckpt.h5", nul_arch)
        validate_says(path, ("model.arch: 'big\\x00s' is not one of", "bigs"), "'big\n")
    t.case("a NUL inside a /config string value is said as \\x00, with the rest of the message",
           a_nul_inside_a_config_value_is_escaped_not_the_end_of_the_message)

    def an_rng_state_other_than_seed_and_step_is_refused():
        # docs/formats/checkpoint.md: rng_state is [seed, step], "the whole random state"; every
        # draw comes from train.seed and the step, so [999, 7] beside seed S and step N is no
        # state of this run: it resumed exactly as [S, N] did, exit 0.
        import json
        with h5py.File(ckpt, "r") as f:
            seed = json.loads(f["config"].attrs["json"])["train"]["seed"]
            step = int(f["train"].attrs["step"])
        for label, value, dtype in (("unsigned", [999, 7], np.uint64),
                                    ("seed", [seed + 1, step], np.uint64),
                                    ("step", [seed, step + 1], np.int64),
                                    ("negative", [-1, step], np.int64)):
            def other_state(f):
                del f["train"].attrs["rng_state"]
                f["train"].attrs.create("rng_state", np.array(value, dtype=dtype))
            path = edited_copy(f"rng-{label}.ckpt.h5", other_state)
            validate_says(path, ("/train attr rng_state",
                                 f"[seed, step] = [{seed}, {step}]",
                                 f"found [{value[0]}, {value[1]}]"), "(format version")
        # stored as int64 and agreeing: as valid as the uint64 the writer stores
        t.ok(t.run("validate", edited_copy("rng-int64.ckpt.h5", lambda f: f["train"].attrs.create(
            "rng_state", np.array([seed, step], dtype=np.int64)))))
        copy = t.path("rng-run")
        shutil.copytree(run, copy)
        with h5py.File(os.path.join(copy, "model.ckpt.h5"), "r+") as f:
            f["train"].attrs.create("rng_state", np.array([999, 7], dtype=np.uint64))
        before = open(os.path.join(copy, "model.ckpt.h5"), "rb").read()
        for extra, code in (((), 1), (("--no-check",), 2)):
            r = t.run("train", "--resume", copy, "--set", "train.steps=4", "--threads", "1",
                      *extra)
            assert r.returncode == code, (extra, r.returncode, r.stderr[-500:])
            assert "/train attr rng_state" in r.stderr and "[999, 7]" in r.stderr, \
                (extra, r.stderr[-500:])
            assert open(os.path.join(copy, "model.ckpt.h5"), "rb").read() == before, extra
    t.case("a /train rng_state other than [train.seed, step] is refused by validate and resume",
           an_rng_state_other_than_seed_and_step_is_refused)

    def external_raw_storage_in_a_checkpoint_names_a_checkpoint():
        # The refusal said "a dump holds its own data" of a checkpoint.
        name = "embeddings.word.weight"
        raw = t.path("raw-params.bin")

        def external_raw(f):
            values = f["params/" + name][()]
            values.tofile(raw)
            del f["params/" + name]
            f["params"].create_dataset(name, shape=values.shape, dtype=values.dtype,
                                       external=[(raw, 0, values.nbytes)])
        validate_says(edited_copy("external-raw.ckpt.h5", external_raw),
                      (f"/params/{name}", "external raw file", "a checkpoint holds its own data"),
                      "a dump holds")
    t.case("external raw storage in a checkpoint is refused naming a checkpoint",
           external_raw_storage_in_a_checkpoint_names_a_checkpoint)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
