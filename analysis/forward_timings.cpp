#include "analysis/forward_timings.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"

namespace routescope::analysis {

CsvTable ForwardTimings::table() const {
    CsvTable t;
    t.columns = {"arch", "length", "measured_ms"};
    for (const auto& s : series)
        for (std::size_t i = 0; i < s.lengths.size(); ++i)
            t.rows.push_back({s.arch, s.lengths[i], s.ms[i]});
    return t;
}

double ForwardTimings::ms_at(const std::string& arch, std::int64_t length) const {
    for (const auto& s : series)
        if (s.arch == arch)
            for (std::size_t i = 0; i < s.lengths.size(); ++i)
                if (s.lengths[i] == length) return s.ms[i];
    return std::numeric_limits<double>::quiet_NaN();
}

ForwardTimings read_forward_timings(const std::string& path) {
    data::require_regular_file(path, "timings file");  // a FIFO or /dev/zero read for good
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read the timings file");
    nlohmann::json summary;
    for (std::string line; std::getline(in, line);) {
        if (line.find('{') == std::string::npos) continue;
        const auto j = parse_json_or_discarded(line);  // depth-checked (json_text.hpp)
        if (j.is_object() && j.contains("lengths")) summary = j;
    }
    if (summary.is_null())
        throw FormatError(path +
                          ": no line with a JSON object holding 'lengths' (the last line of "
                          "`routescope-cli bench forward`)");
    const auto number_list = [&](const std::string& key) {
        const auto& v = summary[key];
        if (!v.is_array()) throw FormatError(path + ": '" + key + "' is not a list");
        for (const auto& x : v)
            if (!x.is_number()) throw FormatError(path + ": '" + key + "' holds a non-number");
        return v;
    };
    std::vector<std::int64_t> lengths;
    for (const auto& x : number_list("lengths"))
        lengths.push_back(x.get<std::int64_t>());

    ForwardTimings out;
    out.provenance.analysis = "forward_timings";
    out.provenance.inputs.push_back(file_input(path, "timings"));
    const std::string suffix = "_ms";
    for (auto it = summary.begin(); it != summary.end(); ++it) {
        const std::string& key = it.key();
        if (key.size() <= suffix.size() ||
            key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        ForwardTimingSeries s;
        s.arch = key.substr(0, key.size() - suffix.size());
        for (const auto& x : number_list(key))
            s.ms.push_back(x.get<double>());
        if (s.ms.size() != lengths.size())
            throw FormatError(path + ": '" + key + "' has " + std::to_string(s.ms.size()) +
                              " values for " + std::to_string(lengths.size()) + " lengths");
        s.lengths = lengths;
        out.series.push_back(std::move(s));
    }
    if (out.series.empty()) throw FormatError(path + ": no '<arch>_ms' list beside 'lengths'");
    if (summary.contains("crossover") && summary["crossover"].is_number_integer())
        out.crossover = summary["crossover"].get<std::int64_t>();
    return out;
}

}  // namespace routescope::analysis
