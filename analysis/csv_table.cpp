#include "analysis/csv_table.hpp"

#include <cmath>
#include <cstdio>

#include "engine/data/utf8.hpp"

namespace routescope::analysis {
namespace {

std::string quote(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string cell(const nlohmann::json& value) {
    // A string from a dump (a vocabulary piece, a label) that is not UTF-8: U+FFFD for each bad
    // byte, as the workbench shows it, so that the CSV stays UTF-8.
    if (value.is_string()) return quote(data::valid_utf8(value.get<std::string>()));
    if (value.is_null()) return "";
    if (value.is_number_float()) {
        // NaN and ±Inf as null: no value, as the JSON writes them (kernel-change's infinite
        // score was "inf" here and null there).
        if (!std::isfinite(value.get<double>())) return "";
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.17g", value.get<double>());  // round-trips a double
        return buffer;
    }
    return quote(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::string CsvTable::to_csv() const {
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i)
        out += (i ? "," : "") + quote(columns[i]);
    out += "\n";
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i)
            out += (i ? "," : "") + cell(row[i]);
        out += "\n";
    }
    return out;
}

}  // namespace routescope::analysis
