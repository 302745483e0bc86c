#!/usr/bin/python3
"""Edges of the corpora and tokenizers the CLI reads (probe Q5):

- padding: docs/formats/dump.md, "Routescope pads with the tokenizer's [PAD] id". With a
  SentencePiece model whose [PAD] is 3 (id 0 its <unk>), `dump --data` padded its rows with 0 and
  a model that reads the padding (a non-causal gMLP) gave other hidden states than for the same
  row of its held-out dump, which pads with 3; a classifier's `dump --data` padded with 0 too;
- a corpus changed after TextCorpus's checking pass was read without the checks docs/tasks.md
  gives (a NUL or invalid UTF-8 is refused naming file and line): `train` and `tokenizer train`
  trained on the new bytes, exit 0. The change is made while the process is stopped (SIGSTOP) in
  its second pass over the corpus, so the checking pass saw the file clean and a later pass reads
  it changed, whatever the machine's speed;
- a corpus file name with a newline (found by listing a folder) forged a line of stderr;
- `tokenizer train --vocab-size 3` was refused naming tokenizer.vocab_size, a key the command does
  not have.

    test_corpus_edges.py --cli routescope-cli --work DIR
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import sentencepiece as spm

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

PAD = 3  # the SentencePiece model's [PAD]; 0 is its <unk>


def main():
    t = suite_from_args()

    # ---- A SentencePiece model trained by the library itself with pad_id 3 and unk_id 0 (the
    # specials Routescope frames with as user-defined symbols), and a corpus of 10 documents: under
    # 20, so the held-out part is the last document alone.
    random.seed(3)
    words = "the cat dog sat on a mat and ran to house tree quick brown fox".split()
    docs = [" ".join(random.choice(words) for _ in range(random.randint(3, 12)))
            for _ in range(300)]
    big, prefix = t.path("big.txt"), t.path("pad3")
    with open(big, "w") as f:
        f.write("\n".join(docs) + "\n")
    spm.SentencePieceTrainer.train(input=big, model_prefix=prefix, model_type="unigram",
                                   vocab_size=40, pad_id=PAD, unk_id=0,
                                   user_defined_symbols="[CLS],[SEP],[MASK]", minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    assert sp.pad_id() == PAD and sp.id_to_piece(0) == "<unk>", (sp.pad_id(), sp.id_to_piece(0))
    train_txt, last_txt = t.path("train.txt"), t.path("last.txt")
    with open(train_txt, "w") as f:
        f.write("\n".join(docs[:10]) + "\n")
    with open(last_txt, "w") as f:
        f.write(docs[9] + "\n")
    gmlp = {"arch": "gmlp", "d_model": 16, "n_layers": 1, "max_len": 32, "dropout": 0.0}
    schedule = {"batch_size": 2, "steps": 2, "lr": 0.01, "warmup_steps": 1, "eval_every": 100,
                "eval_batches": 1, "checkpoint_every": 100, "threads": 1}
    tokenizer = {"kind": "sentencepiece", "model": prefix + ".model"}
    pre = t.config("pad3.json", json.dumps({
        "model": gmlp, "tokenizer": tokenizer, "data": {"train": train_txt, "seq_len": 32},
        "train": schedule}))
    run = t.path("pad3-run")
    t.ok(t.run("train", "--config", pre, "--out", run, "--json"))
    ckpt = os.path.join(run, "model.ckpt.h5")

    def dump_data_pads_with_the_tokenizers_pad():
        heldout, data = t.path("heldout.h5"), t.path("data.h5")
        t.ok(t.run("dump", "--checkpoint", ckpt, "--out", heldout, "--threads", "1"))
        t.ok(t.run("dump", "--checkpoint", ckpt, "--data", last_txt, "--out", data,
                   "--threads", "1"))
        with h5py.File(heldout, "r") as a, h5py.File(data, "r") as b:
            n = int(a["data/lengths"][0])
            assert n == int(b["data/lengths"][0]) and n < 32, (n, b["data/lengths"][0])
            ta, tb = a["data/tokens"][0], b["data/tokens"][0]
            assert (ta[:n] == tb[:n]).all(), (ta.tolist(), tb.tolist())
            assert set(ta[n:].tolist()) == {PAD}, ("held-out padding", ta.tolist())
            assert set(tb[n:].tolist()) == {PAD}, ("--data padding", tb.tolist())
            last = max(a["layers"].keys(), key=int)
            ha, hb = a[f"layers/{last}/hidden"][0, :n], b[f"layers/{last}/hidden"][0, :n]
            diff = float(np.abs(ha - hb).max())
            assert diff <= 1e-6, f"hidden states at the real positions differ by {diff:.2e}"
    t.case("dump --data pads with the tokenizer's [PAD] (3), as the held-out dump: same states",
           dump_data_pads_with_the_tokenizers_pad)

    def a_classifiers_dump_data_pads_with_the_tokenizers_pad():
        tsv = t.path("cls.tsv")
        with open(tsv, "w") as f:
            f.write("sentence\tlabel\n" +
                    "".join(f"{d}\t{i % 2}\n" for i, d in enumerate(docs[20:40])))
        c = t.config("classify.json", json.dumps({
            "model": gmlp, "tokenizer": tokenizer, "data": {"train": tsv, "seq_len": 32},
            "train": dict(schedule, objective="classify", init_from=ckpt)}))
        cls_run = t.path("classify-run")
        t.ok(t.run("train", "--config", c, "--out", cls_run, "--json"))
        out = t.path("classify.h5")
        t.ok(t.run("dump", "--checkpoint", os.path.join(cls_run, "model.ckpt.h5"), "--data", tsv,
                   "--out", out, "--threads", "1"))
        with h5py.File(out, "r") as f:
            tokens, lengths = f["data/tokens"][()], f["data/lengths"][()]
            padding = {int(x) for row, n in zip(tokens, lengths) for x in row[int(n):]}
            assert padding == {PAD}, f"padding ids {sorted(padding)}, expected [{PAD}]"
    t.case("a classifier's dump --data pads with the tokenizer's [PAD] (3)",
           a_classifiers_dump_data_pads_with_the_tokenizers_pad)

    # ---- A corpus changed after the checking pass: corpus/a.txt (read first) is clean when the
    # first pass reads it; the command is stopped once it is in its second pass, past a.txt, a.txt
    # is rewritten with bad bytes, and the command goes on: its third pass (read_all for train,
    # SentencePiece's training for tokenizer train) reads a.txt again and must refuse it, naming
    # file and line.
    corpus = t.path("corpus")
    os.makedirs(corpus)
    z = os.path.join(corpus, "z.txt")
    with open(z, "w") as f:
        f.write("the cat dog sat on a mat and ran to house tree quick brown fox\n" * 600_000)
    bytes_config = t.config("bytes.json", json.dumps({
        "model": {"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "dropout": 0.0,
                  "ssm": {"n_modes": 4}},
        "tokenizer": {"kind": "bytes"}, "data": {"train": corpus, "seq_len": 32},
        "train": {"batch_size": 2, "steps": 0, "eval_every": 100, "eval_batches": 1,
                  "checkpoint_every": 100, "threads": 1}}))
    a_txt = os.path.join(corpus, "a.txt")

    def changed_in_second_pass(args, bad):
        """Runs the CLI with `args`, rewriting a.txt to `bad` while it is stopped in its second
        pass over the corpus; returns (whether it was, exit code, stderr, the bytes it had read
        when stopped). Which pass the command is in is told
        by the bytes it has read (/proc/PID/io's rchar): a pass reads the corpus's S bytes, and
        everything else it reads (the format checks' first bytes, the configuration) is far less
        than a megabyte, so from S + 2 MB to 2 S it is past a.txt in its second pass."""
        with open(a_txt, "wb") as f:
            f.write(b"a clean document\n")
        size = os.path.getsize(z) + os.path.getsize(a_txt)
        low, high = size + (2 << 20), 2 * size - (1 << 20)

        def read_so_far(pid):
            with open(f"/proc/{pid}/io") as f:
                return int(next(x for x in f if x.startswith("rchar:")).split()[1])

        # The command at a lower priority than this watcher, which then sees it in each pass.
        p = subprocess.Popen([t.cli, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=lambda: os.nice(10))
        changed, stopped_at = False, None
        try:
            while not changed and stopped_at is None and p.poll() is None:
                try:
                    if low < read_so_far(p.pid) < high:
                        os.kill(p.pid, signal.SIGSTOP)
                        time.sleep(0.05)  # stopped: its count no longer moves
                        stopped_at = read_so_far(p.pid)
                        if stopped_at < 2 * size:  # a.txt not read a third time yet
                            with open(a_txt, "wb") as f:
                                f.write(bad)
                            changed = True
                        os.kill(p.pid, signal.SIGCONT)
                except (OSError, StopIteration, ValueError):
                    pass
                time.sleep(0.0005)
            _, err = p.communicate(timeout=300)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        return changed, p.returncode, err.decode(errors="replace"), stopped_at

    def refused(command, out, bad, said):
        """`command` + [out] refuses a.txt changed to `bad` after the checking pass, `said`."""
        for _ in range(3):  # a busy machine may hide the second pass from the watcher: again
            shutil.rmtree(out, ignore_errors=True)
            changed, rc, err, stopped_at = changed_in_second_pass(command + [out], bad)
            if changed:
                break
        assert changed, f"the second pass over the corpus was not caught (read {stopped_at} " \
                        f"bytes of {2 * os.path.getsize(z)} when stopped)"
        assert rc == 2, f"exit {rc} (expected 2: a corpus changed to hold {bad[:30]!r} after its " \
                        f"checking pass was read unchecked): {err[-400:]}"
        assert f"{a_txt}:1: {said}" in err, err[-400:]

    def train_refuses_a_nul_written_after_the_checking_pass():
        refused(["train", "--config", bytes_config, "--json", "--out"], t.path("race-nul"),
                b"late \x00 NUL\n", "a NUL byte at byte 6 of the line")
    t.case("train: a NUL written into the corpus after the checking pass is refused (file:line)",
           train_refuses_a_nul_written_after_the_checking_pass)

    def train_refuses_invalid_utf8_written_after_the_checking_pass():
        refused(["train", "--config", bytes_config, "--json", "--out"], t.path("race-utf8"),
                b"late \xff byte\n", "invalid UTF-8 byte 0xFF at byte 6 of the line")
    t.case("train: invalid UTF-8 written after the checking pass is refused (file:line)",
           train_refuses_invalid_utf8_written_after_the_checking_pass)

    def tokenizer_train_refuses_bytes_written_after_the_checking_pass():
        # Its third pass is SentencePiece's training, which reads the corpus document by document.
        refused(["tokenizer", "train", "--corpus", corpus, "--vocab-size", "28", "--out"],
                t.path("race.model"), b"late \xff byte\n",
                "invalid UTF-8 byte 0xFF at byte 6 of the line")
        assert not os.path.exists(t.path("race.model")), "a model was written"
    t.case("tokenizer train: bytes written after the checking pass are refused (file:line)",
           tokenizer_train_refuses_bytes_written_after_the_checking_pass)
    os.remove(z)  # 38 MB, not kept in the build tree

    # ---- docs/cli.md: a newline inside a value is printed escaped, so that a hostile file
    # cannot forge a line of stderr.
    def a_file_names_newline_is_escaped():
        d = t.path("hostile")
        os.makedirs(d)
        with open(os.path.join(d, "a.txt"), "w") as f:
            f.write("a good document\n")
        with open(os.path.join(d, "b\nroutescope-cli: FORGED LINE.txt"), "wb") as f:
            f.write(b"bad \xff byte\n")
        r = t.run("tokenizer", "train", "--corpus", d, "--vocab-size", "20", "--out",
                  t.path("hostile.model"))
        assert r.returncode == 2, (r.returncode, r.stderr)
        lines = r.stderr.rstrip("\n").split("\n")
        assert len(lines) == 1, f"stderr has {len(lines)} lines: {r.stderr!r}"
        assert "b\\x0Aroutescope-cli: FORGED LINE.txt:1: invalid UTF-8 byte 0xFF" in r.stderr, \
            r.stderr
    t.case("a corpus file name's newline is printed as \\x0A: no forged stderr line",
           a_file_names_newline_is_escaped)

    # ---- tokenizer train --vocab-size: refused below the five specials and one piece, naming
    # the option given.
    def vocab_size_below_the_specials_names_the_option():
        c = t.path("aaa.txt")
        with open(c, "w") as f:
            f.write("aaa\n")
        for n in ("1", "3", "5"):
            r = t.run("tokenizer", "train", "--corpus", c, "--vocab-size", n, "--out",
                      t.path("small.model"))
            assert r.returncode == 2, (n, r.returncode, r.stderr)
            assert "--vocab-size" in r.stderr and "tokenizer.vocab_size" not in r.stderr, r.stderr
            assert "from 6" in r.stderr, r.stderr
        # 6 passes the option's check: what stops it is the corpus's characters (a, ▁), said by
        # training.
        r = t.run("tokenizer", "train", "--corpus", c, "--vocab-size", "6", "--out",
                  t.path("small.model"))
        assert r.returncode == 2 and "from 6" not in r.stderr, r.stderr
        assert "every character of the corpus needs a piece" in r.stderr, r.stderr
        t.ok(t.run("tokenizer", "train", "--corpus", c, "--vocab-size", "7", "--out",
                   t.path("small.model")))
    t.case("tokenizer train --vocab-size below 6 is refused naming --vocab-size",
           vocab_size_below_the_specials_names_the_option)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
