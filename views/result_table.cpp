#include "views/result_table.hpp"

#include <QHeaderView>
#include <QTableWidget>

namespace routescope::views {

void show_table(QTableWidget* widget, const analysis::CsvTable& table) {
    widget->clear();
    widget->setColumnCount(static_cast<int>(table.columns.size()));
    widget->setRowCount(static_cast<int>(table.rows.size()));
    QStringList headers;
    for (const auto& c : table.columns)
        headers << QString::fromStdString(c);
    widget->setHorizontalHeaderLabels(headers);
    for (int r = 0; r < static_cast<int>(table.rows.size()); ++r) {
        const auto& row = table.rows[static_cast<std::size_t>(r)];
        for (int c = 0; c < static_cast<int>(row.size()); ++c) {
            const auto& cell = row[static_cast<std::size_t>(c)];
            auto* item = new QTableWidgetItem;
            if (cell.is_number_float()) {
                item->setText(QString::number(cell.get<double>(), 'g', 4));
                item->setToolTip(QString::number(cell.get<double>(), 'g', 17));
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            } else if (cell.is_number()) {
                item->setText(QString::fromStdString(cell.dump()));
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            } else if (cell.is_string()) {
                item->setText(QString::fromStdString(cell.get<std::string>()));
            } else {
                item->setText(QString::fromStdString(cell.dump()));
            }
            item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
            widget->setItem(r, c, item);
        }
    }
    widget->resizeColumnsToContents();
}

analysis::CsvTable with_keys(const analysis::CsvTable& table,
                             const std::vector<std::string>& columns,
                             const std::vector<nlohmann::json>& keys) {
    analysis::CsvTable out;
    out.columns = columns;
    out.columns.insert(out.columns.end(), table.columns.begin(), table.columns.end());
    for (const auto& row : table.rows) {
        std::vector<nlohmann::json> r = keys;
        r.insert(r.end(), row.begin(), row.end());
        out.rows.push_back(std::move(r));
    }
    return out;
}

void append_rows(analysis::CsvTable& a, const analysis::CsvTable& b) {
    if (a.columns.empty()) a.columns = b.columns;
    a.rows.insert(a.rows.end(), b.rows.begin(), b.rows.end());
}

}  // namespace routescope::views
