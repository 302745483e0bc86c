#!/usr/bin/python3
"""Training options that did nothing, did the wrong thing or hung (probe V, session 30).

    test_train_options.py --cli routescope-cli --work DIR

Each expected outcome comes from docs/cli.md (the exit codes: 2 a bad option, configuration or
unreadable input; 3 a failure at run time; the `train` section's --resume and --until) or
docs/config.md ("Ranges"), or from the kernel: a process under RLIMIT_AS cannot map the stacks
of 1024 threads (8 MiB each under RLIMIT_STACK = 8 MiB, 8 GiB in all, more than the 2 GiB
allowed), so thread creation fails with EAGAIN. Every run has a timeout: a hang is a failure, not
a stuck test.
"""
import json
import os
import re
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = '"model": {"arch": "bigs", "d_model": 16, "n_layers": 1, "max_len": 32, "ssm": {"n_modes": 4}}'


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    t = suite_from_args()
    grammar = t.config("grammar.json", "{" + MODEL + """,
 "data": {"train": "builtin:grammar", "seq_len": 32},
 "train": {"batch_size": 2, "steps": 10, "threads": 1}}""")

    # ---- train.threads = 1024 (in docs/config.md's 0 … 1024) where the process may start fewer:
    # exit 3 (a failure at run time) naming the key, promptly; it hung for ever (the pool's
    # constructor threw with its workers still waiting, and destroying their condition variable
    # waited on them).
    def threads_the_process_cannot_start():
        def limited():
            resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, 8 << 20))
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        r = t.run("train", "--config", grammar, "--out", t.path("threads-run"), "--json",
                  "--set", "train.threads=1024", "--set", "train.steps=1", timeout=90,
                  preexec=limited)
        assert r.returncode == 3, (r.returncode, r.stderr[-400:])
        assert "train.threads" in r.stderr and "--threads" in r.stderr, r.stderr[-400:]
        started = re.search(r"only (\d+) of the 1024 threads", r.stderr)
        assert started and 1 <= int(started.group(1)) < 1024, r.stderr[-400:]
    t.case("train.threads beyond what the process may start is exit 3, not a hang",
           threads_the_process_cannot_start)

    # A run stopped at step 4 of 10 (--until 4), for the --until cases below.
    stopped = t.path("stopped")
    r = t.run("train", "--config", grammar, "--out", stopped, "--until", "4", "--json")
    if r.returncode != 0:
        print(f"FAIL setup: train --until 4: {r.returncode} {r.stderr[-400:]}")
        return 1
    checkpoint = os.path.join(stopped, "model.ckpt.h5")

    # ---- docs/cli.md: --until STEP "stops after STEP"; resumed at step 4, --until 2 cannot be
    # honoured: exit 2 naming --until, no step trained, the checkpoint as it was (it trained and
    # saved step 5, exit 0).
    def until_before_the_checkpoint():
        before = read(checkpoint)
        r = t.run("train", "--resume", stopped, "--until", "2", "--json")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "--until 2" in r.stderr and "step 4" in r.stderr, r.stderr[-400:]
        assert '"type":"step"' not in r.stdout, r.stdout[-400:]
        assert read(checkpoint) == before, "the checkpoint changed"
    t.case("--resume with --until below the checkpoint's step is exit 2, nothing trained",
           until_before_the_checkpoint)

    # ---- --until at the checkpoint's step: the run is where it should stop: nothing trained,
    # said on stderr, exit 0, the checkpoint as it was. Nothing is written at all (docs/cli.md:
    # "a resubmitted time-limited job finds its work done"): the log keeps its bytes (no second
    # "start" record), and where DIR cannot be written (RLIMIT_FSIZE 0: every write fails, as on
    # a full disk) it is still exit 0; it was exit 3, the log and the built-in corpus rewritten
    # anyway. A --set the checkpoint refuses (train.steps below its step) is still exit 2.
    def until_at_the_checkpoint():
        before = read(checkpoint)
        log = os.path.join(stopped, "log.jsonl")
        log_before = read(log)
        r = t.run("train", "--resume", stopped, "--until", "4", "--json")
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
        assert '"type":"step"' not in r.stdout, r.stdout[-400:]
        assert "nothing is trained" in r.stderr and "step 4" in r.stderr, r.stderr[-400:]
        assert read(checkpoint) == before, "the checkpoint changed"
        assert read(log) == log_before, "the log changed"

        def no_writes():
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        r = t.run("train", "--resume", stopped, "--until", "4", "--json", preexec=no_writes)
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
        assert "nothing is trained" in r.stderr, r.stderr[-400:]
        assert read(checkpoint) == before and read(log) == log_before, "the run changed"

        r = t.run("train", "--resume", stopped, "--until", "4", "--set", "train.steps=2")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "train.steps" in r.stderr, r.stderr[-400:]
    t.case("--resume with --until at the checkpoint's step trains nothing, writes nothing, "
           "and says so", until_at_the_checkpoint)

    # ---- a fresh run whose first log write fails (RLIMIT_FSIZE 0, as a full disk) is exit 3
    # naming log.jsonl and leaves no empty log.jsonl behind: one was left, and the same command
    # run again was refused as "already holds an earlier run's files" (needing --overwrite).
    def a_first_log_write_that_fails_leaves_no_log():
        corpus = t.path("fsize-corpus.txt")
        with open(corpus, "w") as f:
            f.write("the cat sat on the mat\nthe dog ran\n" * 50)
        config = t.config("fsize.json", "{" + MODEL + ', "data": {"train": "' + corpus +
                          '", "seq_len": 32}, "train": {"batch_size": 2, "steps": 2, '
                          '"threads": 1}}')
        out = t.path("fsize-run")

        def no_writes():
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        r = t.run("train", "--config", config, "--out", out, preexec=no_writes)
        assert r.returncode == 3 and "log.jsonl" in r.stderr, (r.returncode, r.stderr[-400:])
        log = os.path.join(out, "log.jsonl")
        assert not os.path.exists(log) or os.path.getsize(log) > 0, "an empty log.jsonl was left"
        r = t.run("train", "--config", config, "--out", out)
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
    # ---- a resume whose checkpoint save fails (RLIMIT_FSIZE 8 KB: the log's lines fit, the
    # checkpoint does not) leaves a "start" record at the checkpoint's step; the next resume
    # from that step replaces it rather than adding a second one.
    def a_failed_resume_leaves_one_start_record():
        run_dir = t.path("fsize-resume")
        corpus = t.path("fsize-resume-corpus.txt")  # not builtin: its copy would not fit 8 KB
        with open(corpus, "w") as f:
            f.write("the cat sat on the mat\nthe dog ran\n" * 50)
        config = t.config("fsize-resume.json", "{" + MODEL + ', "data": {"train": "' + corpus +
                          '", "seq_len": 32}, "train": {"batch_size": 2, "steps": 10, '
                          '"threads": 1}}')
        r = t.run("train", "--config", config, "--out", run_dir, "--until", "2")
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
        for _ in range(2):
            r = t.run("train", "--resume", run_dir, "--until", "3", preexec=small_files)
            assert r.returncode == 3 and "model.ckpt.h5" in r.stderr, (r.returncode, r.stderr[-400:])
        starts = [json.loads(line) for line in open(os.path.join(run_dir, "log.jsonl"))
                  if '"start"' in line]
        at_two = [s for s in starts if s.get("step") == 2]
        assert len(at_two) == 1 and at_two[0].get("resumed") is True, starts
    t.case("a resume that failed to save leaves one start record at its step",
           a_failed_resume_leaves_one_start_record)

    t.case("a first log write that fails leaves no empty log.jsonl",
           a_first_log_write_that_fails_leaves_no_log)

    # ---- --until is a step to stop after: -5 and 0 name no step (both were accepted and
    # ignored, the run trained to train.steps): exit 2 naming --until and its rule.
    def until_not_a_step():
        for value in ("-5", "0"):
            out = t.path("until" + value)
            r = t.run("train", "--config", grammar, "--out", out, "--until", value, "--json")
            assert r.returncode == 2, (value, r.returncode, r.stderr[-400:])
            assert "--until" in r.stderr and "1 or more" in r.stderr, r.stderr[-400:]
            assert not os.path.exists(os.path.join(out, "model.ckpt.h5")), value
    t.case("--until below 1 is exit 2 naming it", until_not_a_step)

    # ---- --resume names an input, the run's directory: a file there is an unreadable input
    # (exit 2), not an output directory that cannot be created (exit 3). Given the checkpoint
    # itself, the message points to its directory.
    def resume_given_a_file():
        plain = t.config("afile", "hi\n")
        r = t.run("train", "--resume", plain, "--json")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "--resume" in r.stderr and "not a run directory" in r.stderr, r.stderr[-400:]
        r = t.run("train", "--resume", checkpoint, "--json")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "--resume " + stopped in r.stderr, r.stderr[-400:]
    t.case("--resume given a file is exit 2 saying it is not a run directory", resume_given_a_file)

    # ---- a configuration key holding a NUL ("tra\u0000in"): exit 2 with the whole message; it
    # was cut at the NUL ("c.json: tra") and the problem, "unknown key", was lost.
    def nul_in_a_key():
        c = t.config("nul.json", '{"train": {"steps": 1}, "tra\\u0000in": {}}')
        r = t.run("train", "--config", c, "--out", t.path("nul-run"))
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "tra\\x00in: unknown key" in r.stderr, r.stderr[-400:]
    t.case("a NUL in a configuration key is printed escaped, with the problem", nul_in_a_key)

    # ---- train.mask_prob: docs/config.md's range is what the binary does. MLM learns from the
    # positions it masks; at 0 it would mask none, so an MLM run refuses 0 (exit 2 saying why),
    # and a run that ignores the key (classify) reads it.
    def mask_prob_zero():
        with open(os.path.join(SOURCE, "docs", "config.md")) as f:
            row = next(line for line in f if line.startswith("| `train.mask_prob` |"))
        documented = row.split("|")[2].strip()
        assert documented.startswith("(0, 1]"), row
        r = t.run("train", "--config", grammar, "--out", t.path("mask0"), "--json",
                  "--set", "train.mask_prob=0", "--set", "train.steps=1")
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "train.mask_prob" in r.stderr and "mask none" in r.stderr, r.stderr[-400:]
        tsv = t.path("cls.tsv")
        with open(tsv, "w") as f:
            f.write("sentence\tlabel\n" + "".join(f"the cat sat {i}\t{i % 2}\n" for i in range(40)))
        c = t.config("classify.json", "{" + MODEL + f""",
 "data": {{"train": "{tsv}", "seq_len": 32}},
 "train": {{"objective": "classify", "batch_size": 2, "steps": 1, "threads": 1,
            "mask_prob": 0}}}}""")
        r = t.run("train", "--config", c, "--out", t.path("classify-mask0"), "--json")
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
    t.case("train.mask_prob = 0: refused by MLM with the reason, as docs/config.md says",
           mask_prob_zero)

    # ---- built-in task parameters (docs/config.md "Ranges"): a value the task cannot generate
    # is exit 2 naming it, never a crash, a bare out-of-memory error or a generator that draws
    # for ever; a valid tight setting is generated.
    def task(name, params, max_len=256):
        return t.config(f"task-{len(os.listdir(t.work))}.json", json.dumps({
            "model": {"arch": "bigs", "d_model": 8, "n_layers": 1, "max_len": max_len,
                      "ssm": {"n_modes": 2}},
            "data": {"task": name, "task_params": dict(n_train=20, n_valid=5, n_test=5, **params)},
            "train": {"batch_size": 2, "steps": 1, "threads": 1}}))

    def refused(name, params, key, max_len=256, absent=None):
        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        r = t.run("train", "--config", task(name, params, max_len), "--out",
                  t.path(f"task-run-{len(os.listdir(t.work))}"), "--json", timeout=60,
                  preexec=limited)
        assert r.returncode == 2, (name, params, r.returncode, r.stderr[-400:])
        # Named as the configuration key (docs/cli.md: "exit 2 naming data.task_params.KEY"):
        # the generators' own range checks said the bare name (session 34).
        assert "data.task_params." + key in r.stderr, (name, params, r.stderr[-400:])
        for lo, hi in re.findall(r"\[(-?\d+), (-?\d+)\]", r.stderr):
            assert int(lo) <= int(hi), ("an empty range", r.stderr[-400:])
        if absent:
            assert absent not in r.stderr, r.stderr[-400:]

    def task_parameters_out_of_range():
        # k·(s + 4) + 1 overflowed int: SIGSEGV.
        refused("selective-copying", {"span_len": 1 << 30}, "span_len")
        # Blamed on min_len: "min_len = 32 is outside [2009, 64]".
        refused("selective-copying", {"span_len": 1000}, "span_len", absent="min_len")
        # 4^4 = 256 kinds of surroundings in 4000 symbols: always recur, redrawn for ever.
        refused("selective-copying", {"n_symbols": 4, "min_len": 4000, "max_len": 4000},
                "n_symbols", max_len=8192)
        # A sentence of 256 words over 3 that must miss the question word: redrawn for ever.
        refused("gap-matching", {"question_len": 1, "n_symbols": 3, "sentence_len": 256},
                "sentence_len", max_len=4096)
        # 2·10^9 sentences: a bare out-of-memory error (exit 3).
        refused("gap-matching", {"max_entries": 2000000000}, "max_entries", max_len=4096)
        # "max_entries = 2147483647 is outside [2147483647, 512]".
        refused("phone-book", {"min_entries": 2147483647, "max_entries": 2147483647},
                "max_entries", max_len=4096)
        refused("induction", {"min_len": 3}, "min_len")
        refused("copying", {"n_symbols": 1}, "n_symbols")
    t.case("task parameters a task cannot generate are exit 2 naming them",
           task_parameters_out_of_range)

    def tight_spans_are_placed():
        # Two spans of 100 in 209 symbols: 2·(100 + 4) + 1 = 209, in range; a first span drawn
        # near the middle left no room for the second and the generator drew for ever.
        r = t.run("train", "--config", task("selective-copying",
                                            {"span_len": 100, "min_len": 209, "max_len": 209,
                                             "n_symbols": 64}, max_len=512),
                  "--out", t.path("tight-run"), "--json", timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr[-400:])
    t.case("selective copying places spans that just fit", tight_spans_are_placed)

    # ---- experiment phone-book scores books of 8× the training entries: max_entries near 2^31
    # overflowed that product ("must lie in [0, 2147483647], got -1894967296"); docs/cli.md:
    # above 64 is exit 2 before any run, naming the key.
    def phone_book_experiment_entries():
        out = t.path("pb")
        r = t.run("experiment", "phone-book", "--out", out, "--steps", "1",
                  "--set", "data.task_params.max_entries=300000000", timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "data.task_params.max_entries" in r.stderr and "got -" not in r.stderr, \
            r.stderr[-400:]
        assert "64" in r.stderr, r.stderr[-400:]
        r = t.run("experiment", "phone-book", "--out", out, "--steps", "1",
                  "--set", "data.task_params.max_entries=100", timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert not os.path.exists(os.path.join(out, "results.json"))
    t.case("experiment phone-book refuses training books whose 8× books pass 512 entries",
           phone_book_experiment_entries)

    # ---- session 34. The --set list is checked once, after the last: an odd model.d_inner is
    # refused only for Birdie's bidirectional and prefix layers (docs/models.md), and given before
    # `model.birdie.mode=causal` it was refused against the mode not yet set.
    def sets_are_checked_together():
        r = t.run("train", "--config", os.path.join(SOURCE, "resources/configs/birdie-tiny.json"),
                  "--out", t.path("odd-causal"), "--set", "model.d_model=16",
                  "--set", "model.n_layers=1", "--set", "model.max_len=16",
                  "--set", "data.seq_len=16", "--set", "model.d_inner=7",
                  "--set", "model.birdie.mode=causal", "--set", "train.objective=clm",
                  "--set", "train.steps=1", "--set", "train.threads=1")
        assert r.returncode == 0, r.stderr
        r = t.run("train", "--config", os.path.join(SOURCE, "resources/configs/birdie-tiny.json"),
                  "--out", t.path("odd-bidirectional"), "--set", "model.d_inner=7",
                  "--set", "train.steps=1")
        assert r.returncode == 2 and "model.d_inner" in r.stderr, r.stderr
    t.case("the --set list is checked once, after the last", sets_are_checked_together)

    # ---- the same for --resume: its --set list went through one assignment at a time
    # (dt_max = 0.005 below the default dt_min = 0.01 was refused before dt_min = 0.001 came).
    def resume_sets_are_checked_together():
        run = t.path("resume-sets")
        r = t.run("train", "--config", grammar, "--out", run, "--until", "2")
        assert r.returncode == 0, r.stderr
        r = t.run("train", "--resume", run, "--set", "model.ssm.dt_max=0.005",
                  "--set", "model.ssm.dt_min=0.001", "--until", "3")
        assert r.returncode == 0, r.stderr
    t.case("--resume's --set list is checked once, after the last",
           resume_sets_are_checked_together)

    # ---- session 34. A fine-tuned classifier is scored and dumped at the row length its run
    # padded to (data.seq_len): a bidirectional SSM reads the padding (docs/models.md: no mask),
    # and eval padded only to the file's longest example (20 of 28 tokens) scored the same
    # checkpoint on the same rows otherwise than the run's own evaluation (0.68989 against
    # 0.69604). The log's last evaluation loss is the expected value.
    def eval_pads_as_the_run_did():
        rows = ["label\tsentence"] + [("yes" if i % 2 else "no") + "\t" +
                                        " ".join(["a", "b", "c", "d"][:1 + i % 4] * (1 + i % 3))
                                        for i in range(24)]
        data = t.path("pad.tsv")
        with open(data, "w") as f:
            f.write("\n".join(rows) + "\n")
        config = t.config("pad.json", """{"model": {"arch": "stack_ssm", "d_model": 16,
 "n_layers": 1, "max_len": 32, "ssm": {"n_modes": 4}, "init_std": 0.3},
 "tokenizer": {"kind": "bytes"},
 "data": {"train": "%s", "valid": "%s", "seq_len": 28, "labels": ["no", "yes"]},
 "train": {"objective": "classify", "batch_size": 4, "steps": 3, "threads": 1,
           "eval_every": 3}}""" % (data, data))
        run = t.path("pad-run")
        r = t.run("train", "--config", config, "--out", run)
        assert r.returncode == 0, r.stderr
        evals = [json.loads(x) for x in open(os.path.join(run, "log.jsonl"))
                 if '"type":"eval"' in x.replace(" ", "")]
        assert evals, "no eval record"
        r = t.run("eval", "--checkpoint", os.path.join(run, "model.ckpt.h5"), "--data", data,
                  "--out", t.path("pad.preds.jsonl"))
        assert r.returncode == 0, r.stderr
        loss = json.loads(r.stdout.strip().splitlines()[-1])["loss"]
        assert abs(loss - evals[-1]["loss"]) <= 1e-6 * abs(evals[-1]["loss"]), \
            (loss, evals[-1]["loss"])
        dump = t.path("pad.dump.h5")
        r = t.run("dump", "--checkpoint", os.path.join(run, "model.ckpt.h5"), "--data", data,
                  "--out", dump)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.strip().splitlines()[-1])["length"] == 28, r.stdout
    t.case("a fine-tuned SSM is scored and dumped at its run's row length",
           eval_pads_as_the_run_did)

    # ---- eval --task T --data FILE: docs/cli.md gives (--task T | --data FILE); the file was
    # dropped without a word and the task scored (exit 0), where dump refuses the pair.
    def eval_refuses_task_and_data():
        ck = os.path.join(t.path("pad-run"), "model.ckpt.h5")
        r = t.run("eval", "--checkpoint", ck, "--task", "induction", "--data",
                  t.path("pad.tsv"), "--out", t.path("both.preds.jsonl"))
        assert r.returncode == 2 and "--task and --data exclude each other" in r.stderr, \
            (r.returncode, r.stderr)
        assert not os.path.exists(t.path("both.preds.jsonl"))
    t.case("eval refuses --task with --data", eval_refuses_task_and_data)

    # ---- dump --seed takes data.task_params.seed's range, 0 … 2^63 − 1 (docs/config.md), as
    # train --set and eval --task-set do: -1 became 2^64 − 1 (exit 0), a split eval cannot
    # regenerate.
    def dump_seed_in_range():
        ck = os.path.join(t.path("pad-run"), "model.ckpt.h5")
        for seed in ("-1", "9223372036854775808"):
            out = t.path("seed%s.dump.h5" % seed)
            r = t.run("dump", "--checkpoint", ck, "--task", "induction", "--seed", seed,
                      "--examples", "4", "--out", out)
            assert r.returncode == 2 and "--seed: must lie in [0, 9223372036854775807]" in \
                r.stderr, (seed, r.returncode, r.stderr)
            assert not os.path.exists(out)
    t.case("dump --seed outside 0 … 2^63 − 1 is refused", dump_seed_in_range)

    # ---- the memory pre-checks take the process's own limit (ulimit -v, RLIMIT_AS), not only
    # the machine's memory: d_model 2048 with 8 layers is about 4.4·10^8 parameters, 16 bytes
    # each for training (docs/config.md) ≈ 6.6 GiB, refused under a 2 GiB RLIMIT_AS before any
    # allocation: exit 2 naming the model's parameters (it was a bare "out of memory
    # (std::bad_alloc)", exit 3, or a refusal blaming the batch), no checkpoint written.
    def training_beyond_the_process_limit():
        def limited():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, resource.RLIM_INFINITY))
        out = t.path("big-under-limit")
        r = t.run("train", "--config", grammar, "--out", out, "--set", "model.d_model=2048",
                  "--set", "model.n_layers=8", "--set", "data.seq_len=16", "--set",
                  "model.max_len=16", "--set", "train.steps=0", "--set", "train.eval_batches=1",
                  timeout=120, preexec=limited)
        assert r.returncode == 2, (r.returncode, r.stderr[-400:])
        assert "bad_alloc" not in r.stderr and "train.batch_size" not in r.stderr, \
            r.stderr[-400:]
        need = re.search(r"model: its (\d+) parameters need (\d+) MiB", r.stderr)
        assert need, r.stderr[-400:]
        assert 16 * int(need.group(1)) > 2 << 30 and 3.5e8 < int(need.group(1)) < 5.5e8, \
            r.stderr[-400:]
        # The limit the check used is the process's 2 GiB, named as such, not the machine's.
        assert "more than the process's memory limit (ulimit -v) of 2 GiB" in r.stderr, \
            r.stderr[-400:]
        assert not os.path.exists(os.path.join(out, "model.ckpt.h5"))
    t.case("train beyond the process's ulimit -v is exit 2 naming the parameters",
           training_beyond_the_process_limit)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
