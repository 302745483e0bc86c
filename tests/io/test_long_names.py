#!/usr/bin/python3
"""Outputs named as long as the file system allows (NAME_MAX bytes, 255 on Linux file systems) are
written, and longer names are refused before any work, naming the option (exit 2, docs/cli.md).

Every writer puts its output under a hidden temporary beside the final name and renames it into
place; that temporary adds a dot, ".tmp-<pid>" and sometimes a suffix, so a dump named with 240 to
255 bytes failed at the end of its work with an HDF5 "File name too long" trace (session 30's
probe). The limit comes from os.pathconf(DIR, "PC_NAME_MAX"), the outputs are read back with h5py
and json, and no hidden file may be left in the folder.

    test_long_names.py --cli routescope-cli --work DIR --source-dir SRC
"""
import json
import os
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402


def named(length, suffix, fill="d"):
    """A file name of exactly `length` bytes (UTF-8) ending in `suffix`."""
    body = length - len(suffix.encode())
    unit = len(fill.encode())
    name = fill * (body // unit) + "x" * (body % unit) + suffix
    assert len(name.encode()) == length, (len(name.encode()), length)
    return name


def main():
    t = suite_from_args()
    limit = os.pathconf(t.work, "PC_NAME_MAX")
    run = t.path("run")
    r = t.run("train", "--config", os.path.join(SOURCE, "resources/configs/bigs-tiny.json"),
              "--out", run, "--set", "train.steps=2", "--set", "data.task=induction",
              "--set", "model.d_model=32", "--set", "model.ssm.n_modes=8", "--threads", "1")
    t.ok(r)
    ckpt = os.path.join(run, "model.ckpt.h5")

    def hidden_files():
        return sorted(n for n in os.listdir(t.work) if n.startswith("."))

    def dump_at(name):
        out = t.path(name)
        return out, t.run("dump", "--checkpoint", ckpt, "--out", out, "--task", "induction",
                          "--examples", "4", "--threads", "1")

    def dump_names_up_to_the_limit():
        for length in (200, 240, limit):
            out, r = dump_at(named(length, ".dump.h5"))
            t.ok(r)
            with h5py.File(out, "r") as f:
                assert "layers" in f, list(f)
        # Multi-byte characters across the point where a temporary's name is shortened.
        out, r = dump_at(named(limit - 1, ".dump.h5", fill="é"))
        t.ok(r)
        with h5py.File(out, "r") as f:
            assert "layers" in f
        # Two long names with the same first 230 bytes are two files.
        a, ra = dump_at(named(limit, ".a.dump.h5"))
        b, rb = dump_at(named(limit, ".b.dump.h5"))
        t.ok(ra)
        t.ok(rb)
        assert os.path.exists(a) and os.path.exists(b)
        assert hidden_files() == [], hidden_files()
    t.case(f"dumps named with up to {limit} bytes are written", dump_names_up_to_the_limit)

    def a_name_past_the_limit_is_refused_first():
        for args in (["dump", "--checkpoint", ckpt, "--task", "induction", "--examples", "4"],
                     ["sample-dump"], ["export", ckpt, "--to", "safetensors"],
                     ["import", run],
                     ["eval", "--checkpoint", ckpt, "--task", "induction"]):
            name = named(limit + 1, ".dump.h5" if "dump" in args[0] else ".out")
            r = t.run(*args, "--out", t.path(name), "--threads", "1") if args[0] in (
                "dump", "eval") else t.run(*args, "--out", t.path(name))
            assert r.returncode == 2, (args[0], r.returncode, r.stderr[-400:])
            assert "--out" in r.stderr and str(limit) in r.stderr, (args[0], r.stderr[-400:])
            assert not os.path.exists(t.path(name)), args[0]
        assert hidden_files() == [], hidden_files()
    t.case(f"an output name of {limit + 1} bytes is refused before any work, naming --out",
           a_name_past_the_limit_is_refused_first)

    def sample_dump_export_import_analyze_at_the_limit():
        sample = t.path(named(limit, ".dump.h5", fill="s"))
        t.ok(t.run("sample-dump", "--out", sample, "--examples", "8"))
        with h5py.File(sample, "r") as f:
            assert "layers" in f
        exported = t.path(named(limit, "", fill="e"))
        t.ok(t.run("export", ckpt, "--to", "safetensors", "--out", exported))
        with open(os.path.join(exported, "config.json")) as f:
            json.load(f)
        imported = t.path(named(limit, ".ckpt.h5", fill="i"))
        t.ok(t.run("import", exported, "--out", imported))
        with h5py.File(imported, "r") as f:
            assert "params" in f or "model" in f or len(f) > 0
        result = t.path(named(limit, ".json", fill="a"))
        table = t.path(named(limit, ".csv", fill="a"))
        t.ok(t.run("analyze", "anisotropy", "--dump", sample, "--layer", "all", "--out", result,
                   "--csv", table))
        with open(result) as f:
            json.load(f)
        assert open(table).readline().strip(), "empty CSV"
        assert hidden_files() == [], hidden_files()
    t.case(f"sample-dump, export, import and analyze write names of {limit} bytes",
           sample_dump_export_import_analyze_at_the_limit)

    def eval_summary_name_is_checked_with_its_predictions():
        # The summary goes beside the predictions as <name>.summary.json: predictions named so
        # that the summary's name passes the limit are refused before evaluating.
        preds = t.path(named(limit - 4, ".jsonl"))
        r = t.run("eval", "--checkpoint", ckpt, "--task", "induction", "--out", preds,
                  "--threads", "1")
        assert r.returncode == 2 and "summary" in r.stderr, (r.returncode, r.stderr[-400:])
        assert not os.path.exists(preds)
        preds = t.path(named(limit - 7, ".jsonl"))  # its summary: limit bytes
        r = t.run("eval", "--checkpoint", ckpt, "--task", "induction", "--out", preds,
                  "--threads", "1")
        t.ok(r)
        summary = preds[:-len(".jsonl")] + ".summary.json"
        assert len(os.path.basename(summary).encode()) == limit
        with open(summary) as f:
            json.load(f)
        assert sum(1 for _ in open(preds)) > 0
        assert hidden_files() == [], hidden_files()
    t.case("eval checks its summary's name as well as its predictions'",
           eval_summary_name_is_checked_with_its_predictions)

    return t.finish()


if __name__ == "__main__":
    SOURCE = os.environ.get("ROUTESCOPE_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(
                                os.path.abspath(__file__)))))
    sys.exit(main())
