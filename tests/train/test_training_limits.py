#!/usr/bin/python3
"""Sizes a training run cannot hold, refused before anything is allocated or trained (probe V,
session 30): the answer is exit 2 naming the key (docs/cli.md's exit codes), never an allocation
failure that names nothing (exit 3) nor a run that trains nothing and exits 0.

Every run is under RLIMIT_AS = 8 GB, so that a binary without the checks fails fast instead of
filling the machine. The sizes come from arithmetic on the inputs (a vocabulary of 10^6 pieces at
d_model 8192 is 8.2·10^9 embedding weights, 131 GB at 16 bytes each), not from the code.

    test_training_limits.py --cli routescope-cli --work DIR
"""
import json
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def physical_memory():
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def main():
    t = suite_from_args(preexec=limited)
    corpus = t.path("corpus.txt")
    with open(corpus, "w") as f:
        f.write("the cat sat on the mat\n" * 300)
    classes = t.path("cls.tsv")
    with open(classes, "w") as f:
        f.write("sentence\tlabel\n")
        for i in range(1, 41):
            f.write(f"the cat sat {i}\t{i % 2}\n")

    config = t.config

    # ---- a vocabulary the tokenizer sets: 10^6 WordPiece entries at d_model 8192 (8.2·10^9
    # embedding weights, 131 GB with gradients and AdamW's moments). The configuration's
    # model.vocab_size is the default's; the tokenizer's is known only when the model is made.
    def tokenizer_vocabulary_beyond_memory():
        if physical_memory() > 130e9:
            print("     (skipped: this machine holds 131 GB)")
            return
        vocab = t.path("vocab.txt")
        with open(vocab, "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat",
                               "on", "mat"] + [f"w{i}" for i in range(1_000_000)]) + "\n")
        c = config("vocab.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 8192, "n_layers": 1, "max_len": 32,
            "ssm": {{"n_modes": 4}}}},
 "tokenizer": {{"kind": "wordpiece", "model": "{vocab}"}},
 "data": {{"train": "{corpus}", "seq_len": 32}},
 "train": {{"batch_size": 1, "steps": 1, "threads": 1}}}}""")
        r = t.run("train", "--config", c, "--out", t.path("vocab-run"))
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "model.vocab_size = 1000010" in r.stderr and "parameters need" in r.stderr, \
            r.stderr[-400:]
        assert not os.path.exists(t.path("vocab-run/model.ckpt.h5"))
    t.case("a tokenizer's vocabulary beyond memory is refused naming the vocabulary",
           tokenizer_vocabulary_beyond_memory)

    # ---- a task split held in memory: 10^8 copying examples (each at least its token vectors,
    # tens of bytes) are several GB beyond 8 GB.
    def task_split_beyond_memory():
        c = config("ntrain.json", """{
 "model": {"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 256, "ssm": {"n_modes": 4}},
 "data": {"task": "copying", "task_params": {"n_train": 100000000, "n_valid": 10,
                                              "n_test": 10}},
 "train": {"batch_size": 2, "steps": 1, "threads": 1}}""")
        r = t.run("train", "--config", c, "--out", t.path("ntrain-run"))
        # On a machine with the memory for them, the run trains (exit 0); else exit 2 naming it.
        assert r.returncode == 0 or (r.returncode == 2 and
                                     "data.task_params.n_train" in r.stderr), \
            (r.returncode, r.stderr[-400:])
    t.case("a task split beyond memory is refused naming data.task_params.n_train",
           task_split_beyond_memory)

    # ---- train.epochs × steps per epoch past int64: 2^63 − 1 epochs of 20 steps.
    def epochs_overflow():
        c = config("epochs.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "data": {{"train": "{classes}", "seq_len": 32}},
 "train": {{"objective": "classify", "batch_size": 2, "epochs": 9223372036854775807,
            "threads": 1}}}}""")
        r = t.run("train", "--config", c, "--out", t.path("epochs-run"), "--json")
        assert r.returncode == 2 and "train.epochs" in r.stderr, (r.returncode, r.stderr[-400:])
    t.case("train.epochs whose steps overflow is refused", epochs_overflow)

    # ---- resuming a fine-tune with fewer epochs than its checkpoint's step: 40 examples at
    # batch 2 are 20 steps an epoch; the checkpoint is at step 50, one epoch is 20 steps.
    def resume_with_fewer_epochs():
        c = config("resume.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "data": {{"train": "{classes}", "seq_len": 32}},
 "train": {{"objective": "classify", "batch_size": 2, "epochs": 3, "threads": 1}}}}""")
        run = t.path("resume-run")
        r = t.run("train", "--config", c, "--out", run, "--until", "50", "--json")
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
        r = t.run("train", "--resume", run, "--set", "train.epochs=1", "--json")
        assert r.returncode == 2 and "train.epochs" in r.stderr and "step 50" in r.stderr, \
            (r.returncode, r.stderr[-400:])
    t.case("resuming with fewer epochs than the checkpoint's step is refused",
           resume_with_fewer_epochs)

    # ---- train.epochs in pretraining (it was ignored: train.steps ran): whole passes over the
    # training sequences. A task's fixed set of n_train = 50 at batch 4 is ceil(50 / 4) = 13 steps
    # an epoch, 3 epochs 39 steps; a corpus's windows (the start record's train_sequences) at
    # batch 2, 2 epochs.
    def epochs_count_in_pretraining():
        def start_record(name, body):
            r = t.run("train", "--config", config(name + ".json", body), "--out",
                      t.path(name), "--json", "--until", "1")
            assert r.returncode == 0, (r.returncode, r.stderr[-400:])
            return next(json.loads(line) for line in r.stdout.splitlines()
                        if line.startswith("{") and json.loads(line)["type"] == "start")
        s = start_record("epochs-task", """{
 "model": {"arch": "bigs", "causal": true, "d_model": 16, "n_layers": 1, "max_len": 64,
           "ssm": {"n_modes": 4}},
 "data": {"task": "induction", "task_params": {"n_symbols": 18, "min_len": 32, "max_len": 32,
          "n_train": 50, "n_valid": 20, "n_test": 20}},
 "train": {"objective": "clm", "batch_size": 4, "epochs": 3, "steps": 5, "threads": 1}}""")
        assert s["steps"] == 39, s
        s = start_record("epochs-corpus", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "data": {{"train": "{corpus}", "seq_len": 32}},
 "train": {{"batch_size": 2, "epochs": 2, "steps": 5, "threads": 1}}}}""")
        n = s["train_sequences"]
        assert n > 5 and s["steps"] == 2 * ((n + 1) // 2), s
    t.case("train.epochs counts passes over the training sequences in pretraining",
           epochs_count_in_pretraining)

    # ---- a refused tokenizer after the built-in corpus was copied into the new --out: the
    # directory this command created held only builtin-corpus.txt, and stayed.
    def refused_setup_leaves_no_directory():
        out = t.path("refused-run")
        c = config("refused.json", """{
 "model": {"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {"n_modes": 4}},
 "tokenizer": {"kind": "wordpiece", "model": "/nonexistent/vocab.txt"},
 "data": {"train": "builtin:grammar", "seq_len": 32},
 "train": {"batch_size": 2, "steps": 1, "threads": 1}}""")
        r = t.run("train", "--config", c, "--out", out)
        assert r.returncode == 2 and "vocab.txt" in r.stderr, (r.returncode, r.stderr[-400:])
        assert not os.path.exists(out), os.listdir(out)
    t.case("a refused setup leaves no --out directory behind", refused_setup_leaves_no_directory)

    # ---- a SentencePiece model whose piece is not UTF-8 (SentencePiece's pieces are UTF-8
    # text): refused when read, naming the piece, instead of a dump /vocab that validate refuses.
    def sentencepiece_piece_not_utf8():
        model, sp_corpus = t.path("sp.model"), t.path("sp-corpus.txt")
        with open(sp_corpus, "w") as f:
            f.writelines(f"the cat sat on mat {i}\n" for i in range(1, 501))
        r = t.run("tokenizer", "train", "--corpus", sp_corpus, "--vocab-size", "40", "--out",
                  model)
        assert r.returncode == 0, r.stderr[-400:]
        data = open(model, "rb").read()
        piece = "\u258110".encode()  # "▁10", one of the trained pieces
        assert data.count(piece) >= 1, "the trained model has no piece ▁10"
        bad = t.path("bad.model")
        with open(bad, "wb") as f:  # the same length: the protobuf's lengths still hold
            f.write(data.replace(piece, b"\xff\xfe\xfd10", 1))
        c = config("sp.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "tokenizer": {{"kind": "sentencepiece", "model": "{bad}"}},
 "data": {{"train": "{corpus}", "seq_len": 32}},
 "train": {{"batch_size": 2, "steps": 1, "threads": 1}}}}""")
        r = t.run("train", "--config", c, "--out", t.path("sp-run"))
        assert r.returncode == 2 and "bad.model" in r.stderr and "not UTF-8" in r.stderr, \
            (r.returncode, r.stderr[-400:])
    t.case("a SentencePiece piece that is not UTF-8 is refused", sentencepiece_piece_not_utf8)

    # ---- parameters that the update made infinite while the loss was finite (lr 1e38): a
    # divergence as docs/cli.md says (exit 3, a "diverged" record in log.jsonl), naming no
    # temporary file and claiming no checkpoint that was never written.
    def parameters_not_finite_are_a_divergence():
        c = config("lr.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "data": {{"train": "{corpus}", "seq_len": 32}},
 "train": {{"batch_size": 2, "steps": 5, "lr": 1e38, "warmup_steps": 0, "checkpoint_every": 1,
            "threads": 1}}}}""")
        run = t.path("lr-run")
        r = t.run("train", "--config", c, "--out", run, "--json")
        assert r.returncode == 3, (r.returncode, r.stderr[-400:])
        records = [json.loads(line) for line in open(os.path.join(run, "log.jsonl"))]
        assert any(rec.get("type") == "diverged" for rec in records), records[-2:]
        assert ".tmp-" not in r.stderr, r.stderr[-400:]
        if not os.path.exists(os.path.join(run, "model.ckpt.h5")):
            assert "untouched" not in r.stderr and "intact" not in r.stderr, r.stderr[-400:]
    t.case("parameters made infinite by an update are a logged divergence",
           parameters_not_finite_are_a_divergence)

    # ---- tokenizer.model with tokenizer.kind = bytes: the bytes tokenizer reads no file; the
    # path (one that does not exist here) was ignored and a byte model trained.
    def tokenizer_model_with_bytes_is_refused():
        c = config("bytes.json", f"""{{
 "model": {{"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {{"n_modes": 4}}}},
 "tokenizer": {{"kind": "bytes", "model": "/nonexistent/vocab.txt"}},
 "data": {{"train": "{corpus}", "seq_len": 32}},
 "train": {{"batch_size": 2, "steps": 1, "threads": 1}}}}""")
        r = t.run("train", "--config", c, "--out", t.path("bytes-run"))
        assert r.returncode == 2 and "tokenizer.model" in r.stderr and "bytes" in r.stderr, \
            (r.returncode, r.stderr[-400:])
    t.case("tokenizer.model with the bytes tokenizer is refused",
           tokenizer_model_with_bytes_is_refused)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
