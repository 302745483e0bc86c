#include "app/gui/project_file.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <QFile>
#include <QFileInfo>

#include <functional>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"
#include "engine/io/atomic_file.hpp"
#include "views/visible_range.hpp"

namespace routescope::gui {
namespace {
constexpr const char* kFormat = "routescope-project";

// Rewrites every string in `j` that is one of `from` into the matching entry of `to`: for a view
// of a kind this version does not know, whose path settings it cannot name (kept as read, and
// written back relative to where the project is saved).
void map_paths(nlohmann::json& j, const QStringList& from, const QStringList& to) {
    if (j.is_string()) {
        const int i = from.indexOf(QString::fromStdString(j.get<std::string>()));
        if (i >= 0) j = to[i].toStdString();
    } else if (j.is_array() || j.is_object()) {
        for (auto& v : j)
            map_paths(v, from, to);
    }
}

nlohmann::json path_list(const QStringList& paths, const QDir& base) {
    nlohmann::json out = nlohmann::json::array();
    for (const QString& p : paths)
        out.push_back(base.relativeFilePath(p).toStdString());
    return out;
}

QStringList read_paths(const nlohmann::json& j, const char* key, const QDir& base) {
    QStringList out;
    if (!j.contains(key)) return out;
    if (!j[key].is_array()) throw FormatError(std::string("project: '") + key + "' is not a list");
    for (const auto& p : j[key]) {
        if (!p.is_string())
            throw FormatError(std::string("project: '") + key + "' holds a non-string entry");
        // A path cannot hold a NUL ("\u0000" in JSON): HDF5 printed 40 lines of "Broken
        // filename" and the view then said it needs a dump.
        if (p.get<std::string>().find('\0') != std::string::npos)
            throw FormatError(std::string("project: '") + key +
                              "' holds a path with a NUL character, which no file name has");
        // Longer than any path the system opens (PATH_MAX, 4096 bytes): laying out the error
        // text of a missing 4,000-byte path took 12 µs a byte, a 4 MB project a minute.
        if (p.get<std::string>().size() > 4096)
            throw FormatError(std::string("project: '") + key + "' holds a path of " +
                              std::to_string(p.get<std::string>().size()) +
                              " bytes, longer than any file name the system opens (4096)");
        out << QDir::cleanPath(base.absoluteFilePath(QString::fromStdString(p.get<std::string>())));
    }
    return out;
}

// The settings keys that hold file paths, per view kind (the views' Settings::from_json): a path
// there that is none of the project's files or the view's inputs (an Efficiency view's timings
// file, a hand-written project's dump) is still relative to the project file, never to the
// directory the workbench was started in. "a.path" is a key inside the object "a"; a list holds
// paths in each entry.
const std::map<QString, std::vector<std::string>>& path_keys() {
    static const std::map<QString, std::vector<std::string>> keys = {
        {"anisotropy", {"dumps"}},
        {"array_browser", {"file"}},
        {"efficiency", {"timings"}},
        {"gates", {"dump", "dump_b"}},
        {"implicit_attention", {"dump", "dump_b"}},
        {"kernels", {"a.path", "b.path"}},
        {"length_accuracy", {"a", "b"}},
        {"pca", {"dump", "dumps"}},
        {"similarity", {"dump_a", "dump_b"}},
        {"training", {"runs"}},
        {"transitions", {"dumps"}},
    };
    return keys;
}

bool knows_paths_of(const QString& kind) {
    return path_keys().count(kind) > 0;
}

// Applies `f` to every path string under the view kind's path keys: f(path, place) returns the
// new path; `place` is where it is in the settings ("dump_b", "dumps[1]", "a.path").
template <class F>
void for_each_setting_path(const QString& kind, nlohmann::json& settings, F f) {
    const auto it = path_keys().find(kind);
    if (it == path_keys().end() || !settings.is_object()) return;
    const auto apply = [&](nlohmann::json& v, const std::string& place) {
        if (v.is_string()) {
            const std::string s = v.get<std::string>();
            if (!s.empty()) v = f(QString::fromStdString(s), place).toStdString();
        } else if (v.is_array()) {
            for (std::size_t i = 0; i < v.size(); ++i)
                if (v[i].is_string() && !v[i].get<std::string>().empty())
                    v[i] = f(QString::fromStdString(v[i].get<std::string>()),
                             place + "[" + std::to_string(i) + "]")
                               .toStdString();
        }
    };
    for (const std::string& key : it->second) {
        const auto dot = key.find('.');
        if (dot == std::string::npos) {
            if (settings.contains(key)) apply(settings[key], key);
        } else {
            const std::string outer = key.substr(0, dot), inner = key.substr(dot + 1);
            if (settings.contains(outer) && settings[outer].is_object() &&
                settings[outer].contains(inner))
                apply(settings[outer][inner], key);
        }
    }
}

// Every path the project names, absolute, for map_paths.
QStringList all_paths(const Project& p) {
    QStringList out = p.files + p.runs;
    for (const auto& v : p.views)
        for (const QString& i : v.inputs)
            if (!out.contains(i)) out << i;
    out.removeDuplicates();
    return out;
}
}  // namespace

nlohmann::json Project::to_json(const QDir& base) const {
    const QStringList abs = all_paths(*this);
    QStringList rel;
    for (const QString& p : abs)
        rel << base.relativeFilePath(p);
    const QString dir = QDir::cleanPath(base.absolutePath());
    nlohmann::json views_json = nlohmann::json::array();
    for (const auto& v : views) {
        // A view the project had that could not be restored: as it was read, when its relative
        // paths still mean the same files (saved into the directory it was read from).
        if (v.verbatim && !v.as_read.is_null() && v.read_dir == dir) {
            views_json.push_back(v.as_read);
            continue;
        }
        // Only the settings that hold paths (path_keys): a choice whose value is also a file's
        // name ("measure": "angle" beside a dump named "angle") stays a choice.
        nlohmann::json settings = v.settings;
        if (knows_paths_of(v.kind))
            for_each_setting_path(v.kind, settings, [&](const QString& p, const std::string&) {
                return QDir::isAbsolutePath(p) ? base.relativeFilePath(p) : p;
            });
        else
            map_paths(settings, abs, rel);
        nlohmann::json view = {{"kind", v.kind.toStdString()},
                               {"inputs", path_list(v.inputs, base)},
                               {"settings", settings}};
        if (v.charts.is_array() && !v.charts.empty()) view["charts"] = v.charts;
        if (v.extra.is_object())
            for (const auto& [key, value] : v.extra.items())
                if (!view.contains(key)) view[key] = value;
        views_json.push_back(std::move(view));
    }
    nlohmann::json out = {{"format", kFormat},
                          {"version", kVersion},
                          {"files", path_list(files, base)},
                          {"runs", path_list(runs, base)},
                          {"views", views_json},
                          {"current", current}};
    if (!names.empty()) {
        out["names"] = nlohmann::json::object();
        for (const auto& [path, name] : names)
            out["names"][base.relativeFilePath(path).toStdString()] = name.toStdString();
    }
    if (!colours.empty()) {
        out["colours"] = nlohmann::json::object();
        for (const auto& [path, slot] : colours)
            out["colours"][base.relativeFilePath(path).toStdString()] = slot;
    }
    // A newer version's keys, as they were read (a project survives a save in this version).
    if (extra.is_object())
        for (const auto& [key, value] : extra.items())
            if (!out.contains(key)) out[key] = value;
    return out;
}

namespace {
// Integers written as whole numbers in another form ("version": 1.0, a slot 2.0), as the run
// configuration accepts them (docs/config.md); 1.5 stays a float and is refused as before.
nlohmann::json with_whole_numbers(const nlohmann::json& given) {
    nlohmann::json j = given;
    const auto whole = [](nlohmann::json& v) {
        if (!v.is_number_float()) return;
        const double x = v.get<double>();
        if (std::isfinite(x) && std::trunc(x) == x && std::abs(x) < 2147483648.0)
            v = static_cast<std::int64_t>(x);
    };
    if (!j.is_object()) return j;
    for (const char* key : {"version", "current"})
        if (j.contains(key)) whole(j[key]);
    if (j.contains("colours") && j["colours"].is_object())
        for (auto it = j["colours"].begin(); it != j["colours"].end(); ++it)
            whole(it.value());
    return j;
}
}  // namespace

Project Project::from_json(const nlohmann::json& given, const QDir& base) {
    const nlohmann::json j = with_whole_numbers(given);
    // json::value() throws type_error when the key holds another type: check the types first.
    if (!j.is_object() || !j.contains("format") || !j["format"].is_string() ||
        j["format"].get<std::string>() != kFormat)
        throw FormatError(std::string("project: 'format' is not \"") + kFormat + "\"");
    // A whole number beyond 64 bits (1e20, read as a float) is a whole number too: too large a
    // version, an index no view has.
    for (const char* key : {"version", "current"})
        if (j.contains(key) && !j[key].is_number_integer() &&
            !(j[key].is_number_float() && std::isfinite(j[key].get<double>()) &&
              std::trunc(j[key].get<double>()) == j[key].get<double>()))
            throw FormatError(std::string("project: '") + key + "' is not an integer");
    // Compared as the number the file holds: read into an int, 4294967297 was version 1 and
    // 18446744073709551615 was "version -1".
    if (j.contains("version")) {
        const nlohmann::json& v = j["version"];
        const bool below = v.is_number_float()      ? v.get<double>() < 1
                           : v.is_number_unsigned() ? v.get<std::uint64_t>() < 1
                                                    : v.get<std::int64_t>() < 1;
        const bool above = v.is_number_float()      ? v.get<double>() > kVersion
                           : v.is_number_unsigned() ? v.get<std::uint64_t>() > kVersion
                                                    : v.get<std::int64_t>() > kVersion;
        if (below)
            throw FormatError("project: version " + v.dump() +
                              " is no project format version (1 is the first)");
        if (above)
            throw FormatError("project: version " + v.dump() +
                              " is newer than this Routescope reads (" + std::to_string(kVersion) +
                              ")");
    }
    // Bounded: a project is a researcher's files and views (tens, hundreds), not a list of
    // 100,000 entries that the workbench would open one by one for hours (1000 missing files
    // take about 4 s to refuse; 2000, 12 s).
    constexpr std::size_t kMaxEntries = 1000;
    for (const char* key : {"files", "runs", "views"})
        if (j.contains(key) && j[key].is_array() && j[key].size() > kMaxEntries)
            throw FormatError(std::string("project: '") + key + "' holds " +
                              std::to_string(j[key].size()) + " entries, more than " +
                              std::to_string(kMaxEntries));
    Project p;
    p.files = read_paths(j, "files", base);
    // Dumps and checkpoints only: a project listed there was opened as a project, which opened
    // its own "files" again (a project that lists itself, or A → B → A, recursed until the stack
    // overflowed).
    // Nor predictions (*.jsonl), which open as an Accuracy-by-length view, not through the file
    // loader: the project's views waited for a verdict that never came (an export hung).
    for (qsizetype i = 0; i < p.files.size(); ++i) {
        const bool project = p.files[i].endsWith(".rsproj", Qt::CaseInsensitive);
        if (project || p.files[i].endsWith(".jsonl", Qt::CaseInsensitive))
            throw FormatError(
                "project: files[" + std::to_string(i) + "] '" +
                j["files"][static_cast<std::size_t>(i)].get<std::string>() + "' is " +
                (project ? "a project"
                         : "an evaluation's predictions (a length_accuracy view's input)") +
                ": 'files' holds dumps and checkpoints only");
    }
    p.runs = read_paths(j, "runs", base);
    // An index no view has (after the views are read) is no view in front; read as the number
    // the file holds, not narrowed (4294967297 was view 1).
    const nlohmann::json current = j.value("current", nlohmann::json(-1));
    if (j.contains("names")) {
        if (!j["names"].is_object()) throw FormatError("project: 'names' is not an object");
        for (const auto& [rel, name] : j["names"].items()) {
            if (!name.is_string())
                throw FormatError("project: names['" + rel + "'] is not a string");
            p.names.emplace_back(
                QDir::cleanPath(base.absoluteFilePath(QString::fromStdString(rel))),
                QString::fromStdString(name.get<std::string>()));
        }
    }
    if (j.contains("colours")) {
        if (!j["colours"].is_object()) throw FormatError("project: 'colours' is not an object");
        for (const auto& [rel, slot] : j["colours"].items()) {
            if (!slot.is_number_integer() || slot.get<std::int64_t>() < 0 ||
                slot.get<std::int64_t>() > 7)
                throw FormatError("project: colours['" + rel + "'] is not a colour slot 0–7");
            p.colours.emplace_back(
                QDir::cleanPath(base.absoluteFilePath(QString::fromStdString(rel))),
                static_cast<int>(slot.get<std::int64_t>()));
        }
    }
    for (const auto& [key, value] : j.items())
        if (key != "format" && key != "version" && key != "files" && key != "runs" &&
            key != "views" && key != "current" && key != "names" && key != "colours")
            p.extra[key] = value;
    if (j.contains("views") && !j["views"].is_array())
        throw FormatError("project: 'views' is not a list");
    int index = 0;
    for (const auto& v : j.value("views", nlohmann::json::array())) {
        if (!v.is_object() || !v.contains("kind") || !v["kind"].is_string())
            throw FormatError("project: views[" + std::to_string(index) + "] has no 'kind'");
        ProjectView view;
        view.kind = QString::fromStdString(v["kind"].get<std::string>());
        const std::string at = "project: views[" + std::to_string(index) + "]";
        try {
            view.inputs = read_paths(v, "inputs", base);
        } catch (const FormatError& e) {  // "project: 'inputs' ...": which view's
            throw FormatError(at + ": " + std::string(e.what()).substr(9));
        }
        view.settings = v.value("settings", nlohmann::json::object());
        view.charts = v.value("charts", nlohmann::json::array());
        for (const auto& [key, value] : v.items())
            if (key != "kind" && key != "inputs" && key != "settings" && key != "charts")
                view.extra[key] = value;
        view.as_read = v;
        view.read_dir = QDir::cleanPath(base.absolutePath());
        if (!view.charts.is_array()) throw FormatError(at + ".charts is not a list");
        // Each chart's options as AnalysisView::chart_options writes them; anything else was
        // ignored without a word (limits [5, 1], "log_x": "yes", legend "sideways").
        for (std::size_t c = 0; c < view.charts.size(); ++c) {
            const auto& o = view.charts[c];
            const std::string where = at + ".charts[" + std::to_string(c) + "]";
            if (!o.is_object()) throw FormatError(where + " is not an object");
            for (const char* key : {"log_x", "log_y"})
                if (o.contains(key) && !o[key].is_boolean())
                    throw FormatError(where + "." + key + " is not true or false");
            if (o.contains("legend") &&
                (!o["legend"].is_string() ||
                 (o["legend"] != "below" && o["legend"] != "right" && o["legend"] != "hidden")))
                throw FormatError(where + ".legend is not one of below, right, hidden");
            if (o.contains("limits")) {
                const auto& l = o["limits"];
                if (!l.is_object()) throw FormatError(where + ".limits is not an object");
                for (const char* axis : {"x", "y"}) {
                    const bool ok = l.contains(axis) && l[axis].is_array() && l[axis].size() == 2 &&
                                    l[axis][0].is_number() && l[axis][1].is_number() &&
                                    l[axis][0].get<double>() < l[axis][1].get<double>();
                    if (!ok)
                        throw FormatError(where + ".limits." + axis +
                                          " is not [low, high] with low < high");
                    // Limits no axis can draw (views/visible_range.hpp): a span past the largest
                    // double hung the export in Qt Charts' label code; a span of a few ulps
                    // wrote an unreadable PDF. In the drawn coordinate: log10 on a log axis.
                    const std::string log_key = std::string("log_") + axis;
                    double lo = l[axis][0].get<double>(), hi = l[axis][1].get<double>();
                    if (o.contains(log_key) && o[log_key] == true && lo > 0) {
                        lo = std::log10(lo);
                        hi = std::log10(hi);
                    }
                    const auto problem =
                        views::drawable_range_problem({lo, hi}, {std::nan(""), std::nan("")});
                    if (problem == views::RangeProblem::too_large)
                        throw FormatError(where + ".limits." + axis +
                                          " cannot be drawn: each end must lie within ±1e300");
                    if (problem == views::RangeProblem::too_narrow)
                        throw FormatError(where + ".limits." + axis +
                                          " cannot be drawn: its span is below 1e-9 of the larger "
                                          "end's magnitude");
                }
            }
        }
        p.views.push_back(std::move(view));
        ++index;
    }
    if (current.is_number_unsigned() && current.get<std::uint64_t>() < p.views.size())
        p.current = static_cast<int>(current.get<std::uint64_t>());
    else if (current.is_number_integer() && !current.is_number_unsigned() &&
             current.get<std::int64_t>() >= 0 &&
             static_cast<std::uint64_t>(current.get<std::int64_t>()) < p.views.size())
        p.current = static_cast<int>(current.get<std::int64_t>());
    else if (current.is_number_float() && current.get<double>() >= 0 &&
             current.get<double>() < static_cast<double>(p.views.size()))
        p.current = static_cast<int>(current.get<double>());  // a whole number (checked above)
    // Relative paths inside the settings made absolute again: only the settings that hold paths
    // (path_keys), so that a choice whose value is also a file's name ("measure": "angle"
    // beside a dump named "angle") stays a choice. A path there is refused as the lists' are.
    for (std::size_t i = 0; i < p.views.size(); ++i) {
        const std::string at = "project: views[" + std::to_string(i) + "].settings.";
        for_each_setting_path(
            p.views[i].kind, p.views[i].settings,
            [&](const QString& path, const std::string& place) {
                const std::size_t bytes = static_cast<std::size_t>(path.toUtf8().size());
                if (path.contains(QChar(u'\0')))
                    throw FormatError(at + place +
                                      " holds a path with a NUL character, which no file name has");
                if (bytes > 4096)
                    throw FormatError(at + place + " holds a path of " + std::to_string(bytes) +
                                      " bytes, longer than any file name the system opens (4096)");
                return QDir::cleanPath(base.absoluteFilePath(path));
            });
    }
    // A view of a kind this version does not know: its settings' strings that are one of its
    // inputs or the project's files, as written (its path settings cannot be named). Not the run
    // directories: a view that reads a run has it as an input.
    QStringList file_rel, file_abs;
    for (const auto& s : j.value("files", nlohmann::json::array())) {
        file_rel << QString::fromStdString(s.get<std::string>());
        file_abs << QDir::cleanPath(base.absoluteFilePath(file_rel.back()));
    }
    const auto& views_json = j.value("views", nlohmann::json::array());
    for (std::size_t i = 0; i < p.views.size(); ++i) {
        if (knows_paths_of(p.views[i].kind)) continue;
        QStringList rel = file_rel, abs = file_abs;
        for (const auto& s : views_json[i].value("inputs", nlohmann::json::array())) {
            rel.prepend(QString::fromStdString(s.get<std::string>()));
            abs.prepend(QDir::cleanPath(base.absoluteFilePath(rel.front())));
        }
        map_paths(p.views[i].settings, rel, abs);
    }
    return p;
}

Project Project::load(const QString& path) {
    data::require_regular_file(path.toStdString(), "project");  // a FIFO or /dev/zero: for good
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        throw IoError(path.toStdString() +
                      ": cannot read the project: " + f.errorString().toStdString());
    // Depth-checked before it is built (engine/core/json_text.hpp): FormatError naming the file.
    const nlohmann::json j = parse_json_text(f.readAll().toStdString(), path.toStdString(),
                                             kJsonMaxDepth, JsonKeys::unique);
    try {
        return from_json(j, QFileInfo(path).absoluteDir());
    } catch (const FormatError& e) {
        throw FormatError(path.toStdString() + ": " + e.what());
    }
}

void Project::save(const QString& path) const {
    // Not QSaveFile: Qt 6.4's commit() reported success after a write that failed for a full disk
    // and renamed an empty file over the project (engine/io/atomic_file.hpp).
    const std::string text = to_json(QFileInfo(path).absoluteDir()).dump(2) + "\n";
    try {
        write_text_atomically(path.toStdString(), text);
    } catch (const Error& e) {
        throw IoError(std::string(e.what()) +
                      " (cannot write the project; the file was left as "
                      "it was)");
    }
}

}  // namespace routescope::gui
