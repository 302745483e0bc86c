// `routescope-cli experiment NAME --seeds N` (issue 27; docs/cli.md "experiment",
// docs/experiments.md "Seeds and intervals"): which finished seeds a grid may table as its own,
// what it may delete, what it checks before any seed starts, and what its table shows. Most cases
// put hand-written seed folders in place (a results.json as `experiment` writes it), so the grid
// runs nothing; two tiny real grids (induction, gap matching: 2 seeds, 2 steps, d = 16) check the
// bins and the record. Expected values come from the docs (exit 2 for a refusal, before anything
// runs or is deleted), from the task's definition (the distance range of gap matching, engine/data/
// gap_matching_task.cpp's header) and from the per-seed files, recounted here.
//
// ROUTESCOPE_TEST_CLI, when set, names the routescope-cli to test instead of this build's (to see
// the tests fail against an older binary without replacing the shared build's).
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "train_test_support.hpp"

using train_test::read_json;
using train_test::read_lines;
using train_test::write_text;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

train_test::CliResult run_cli(const QStringList& args) {
    return train_test::run_cli(args, 300000);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A finished induction seed as `experiment induction --seed S` records it (the options, then the
// three models' test accuracy and two bins).
// What a run records for --threads 0 (the default): this machine's core count.
int cores() {
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

json induction_seed(int seed, double base, json steps = 62800, int threads = cores(),
                    const std::string& device = "cpu", json sets = json::array()) {
    json models = json::array();
    const char* labels[] = {"GATED/SSM", "STACK/SSM", "STACK/ATT"};
    for (int i = 0; i < 3; ++i)
        models.push_back({{"label", labels[i]},
                          {"test", {{"accuracy", base + 0.01 * i}}},
                          {"bins", {{{"accuracy", base}}, {{"accuracy", base}}}}});
    return {{"experiment", "induction"},
            {"seed", seed},
            {"steps", steps},
            {"threads", threads},
            {"device", device},
            {"sets", sets},
            {"attribute", "distance"},
            {"bins", {{{"name", "distance 2–16"}}, {{"name", "distance 17–30"}}}},
            {"models", models}};
}

void put_seed(const std::string& grid, int seed, const json& results) {
    fs::create_directories(grid + "/seed-" + std::to_string(seed));
    write_text(grid + "/seed-" + std::to_string(seed) + "/results.json", results.dump(2));
}

QStringList tiny(const QString& name, const QString& out, const QString& n_test = "30") {
    return {"experiment", name,
            "--out",      out,
            "--seeds",    "2",
            "--seed",     "7",
            "--jobs",     "2",
            "--steps",    "2",
            "--threads",  "1",
            "--set",      "model.d_model=16",
            "--set",      "data.task_params.n_valid=20",
            "--set",      "data.task_params.n_test=" + n_test};
}

}  // namespace

class TestSeedGridCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }

    // Exit 2 with `needle` in the message, and nothing run or written: no seed started (no
    // DIR/seed-S.stdout) and no grid results.json.
    void expect_refused(const train_test::CliResult& r, const std::string& grid,
                        const QString& needle) {
        QVERIFY2(r.exit_code == 2, qPrintable(QString::number(r.exit_code) + r.err + r.out));
        QVERIFY2(r.err.contains(needle), qPrintable(r.err));
        QVERIFY2(!r.out.contains("running"), qPrintable(r.out));
        for (int s = 1; s <= 3; ++s)
            QVERIFY(!fs::exists(grid + "/seed-" + std::to_string(s) + ".stdout"));
        QVERIFY(!fs::exists(grid + "/results.json"));
    }

private slots:
    // Defect A: a seed trained with --steps 20 is no seed of the protocol's default-steps grid.
    void aSeedOfOtherStepsIsRefusedWhenStepsIsLeftOut() {
        const std::string grid = path("steps");
        put_seed(grid, 1, induction_seed(1, 0.5, 20));
        put_seed(grid, 2, induction_seed(2, 0.6, 20));
        const auto r =
            run_cli({"experiment", "induction", "--seeds", "2", "--out", qpath("steps")});
        expect_refused(r, grid, "--steps 20");
        QVERIFY(fs::exists(grid + "/seed-1/results.json"));  // refused, not deleted
        // With the same --steps the seeds are the grid's: skipped and tabled, no run.
        const auto same = run_cli(
            {"experiment", "induction", "--seeds", "2", "--steps", "20", "--out", qpath("steps")});
        QVERIFY2(same.exit_code == 0, qPrintable(same.err));
        QCOMPARE(same.out.count("skipped"), 2);
        // The grid's results.json records what its seeds ran with.
        const auto a = read_json(grid + "/results.json");
        QCOMPARE(a["steps"], json(20));
        QCOMPARE(a["sets"], json::array());
        QCOMPARE(a["threads"], json(cores()));
        QCOMPARE(a["device"], json("cpu"));
    }

    // Defect B: another experiment's seeds are not tabled as this one's.
    void anotherExperimentsSeedsAreRefused() {
        const std::string grid = path("other");
        put_seed(grid, 1, induction_seed(1, 0.5, 6000));
        put_seed(grid, 2, induction_seed(2, 0.6, 6000));
        const auto r =
            run_cli({"experiment", "gap-matching", "--seeds", "2", "--out", qpath("other")});
        expect_refused(r, grid, "induction");
    }

    // Defect T: bit-identical results hold for one thread count and device only (docs/cli.md).
    void aSeedOfOtherThreadsOrDeviceIsRefused() {
        const std::string grid = path("threads");
        put_seed(grid, 1, induction_seed(1, 0.5, 62800, 1));
        put_seed(grid, 2, induction_seed(2, 0.6, 62800, 1));
        auto r = run_cli({"experiment", "induction", "--seeds", "2", "--threads", "2", "--out",
                          qpath("threads")});
        expect_refused(r, grid, "--threads 1");
        const std::string dev = path("device");
        put_seed(dev, 1, induction_seed(1, 0.5, 62800, cores(), "cuda"));
        put_seed(dev, 2, induction_seed(2, 0.6, 62800, cores(), "cuda"));
        r = run_cli({"experiment", "induction", "--seeds", "2", "--out", qpath("device")});
        expect_refused(r, dev, "--device cuda");
        // Seeds finished before --threads 0 was recorded as the core count recorded 0: a grid
        // given 0 again (the default) takes them; one given another count does not.
        const std::string legacy = path("legacy");
        put_seed(legacy, 1, induction_seed(1, 0.5, 62800, 0));
        put_seed(legacy, 2, induction_seed(2, 0.6, 62800, 0));
        r = run_cli({"experiment", "induction", "--seeds", "2", "--out", qpath("legacy")});
        QVERIFY2(r.exit_code == 0 && r.out.count("skipped") == 2, qPrintable(r.err + r.out));
        r = run_cli({"experiment", "induction", "--seeds", "2", "--threads", "1", "--out",
                     qpath("legacy")});
        QCOMPARE(r.exit_code, 2);
    }

    // Defect U: a DIR/seed-S the grid did not make (no results.json, no experiment's lock file)
    // is the user's: refused, kept.
    void aUserFolderNamedLikeASeedIsNotDeleted() {
        const std::string grid = path("user");
        fs::create_directories(grid + "/seed-1");
        write_text(grid + "/seed-1/data.csv", "mine\n");
        const auto r = run_cli({"experiment", "induction", "--seeds", "2", "--steps", "2",
                                "--threads", "1", "--out", qpath("user")});
        expect_refused(r, grid, QString::fromStdString(grid + "/seed-1"));
        QCOMPARE(read_text(grid + "/seed-1/data.csv"), std::string("mine\n"));
    }

    // Defect F: a bad --set is exit 2 before any seed starts, as for a single run.
    void aBadSetIsRefusedBeforeAnySeedStarts() {
        for (const char* set : {"model.nonexistent=3", "model.arch=bert"}) {
            const std::string grid = path(std::string("bad-") + set);
            const auto r = run_cli({"experiment", "induction", "--seeds", "3", "--steps", "2",
                                    "--out", QString::fromStdString(grid), "--set", set});
            expect_refused(r, grid, QString::fromStdString(std::string(set).substr(0, 10)));
        }
    }

    // Defect G: slstm-vs-bert has no pass mark; --threshold is refused, not a column of nulls.
    void thresholdIsRefusedWithoutAPassMark() {
        const std::string grid = path("slstm");
        for (int s = 1; s <= 2; ++s)
            put_seed(grid, s,
                     {{"experiment", "slstm-vs-bert"},
                      {"seed", s},
                      {"steps", nullptr},
                      {"threads", cores()},
                      {"sets", json::array()},
                      {"models", json::array()}});
        const auto r = run_cli({"experiment", "slstm-vs-bert", "--seeds", "2", "--threshold", "0.5",
                                "--out", qpath("slstm")});
        expect_refused(r, grid, "--threshold");
    }

    // Defects D and E: results.md lists each seed's value, and the threshold as given.
    void theTableHasPerSeedValuesAndTheThresholdAsGiven() {
        const std::string grid = path("md");
        put_seed(grid, 1, induction_seed(1, 0.5));
        put_seed(grid, 2, induction_seed(2, 0.25));
        const auto r = run_cli({"experiment", "induction", "--seeds", "2", "--threshold", "0.048",
                                "--out", qpath("md")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const std::string md = read_text(grid + "/results.md");
        QVERIFY2(md.find("share ≥ 0.048 |") != std::string::npos, md.c_str());
        // GATED/SSM's test accuracy: 0.5 (seed 1), 0.25 (seed 2), in seed order.
        std::istringstream lines(md);
        std::string line, row;
        while (std::getline(lines, line))
            if (line.rfind("| GATED/SSM | test accuracy |", 0) == 0) row = line;
        QVERIFY2(row.find("| 0.500, 0.250 |") != std::string::npos, row.c_str());
    }

    // A corrupt seed results.json is named (exit 2), not silently taken as "other options".
    void aCorruptSeedResultIsNamed() {
        const std::string grid = path("corrupt");
        put_seed(grid, 1, induction_seed(1, 0.5));
        fs::create_directories(grid + "/seed-2");
        write_text(grid + "/seed-2/results.json", "{\"experiment\": ");
        const auto r =
            run_cli({"experiment", "induction", "--seeds", "2", "--out", qpath("corrupt")});
        expect_refused(r, grid, QString::fromStdString(grid + "/seed-2/results.json"));
    }

    // A real grid: the record of its options; an interrupted seed's folder (it holds the lock an
    // experiment makes first) run again; then a rerun without --steps refused (defect A).
    void aRealGridRecordsItsOptionsAndRefusesTheDefaultSteps() {
        const std::string grid = path("real");
        fs::create_directories(grid + "/seed-8");
        write_text(grid + "/seed-8/.routescope-experiment.lock", "");
        write_text(grid + "/seed-8/junk.txt", "an interrupted run\n");
        const auto r = run_cli(tiny("induction", qpath("real")));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        QVERIFY(!fs::exists(grid + "/seed-8/junk.txt"));
        const auto a = read_json(grid + "/results.json");
        QCOMPARE(a["experiment"], json("induction"));
        QCOMPARE(a["steps"], json(2));
        QCOMPARE(a["sets"], json({"model.d_model=16", "data.task_params.n_valid=20",
                                  "data.task_params.n_test=30"}));
        QCOMPARE(a["threads"], json(1));
        QCOMPARE(a["device"], json("cpu"));
        // Each headline row's values are the seeds' own test accuracies, recounted from their
        // predictions; a Wilson bound at 0 or n correct is exactly 0 or 1.
        for (int s = 7; s <= 8; ++s) {
            const std::string seed = grid + "/seed-" + std::to_string(s);
            const auto done = read_json(seed + "/results.json");
            QCOMPARE(done["steps"], json(2));
            for (std::size_t m = 0; m < 3; ++m) {
                const auto& model = done["models"][m];
                const auto preds = read_lines(seed + "/" + model["predictions"].get<std::string>());
                double right = 0;
                for (const auto& p : preds)
                    right += p["correct"].get<bool>() ? 1 : 0;
                const double acc = right / double(preds.size());
                for (const auto& row : a["rows"])
                    if (row["model"] == model["label"] && row["metric"] == "test accuracy")
                        QCOMPARE(row["values"][s - 7].get<double>(), acc);
                for (const auto& b : model["bins"]) {
                    if (b["correct"] == 0) QCOMPARE(b["wilson"][0].get<double>(), 0.0);
                    if (b["correct"] == b["examples"]) QCOMPARE(b["wilson"][1].get<double>(), 1.0);
                }
            }
        }
        QStringList again = tiny("induction", qpath("real"));
        const auto at = again.indexOf("--steps");
        again.removeAt(at);
        again.removeAt(at);
        const auto refused = run_cli(again);
        QVERIFY2(refused.exit_code == 2, qPrintable(refused.err + refused.out));
        QVERIFY2(refused.err.contains("--steps 2"), qPrintable(refused.err));
        QVERIFY(fs::exists(grid + "/seed-7/results.json") && fs::exists(grid + "/results.json"));
    }

    // Defect C: every seed bins the attribute the same way, so each bin row of the grid has
    // n = seeds. The bins: 4 equal-width integer bins over gap matching's distance range, which
    // its definition fixes at 1 + t·(sentence_len + 1) for the target sentence t < max_entries:
    // 1 … 1 + 7·7 = 50 with the defaults (8 sentences of 6 words) — width ⌈50/4⌉ = 13.
    void gapMatchingSeedsShareTheirBins() {
        const std::string grid = path("gap");
        // 100 test examples (docs/cli.md's example): each bin has some in every seed.
        // Seeds 1 and 2: their test splits' own ranges differ (the bins did).
        QStringList args = tiny("gap-matching", qpath("gap"), "100");
        args[args.indexOf("--seed") + 1] = "1";
        const auto r = run_cli(args);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        const json want = {{{"lo", 1}, {"hi", 13}},
                           {{"lo", 14}, {"hi", 26}},
                           {{"lo", 27}, {"hi", 39}},
                           {{"lo", 40}, {"hi", 50}}};
        for (int s = 1; s <= 2; ++s) {
            const auto done = read_json(grid + "/seed-" + std::to_string(s) + "/results.json");
            QCOMPARE(done["bins"].size(), std::size_t{4});
            for (std::size_t b = 0; b < 4; ++b) {
                QCOMPARE(done["bins"][b]["lo"].get<double>(), want[b]["lo"].get<double>());
                QCOMPARE(done["bins"][b]["hi"].get<double>(), want[b]["hi"].get<double>());
            }
        }
        const auto a = read_json(grid + "/results.json");
        int bin_rows = 0;
        for (const auto& row : a["rows"]) {
            if (row["metric"].get<std::string>().rfind("distance", 0) != 0) continue;
            ++bin_rows;
            QVERIFY2(row["n"] == 2, row.dump().c_str());
        }
        QCOMPARE(bin_rows, 3 * 4);
    }
};

QTEST_GUILESS_MAIN(TestSeedGridCli)
#include "test_seed_grid_cli.moc"
