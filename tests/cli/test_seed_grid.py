#!/usr/bin/python3
"""experiment NAME --seeds N (issue 27): the grid of seeds, its resume, and the interval arithmetic.

    test_seed_grid.py --cli build/bin/routescope-cli --work DIR

1. Interval arithmetic against an independent reference: four seed folders with hand-written
   results.json files (all "finished"), so the grid runs nothing and only aggregates. The mean,
   the sample standard deviation and the 95% interval mean ± t·sd/√n are recomputed here with the
   t quantiles of a published table (t_{0.975, 1} = 12.7062, t_{0.975, 3} = 3.1824; e.g. NIST/
   SEMATECH e-Handbook, table 1.3.6.7.2), and the share of seeds at or above the threshold.
2. A real grid: induction with 2 seeds, 2 jobs, 2 steps, a tiny model; one seed folder left
   half-written (no results.json) is run again from scratch, the other finished one is skipped.
3. Bad options: --seeds 0 and --jobs 0 exit 2.
"""
import json
import math
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

T_975 = {1: 12.7062047, 2: 4.3026527, 3: 3.1824463, 4: 2.7764451}  # published table values

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def induction_results(acc, bins, heads=None):
    models = []
    for label, a, b in zip(("GATED/SSM", "STACK/SSM", "STACK/ATT"), acc, bins):
        models.append({"label": label, "arch": label.lower(), "test": {"accuracy": a},
                       "bins": [{"accuracy": x} for x in b]})
    if heads is not None:  # STACK/ATT's induction heads, layers 1 and 2 (analyze induction-heads)
        models[2]["induction_heads"] = [{"layer": l + 1, "induction": h} for l, h in enumerate(heads)]
    return {"experiment": "induction", "attribute": "distance",
            "bins": [{"name": "distance 1–10"}, {"name": "distance 11–20"}], "models": models}


def run(cli, args, expect=0):
    p = subprocess.run([cli] + args, capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout[-3000:], p.stderr[-3000:])
    return p


def main():
    a = suite_from_args()  # a.cli, a.work (made empty)

    # 1. Arithmetic.
    grid = os.path.join(a.work, "arith")
    acc = {1: (0.97, 0.41, 1.0), 2: (0.99, 0.38, 0.93), 3: (0.96, 0.52, 0.99), 4: (0.90, 0.44, 1.0)}
    bins = {s: ((0.99, 0.95), (0.5, 0.3), (1.0, None)) for s in acc}
    heads = {1: (0.03, 0.98), 2: (0.02, 0.0), 3: (0.04, 0.97), 4: (0.03, 0.99)}
    for s in acc:
        os.makedirs(os.path.join(grid, f"seed-{s}"))
        with open(os.path.join(grid, f"seed-{s}", "results.json"), "w") as f:
            json.dump(induction_results(acc[s], bins[s], heads[s]), f)
    p = run(a.cli, ["experiment", "induction", "--seeds", "4", "--seed", "1", "--out", grid])
    check(p.returncode == 0, "a grid of finished seeds aggregates (exit 0)")
    check(p.stdout.count("skipped") == 4, "every finished seed is skipped, none is run again")
    r = json.load(open(os.path.join(grid, "results.json")))
    rows = {(x["model"], x["metric"]): x for x in r["rows"]}
    for i, label in enumerate(("GATED/SSM", "STACK/SSM", "STACK/ATT")):
        v = [acc[s][i] for s in sorted(acc)]
        n = len(v)
        mean = sum(v) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
        half = T_975[n - 1] * sd / math.sqrt(n)
        row = rows[(label, "test accuracy")]
        check(abs(row["mean"] - mean) < 1e-12, f"{label}: mean {row['mean']} = {mean}")
        check(abs(row["sd"] - sd) < 1e-12, f"{label}: sd {row['sd']} = {sd}")
        check(abs(row["ci_low"] - (mean - half)) < 1e-6 and abs(row["ci_high"] - (mean + half)) < 1e-6,
              f"{label}: interval [{row['ci_low']:.6f}, {row['ci_high']:.6f}] = "
              f"[{mean - half:.6f}, {mean + half:.6f}] (t table)")
        share = sum(x >= 0.95 for x in v) / n
        check(abs(row["share_at_or_above_threshold"] - share) < 1e-12,
              f"{label}: share at or above 0.95 = {share}")
        check(row["values"] == v, f"{label}: the per-seed values in seed order")
    # STACK/ATT's induction head per layer, a row of its own (not the headline: no share).
    for layer in (1, 2):
        row = rows.get(("STACK/ATT", f"layer {layer}: query → copied symbol (induction head)"))
        v = [heads[s][layer - 1] for s in sorted(heads)]
        check(row is not None and row["values"] == v and abs(row["mean"] - sum(v) / 4) < 1e-12
              and row["share_at_or_above_threshold"] is None,
              f"STACK/ATT's layer-{layer} induction head aggregates over the seeds")
    # A bin that is null in every seed: n = 0, no mean, no interval.
    empty = rows[("STACK/ATT", "distance 11–20")]
    check(empty["n"] == 0 and empty["mean"] is None and empty["ci_low"] is None,
          "a metric with no value in any seed has n = 0 and no mean")
    check(rows[("GATED/SSM", "distance 1–10")]["share_at_or_above_threshold"] is None,
          "the threshold applies to the headline metric only")
    md = open(os.path.join(grid, "results.md")).read()
    check("95% interval" in md and "share ≥ 0.95" in md, "results.md has the interval and share columns")
    # Two seeds, another threshold: t_{0.975, 1}.
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--seed", "2", "--out", grid,
                    "--threshold", "0.97"])
    r = json.load(open(os.path.join(grid, "results.json")))
    row = [x for x in r["rows"] if x["model"] == "GATED/SSM" and x["metric"] == "test accuracy"][0]
    v = [acc[2][0], acc[3][0]]
    mean = sum(v) / 2
    sd = math.sqrt(sum((x - mean) ** 2 for x in v))
    check(p.returncode == 0 and abs(row["ci_high"] - (mean + T_975[1] * sd / math.sqrt(2))) < 1e-5,
          "two seeds: the interval uses t(0.975, 1) = 12.706")
    check(abs(row["share_at_or_above_threshold"] - 0.5) < 1e-12 and r["threshold"] == 0.97,
          "--threshold sets the pass mark")

    # 2. A real grid with one finished and one half-written seed.
    real = os.path.join(a.work, "real")
    half = os.path.join(real, "seed-8")
    os.makedirs(half)
    open(os.path.join(half, "junk.txt"), "w").write("an interrupted run\n")
    open(os.path.join(half, ".routescope-experiment.lock"), "w").close()  # an experiment made it
    tiny = ["--steps", "2", "--threads", "1", "--set", "model.d_model=16",
            "--set", "data.task_params.n_test=40", "--set", "data.task_params.n_valid=20"]
    p = run(a.cli, ["experiment", "induction", "--seeds", "1", "--seed", "7", "--out",
                    os.path.join(real, "seed-7")] + tiny)
    check(p.returncode == 0, "a single seed runs as before (seed 7, into the grid's folder)")
    # results.md's "Protocol:" line gave the protocol's 62,800 steps over a table of 2-step runs:
    # this run's steps are said beside them (session 34).
    md7 = open(os.path.join(real, "seed-7", "results.md")).read() if p.returncode == 0 else ""
    check("(this run: 2 steps, not the protocol's 62800)" in md7,
          "results.md says this run's steps beside the protocol's (%s)" % md7[:300])
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--seed", "7", "--jobs", "2",
                    "--out", real] + tiny)
    check(p.returncode == 0, "the grid of seeds 7 and 8 finishes")
    check("seed 7: finished earlier" in p.stdout and "seed 8: running" in p.stdout,
          "the finished seed is skipped and the half-written one run")
    check(not os.path.exists(os.path.join(half, "junk.txt")) and
          os.path.exists(os.path.join(half, "results.json")),
          "the half-written seed was run again from scratch")
    r = json.load(open(os.path.join(real, "results.json"))) if p.returncode == 0 else {"rows": []}
    heads = [x for x in r["rows"] if x["headline"]]
    check(len(heads) == 3 and all(x["n"] == 2 and x["ci_low"] is not None for x in heads),
          "three models, each with two seeds and an interval")
    seed8 = json.load(open(os.path.join(half, "results.json")))
    check(seed8.get("seed") == 8, "seed 8's run used --seed 8")
    # The same grid with other options does not table the finished seeds as its own.
    other = [x if x != "model.d_model=16" else "model.d_model=32" for x in tiny]
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--seed", "7", "--out", real] + other, 2)
    check(p.returncode == 2 and "finished earlier with other options" in p.stderr and
          "--set model.d_model=16" in p.stderr,
          "a seed finished with other --set values is refused, naming them (%s)" % p.stderr[-300:])
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--seed", "7", "--out", real] +
            ["--steps", "3"] + tiny[2:], 2)
    check(p.returncode == 2 and "--steps 2" in p.stderr, "and so is one finished with another --steps")

    # 3. Bad options.
    for bad in (["--seeds", "0"], ["--seeds", "2", "--jobs", "0"]):
        p = run(a.cli, ["experiment", "induction", "--out", os.path.join(a.work, "bad")] + bad, 2)
        check(p.returncode == 2, f"{' '.join(bad)} exits 2")
    p = run(a.cli, ["experiment", "nonsense", "--seeds", "2", "--out", os.path.join(a.work, "bad")], 2)
    check(p.returncode == 2 and "unknown experiment" in p.stderr, "an unknown experiment exits 2")

    p = run(a.cli, ["experiment", "induction", "--out", os.path.join(a.work, "bad"), "--steps", "0"], 2)
    check(p.returncode == 2 and "--steps" in p.stderr,
          "--steps 0 exits 2 (it ran the protocol's 62,800 steps)")
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--threshold", "nan",
                    "--out", os.path.join(a.work, "bad")], 2)
    check(p.returncode == 2 and "--threshold" in p.stderr, "--threshold nan exits 2")
    p = run(a.cli, ["experiment", "induction", "--jobs", "3", "--out", os.path.join(a.work, "bad")], 2)
    check(p.returncode == 2 and "--seeds" in p.stderr, "--jobs without --seeds exits 2 (it was ignored)")

    # 5. Checked before any seed or stage starts (exit 2, the usage code of docs/cli.md, nothing
    # created): what the task generator refuses, and seeds past 2^63 − 1 (data.task_params.seed
    # is a JSON integer); "-1" was read as 2^64 − 1.
    gap = ["--steps", "2", "--threads", "1", "--set", "model.d_model=16"]
    for bad, says in (("data.task_params.min_entries=9", "min_entries"),
                      ("data.task_params.n_test=0", "n_test"),
                      ("model.max_len=8", "model.max_len")):
        for seeds in ([], ["--seeds", "2"]):
            out = os.path.join(a.work, "task-" + bad.split("=")[0].split(".")[-1] + str(len(seeds)))
            p = run(a.cli, ["experiment", "gap-matching", "--out", out, "--set", bad] + gap + seeds, 2)
            check(p.returncode == 2 and says in p.stderr and
                  (not os.path.exists(out) or os.listdir(out) == []),
                  f"--set {bad} {' '.join(seeds)}: exit 2 naming {says}, nothing run "
                  f"({p.returncode}: {p.stderr[-200:]})")
    for seed, seeds, says in (("-1", [], "--seed"),
                              ("9223372036854775807", ["--seeds", "2"], "past the last seed")):
        out = os.path.join(a.work, "seed-range")
        p = run(a.cli, ["experiment", "gap-matching", "--out", out, "--seed", seed] + gap + seeds, 2)
        check(p.returncode == 2 and says in p.stderr and not os.path.exists(out),
              f"--seed {seed} {' '.join(seeds)}: exit 2 saying '{says}' ({p.stderr[-200:]})")

    # A causal objective on a model set to read later positions (session 35): the train stage
    # refused it after the runs before it had trained (phone-book: three of four models), and a
    # grid started every seed to see each fail with exit 3.
    for name, bad, seeds in (("induction", "model.causal=false", []),
                             ("induction", "model.causal=false", ["--seeds", "2"]),
                             ("gap-matching", "train.objective=clm", []),
                             ("phone-book", "model.causal=false", [])):
        out = os.path.join(a.work, "causal-" + name + str(len(seeds)))
        p = run(a.cli, ["experiment", name, "--out", out, "--set", bad] + gap + seeds, 2)
        check(p.returncode == 2 and "causal" in p.stderr and
              (not os.path.exists(out) or os.listdir(out) == []),
              f"{name} --set {bad} {' '.join(seeds)}: exit 2 before any stage "
              f"({p.returncode}: {p.stderr[-200:]})")
    # phone-book derives seeds up to --seed + 8000 (the fine-tune's + 7, the books' + 1000·m):
    # a --seed without that room was trained, then refused by the scoring stage.
    out = os.path.join(a.work, "phone-seed")
    p = run(a.cli, ["experiment", "phone-book", "--out", out, "--seed", "9223372036854775000"] +
            gap, 2)
    check(p.returncode == 2 and "--seed 9223372036854775000" in p.stderr and
          not os.path.exists(out), f"phone-book --seed near 2^63: exit 2 naming it ({p.stderr[-200:]})")
    # --set train.steps=N is --steps N: the steps recorded and the protocol note follow it (they
    # said the protocol's 62,800 for a run of 2); both at once are refused.
    out = os.path.join(a.work, "set-steps")
    p = run(a.cli, ["experiment", "induction", "--out", out, "--set", "train.steps=2"] + tiny[2:])
    r = json.load(open(os.path.join(out, "results.json"))) if p.returncode == 0 else {}
    md = open(os.path.join(out, "results.md")).read() if p.returncode == 0 else ""
    check(r.get("steps") == 2 and "(this run: 2 steps, not the protocol's 62800)" in md and
          "training 2 steps" in p.stdout,
          f"--set train.steps=2 is recorded and said as 2 steps ({r.get('steps')})")
    p = run(a.cli, ["experiment", "induction", "--out", os.path.join(a.work, "bad"),
                    "--set", "train.steps=3"] + tiny, 2)
    check(p.returncode == 2 and "give one of them" in p.stderr,
          "--steps with --set train.steps exits 2")
    # A grid given --set train.steps=2 is the grid of --steps 2: run again (as a failed seed's
    # message says), it skips its finished seeds; its children recorded "--steps 2" and no
    # --set, and the grid compared them with its raw --set list ("other options", exit 2).
    out = os.path.join(a.work, "grid-set-steps")
    args = ["experiment", "induction", "--seeds", "2", "--seed", "3", "--out", out,
            "--set", "train.steps=2"] + tiny[2:]
    p = run(a.cli, args)
    check(p.returncode == 0, f"a grid with --set train.steps=2 runs ({p.stderr[-200:]})")
    p = run(a.cli, args)
    check(p.returncode == 0 and p.stdout.count("finished earlier") == 2,
          f"and run again skips both finished seeds ({p.returncode}: {p.stderr[-300:]})")
    p = run(a.cli, args[:-len(tiny[2:]) - 2] + ["--steps", "2"] + tiny[2:])
    check(p.returncode == 0 and p.stdout.count("finished earlier") == 2,
          f"as does the same grid given --steps 2 ({p.returncode}: {p.stderr[-300:]})")

    # 6. A directory's results are replaced only by a run of the same kind and experiment.
    before = open(os.path.join(grid, "results.json")).read()
    for args, says in ((["induction"], "a grid of seeds"),
                       (["gap-matching"], "holds experiment induction")):
        p = run(a.cli, ["experiment"] + args + ["--out", grid] + tiny, 2)
        check(p.returncode == 2 and says in p.stderr and
              open(os.path.join(grid, "results.json")).read() == before,
              f"a single {args[0]} run into a grid's folder is refused, the table kept "
              f"({p.stderr[-200:]})")
    single = os.path.join(a.work, "single")
    os.makedirs(single)
    for text, says in (("garbage {", "not an experiment's results"),
                       ('{"my": "own notes"}', "names no experiment"),
                       ('{"experiment": "induction", "seed": 1, "models": []}', "a single run")):
        open(os.path.join(single, "results.json"), "w").write(text)
        p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--out", single] + tiny, 2)
        check(p.returncode == 2 and says in p.stderr and
              open(os.path.join(single, "results.json")).read() == text and
              os.listdir(single) == ["results.json"],  # not even the grid's lock file
              f"a grid into a folder whose results.json is {text!r} is refused, the file kept "
              f"({p.stderr[-200:]})")
    # A single run trains into DIR/<arch> with --overwrite: a training run of the user's there
    # (DIR made by no experiment: no lock file) is refused, its checkpoint kept (it was replaced).
    users = os.path.join(a.work, "users-run")
    os.makedirs(os.path.join(users, "bigs"))
    open(os.path.join(users, "bigs", "model.ckpt.h5"), "w").write("the user's weeks of training")
    p = run(a.cli, ["experiment", "induction", "--out", users] + tiny, 2)
    check(p.returncode == 2 and "no experiment made" in p.stderr and
          open(os.path.join(users, "bigs", "model.ckpt.h5")).read() == "the user's weeks of training",
          f"a single run into a folder holding the user's own run is refused ({p.stderr[-200:]})")
    # A run in a folder the experiment does not train into is not its business.
    os.rename(os.path.join(users, "bigs"), os.path.join(users, "my-baseline"))
    p = run(a.cli, ["experiment", "induction", "--out", users] + tiny)
    check(p.returncode == 0 and
          open(os.path.join(users, "my-baseline", "model.ckpt.h5")).read() ==
          "the user's weeks of training",
          f"a run in another folder of --out neither refuses nor is touched ({p.stderr[-200:]})")
    # Probe V5 (session 37). A refused grid left its lock file in the user's folder, and the lock
    # then made a single run take the folder for an experiment's and replace the user's run.
    mine = os.path.join(a.work, "users-folder")
    os.makedirs(os.path.join(mine, "seed-3"))
    open(os.path.join(mine, "seed-3", "notes.txt"), "w").write("the user's notes")
    os.makedirs(os.path.join(mine, "bigs"))
    open(os.path.join(mine, "bigs", "model.ckpt.h5"), "w").write("the user's run")
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--seed", "2", "--out", mine]
            + tiny, 2)
    check(p.returncode == 2 and "seed-3" in p.stderr and
          sorted(os.listdir(mine)) == ["bigs", "seed-3"],
          f"a refused grid leaves the user's folder as it was, no lock file "
          f"({sorted(os.listdir(mine))}: {p.stderr[-200:]})")
    p = run(a.cli, ["experiment", "induction", "--out", mine] + tiny, 2)
    check(p.returncode == 2 and
          open(os.path.join(mine, "bigs", "model.ckpt.h5")).read() == "the user's run",
          f"and a single run after it is still refused, the user's run kept ({p.stderr[-200:]})")
    # A finished seed's results.json of the wrong shape (written by hand: docs/experiments.md):
    # "internal error", exit 3, and the grid's previous table deleted. Now exit 2 naming the file,
    # before anything is deleted.
    shaped = os.path.join(a.work, "shape")
    for s_ in (1, 2):
        os.makedirs(os.path.join(shaped, f"seed-{s_}"))
        with open(os.path.join(shaped, f"seed-{s_}", "results.json"), "w") as f:
            json.dump(induction_results((0.9, 0.4, 1.0), ((1.0, 0.9),) * 3), f)
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--out", shaped])
    check(p.returncode == 0, f"two hand-written seeds aggregate ({p.stderr[-200:]})")
    table = open(os.path.join(shaped, "results.json")).read()
    for bad in ({"label": "X"}, {"label": "X", "test": 5}, 7):
        r = induction_results((0.9, 0.4, 1.0), ((1.0, 0.9),) * 3)
        r["models"][1] = bad
        with open(os.path.join(shaped, "seed-2", "results.json"), "w") as f:
            json.dump(r, f)
        p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--out", shaped], 2)
        check(p.returncode == 2 and "seed-2" in p.stderr and "cannot be tabled" in p.stderr and
              open(os.path.join(shaped, "results.json")).read() == table,
              f"a seed's results.json with models[1] = {bad!r} is refused naming it, the table "
              f"kept ({p.returncode}: {p.stderr[-200:]})")
    # A file named like a seed folder: said as a file (the message said "this folder").
    filed = os.path.join(a.work, "seed-file")
    os.makedirs(filed)
    open(os.path.join(filed, "seed-2"), "w").write("the user's file")
    p = run(a.cli, ["experiment", "induction", "--seeds", "2", "--out", filed] + tiny, 2)
    check(p.returncode == 2 and "a file is there" in p.stderr and
          open(os.path.join(filed, "seed-2")).read() == "the user's file",
          f"a file named seed-2 is refused as a file, kept ({p.stderr[-200:]})")
    # The phone book's seed room under a grid: said of the grid, not of a --seed nobody typed.
    p = run(a.cli, ["experiment", "phone-book", "--seeds", "2", "--seed", "9223372036854767807",
                    "--out", os.path.join(a.work, "pb-seeds")], 2)
    check(p.returncode == 2 and "--seed 9223372036854767807 with --seeds 2" in p.stderr and
          "9223372036854767808:" not in p.stderr,
          f"the phone book's seed limit under a grid names the given --seed ({p.stderr[-200:]})")
    # What the runs used, recorded: --threads 0 as this machine's core count, --device auto as
    # the device found, so that a grid reuses a seed only when it ran as the others do.
    used = os.path.join(a.work, "used")
    p = run(a.cli, ["experiment", "induction", "--out", used, "--threads", "0", "--device", "auto"]
            + tiny[:2] + tiny[4:])
    r = json.load(open(os.path.join(used, "results.json"))) if p.returncode == 0 else {}
    check(r.get("threads") == os.cpu_count() and r.get("device") in ("cpu", "cuda"),
          f"--threads 0 --device auto record {os.cpu_count()} threads and the device "
          f"({r.get('threads')}, {r.get('device')})")

    # 4. A grid ends with its seeds, and one directory holds one experiment at a time.
    long_run = ["experiment", "induction", "--seeds", "2", "--seed", "1", "--steps", "100000",
                "--threads", "1", "--set", "model.d_model=16"]

    def seed_processes(out):
        """pids of the processes whose command line writes into OUT/seed-*."""
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if any(arg.decode(errors="replace").startswith(out + "/seed-") for arg in cmd):
                pids.append(int(pid))
        return pids

    def wait_for(cond, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if cond():
                return True
            time.sleep(0.2)
        return cond()

    for how in ("SIGKILL", "SIGINT"):
        out = os.path.join(a.work, "ends-" + how.lower())
        grid = subprocess.Popen([a.cli] + long_run + ["--out", out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        started = wait_for(lambda: seed_processes(out), 60)
        check(started, f"{how}: the grid started its seed")
        if how == "SIGKILL":
            again = run(a.cli, long_run + ["--out", out], 2)
            check(again.returncode == 2 and "another experiment is running" in again.stderr,
                  "a second grid into the same directory is refused while the first runs")
            grid.kill()
        else:
            grid.send_signal(signal.SIGINT)
        try:
            code = grid.wait(60)
        except subprocess.TimeoutExpired:
            grid.kill()
            code = None
        if how == "SIGINT":
            check(code == 130, f"SIGINT: the grid exits 130 (got {code})")
            said = grid.stdout.read()
            check("interrupted" in said and "failed (exit 130)" not in said,
                  f"SIGINT: the stopped seed is said interrupted, not failed ({said[-300:]!r})")
        gone = wait_for(lambda: not seed_processes(out), 60)
        check(gone, f"{how}: no seed or stage of the grid runs on after it ended "
                    f"(left: {seed_processes(out)})")
        for pid in seed_processes(out):
            os.kill(pid, signal.SIGKILL)

    # A seed killed by a signal (the out-of-memory killer, a person's kill -9) is said so, with
    # what it wrote or that it wrote nothing, never an empty text after "seed N (exit 137): ".
    out = os.path.join(a.work, "seed-killed")
    grid = subprocess.Popen([a.cli] + long_run + ["--jobs", "1", "--out", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def seed_runner():
        """The grid's own child (the seed's `experiment` process), once it runs."""
        for pid in seed_processes(out):
            try:
                if int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]) == grid.pid:
                    return pid
            except (OSError, IndexError, ValueError):
                pass
        return None

    check(wait_for(lambda: seed_runner() is not None, 60), "seed kill: the grid started a seed")
    end = time.time() + 120  # each seed as it starts (the grid goes on to the next one)
    while grid.poll() is None and time.time() < end:
        runner = seed_runner()
        if runner is not None:
            try:
                os.kill(runner, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
    if grid.poll() is None:
        grid.kill()
    _, said = grid.communicate()
    line = next((l for l in said.splitlines() if "(exit 137" in l), "")
    check(grid.returncode == 3 and "ended by signal 9" in line and
          not line.rstrip().endswith(":"),
          f"a seed killed by SIGKILL is said to have ended by signal 9, with its messages or "
          f"'it wrote no message' (exit {grid.returncode}, {said[-400:]!r})")
    for pid in seed_processes(out):
        os.kill(pid, signal.SIGKILL)

    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
