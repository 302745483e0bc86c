#pragma once
// Showing an analysis result's table (the same cells its CSV holds) in a QTableWidget, and joining
// the tables of several results (models, layers) under key columns.
#include <QString>

#include "analysis/csv_table.hpp"

class QTableWidget;

namespace routescope::views {

/// Replaces the widget's contents with `table` (numbers right-aligned, 4 significant digits shown,
/// the full value in the tooltip).
void show_table(QTableWidget* widget, const analysis::CsvTable& table);
/// `table` with leading key columns (e.g. {"model", "vectors"}) holding `keys` in every row.
analysis::CsvTable with_keys(const analysis::CsvTable& table,
                             const std::vector<std::string>& columns,
                             const std::vector<nlohmann::json>& keys);
/// Rows of `b` appended to `a` (same columns; `a` empty takes b's columns).
void append_rows(analysis::CsvTable& a, const analysis::CsvTable& b);

}  // namespace routescope::views
