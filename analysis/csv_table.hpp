#pragma once
// The flat table of a result, written as CSV (RFC 4180 quoting). Cells are JSON scalars so a
// result builds its table and its JSON from the same values.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace routescope::analysis {

struct CsvTable {
    std::vector<std::string> columns;
    std::vector<std::vector<nlohmann::json>> rows;
    std::string to_csv() const;
};

}  // namespace routescope::analysis
