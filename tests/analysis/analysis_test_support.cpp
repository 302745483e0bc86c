#include "analysis_test_support.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QProcess>

#include <cmath>
#include <fstream>

namespace analysis_test {

QString dump_dir() {
    return QStringLiteral(ROUTESCOPE_TEST_DATA) + "/analysis";
}

std::string dump(const char* name) {
    return (dump_dir() + "/" + name).toStdString();
}

ProcessResult run(const QString& program, const QStringList& args, int timeout_ms) {
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, args);
    ProcessResult result;
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        result.output = program + " did not finish: " + process.errorString();
        return result;
    }
    result.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.output = QString::fromUtf8(process.readAll());
    return result;
}

ProcessResult run_cli(const QStringList& args) {
    return run(QStringLiteral(ROUTESCOPE_CLI), args);
}

QString make_dumps() {
    QDir().mkpath(dump_dir());
    const auto r = run(
        QStringLiteral(ROUTESCOPE_PYTHON),
        {QStringLiteral(ROUTESCOPE_SOURCE_DIR) + "/tests/reference/analysis/make_analysis_dumps.py",
         dump_dir()});
    return r.exit_code == 0 ? QString() : "make_analysis_dumps.py failed: " + r.output;
}

nlohmann::json read_json(const QString& path) {
    std::ifstream in(path.toStdString());
    if (!in) return nullptr;
    return nlohmann::json::parse(in, nullptr, false);
}

std::string compare_with_reference(const nlohmann::json& reference, const nlohmann::json& actual,
                                   const std::string& path) {
    if (reference.is_object()) {
        if (!actual.is_object()) return path + ": expected an object";
        for (const auto& [key, value] : reference.items()) {
            if (!actual.contains(key))
                return path + "/" + key + ": missing from the Routescope result";
            auto mismatch = compare_with_reference(value, actual.at(key), path + "/" + key);
            if (!mismatch.empty()) return mismatch;
        }
        return {};
    }
    if (reference.is_array()) {
        if (!actual.is_array() || actual.size() != reference.size())
            return path + ": array of " + std::to_string(reference.size()) + " vs " +
                   actual.dump().substr(0, 200);
        for (std::size_t i = 0; i < reference.size(); ++i) {
            auto mismatch =
                compare_with_reference(reference[i], actual[i], path + "/" + std::to_string(i));
            if (!mismatch.empty()) return mismatch;
        }
        return {};
    }
    if (reference.is_number()) {
        if (!actual.is_number()) return path + ": expected a number, found " + actual.dump();
        const double r = reference.get<double>(), a = actual.get<double>();
        const bool ok =
            reference.is_number_integer() ? a == r : std::abs(a - r) <= 1e-5 * std::abs(r) + 1e-9;
        return ok ? std::string()
                  : path + ": numpy " + reference.dump() + " vs routescope " + actual.dump();
    }
    return reference == actual ? std::string()
                               : path + ": " + reference.dump() + " vs " + actual.dump();
}

QString cli_matches_reference(const QString& kind, const QStringList& dumps,
                              const QStringList& options, const QString& input_flag) {
    // Tests that share dump_dir() run in parallel under ctest -j: the process id keeps their
    // result files apart.
    static int serial = 0;
    const QString stem = dump_dir() + "/" + kind + "-" +
                         QString::number(QCoreApplication::applicationPid()) + "-" +
                         QString::number(++serial);
    QStringList args = {"analyze", kind};
    for (const auto& d : dumps)
        args << input_flag << d;
    args << options << "--out" << stem + ".json"
         << "--csv" << stem + ".csv";
    const auto cli = run_cli(args);
    if (cli.exit_code != 0) return "routescope-cli " + args.join(' ') + " failed: " + cli.output;
    QStringList ref_args = {
        QStringLiteral(ROUTESCOPE_SOURCE_DIR) + "/tests/reference/analysis/reference_analysis.py",
        kind, dumps.front(), stem + ".json", stem + ".ref.json"};
    if (dumps.size() > 1) ref_args << dumps[1];
    const auto ref = run(QStringLiteral(ROUTESCOPE_PYTHON), ref_args);
    if (ref.exit_code != 0) return "reference_analysis.py failed: " + ref.output;
    const auto mismatch =
        compare_with_reference(read_json(stem + ".ref.json"), read_json(stem + ".json"));
    return QString::fromStdString(mismatch);
}

}  // namespace analysis_test
