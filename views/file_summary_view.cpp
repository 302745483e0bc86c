#include "views/file_summary_view.hpp"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QResizeEvent>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace routescope::views {

FileSummaryView::FileSummaryView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    title_ = new QLabel(this);
    QFont f = title_->font();
    f.setPointSizeF(f.pointSizeF() * 1.3);
    f.setBold(true);
    title_->setFont(f);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    title_->setMinimumWidth(1);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tree_ = new QTreeWidget(this);
    tree_->setHeaderLabels({tr("Item"), tr("Type"), tr("Shape")});
    tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    tree_->setAlternatingRowColors(true);
    layout->addWidget(title_);
    layout->addWidget(status_);
    layout->addWidget(tree_, 1);
}

void FileSummaryView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    elide_title();
}

void FileSummaryView::elide_title() {
    const int width = std::max(1, title_->contentsRect().width());
    title_->setText(title_->fontMetrics().elidedText(name_, Qt::ElideMiddle, width));
}

QString FileSummaryView::headline() const {
    return status_->text();
}

void FileSummaryView::show_file(const QString& path, const ValidationReport& report,
                                const std::optional<FileInfo>& info, const QString& error) {
    name_ = QFileInfo(path).fileName();
    elide_title();
    title_->setToolTip(path);
    tree_->clear();
    if (!report.readable) {
        status_->setText(tr("<b style='color:#b00020'>Cannot read this file:</b> %1")
                             .arg(error.toHtmlEscaped()));
    } else if (!report.violations.empty() && report.violations.front().path == "/" &&
               report.violations.front().expected.rfind("attr format = ", 0) == 0) {
        // An HDF5 file without Routescope's root attribute `format` (or with another format's):
        // not a broken dump, another kind of file.
        const std::string& found = report.violations.front().found;
        status_->setText(
            tr("<b style='color:#b00020'>Not a Routescope file:</b> an HDF5 file %1. Routescope "
               "opens activation dumps and checkpoints (the root attribute format is "
               "routescope-dump or routescope-checkpoint; docs/formats/). Its contents are "
               "listed below.")
                .arg(found == "no format attribute"
                         ? tr("without the root attribute format")
                         : tr("whose root attribute format is %1")
                               .arg(QString::fromStdString(found).toHtmlEscaped())));
    } else if (report.ok()) {
        status_->setText(tr("<b style='color:#1b7f3b'>Valid %1</b> (format version 1)")
                             .arg(QString::fromUtf8(file_kind_name(report.kind))));
    } else {
        status_->setText(
            tr("<b style='color:#b00020'>Invalid %1:</b> %n violation(s) of the format; "
               "analyses may refuse the affected parts.",
               nullptr, static_cast<int>(report.violations.size()))
                .arg(QString::fromUtf8(file_kind_name(report.kind))));
    }
    if (!report.violations.empty()) {
        auto* v = new QTreeWidgetItem(tree_, {tr("Violations (%1)").arg(report.violations.size())});
        for (const auto& violation : report.violations) {
            auto* item = new QTreeWidgetItem(v, {QString::fromStdString(violation.path)});
            item->setText(1, tr("expected %1").arg(QString::fromStdString(violation.expected)));
            item->setText(2, tr("found %1").arg(QString::fromStdString(violation.found)));
            item->setToolTip(0, QString::fromStdString(violation.text()));
            item->setForeground(0, QColor(176, 0, 32));
        }
        v->setExpanded(true);
    }
    if (!info) return;
    auto add = [](QTreeWidgetItem* parent, const QString& name, const DatasetInfo& d) {
        return new QTreeWidgetItem(parent, {name, QString::fromStdString(d.dtype),
                                            QString::fromStdString(d.shape_text())});
    };
    auto* model = new QTreeWidgetItem(
        tree_, {tr("Model: %1")
                    .arg(QString::fromStdString(info->name.empty() ? "(unnamed)" : info->name))});
    new QTreeWidgetItem(model, {tr("arch: %1").arg(QString::fromStdString(info->arch))});
    new QTreeWidgetItem(model, {tr("layers: %1").arg(info->n_layers)});
    new QTreeWidgetItem(model, {tr("d_model: %1").arg(info->d_model)});
    if (!info->checkpoint.empty())
        new QTreeWidgetItem(model,
                            {tr("checkpoint: %1").arg(QString::fromStdString(info->checkpoint))});
    if (!info->producer.empty())
        new QTreeWidgetItem(model,
                            {tr("producer: %1").arg(QString::fromStdString(info->producer))});
    new QTreeWidgetItem(model,
                        {tr("size: %1").arg(QString::fromStdString(human_bytes(info->file_size)))});
    model->setExpanded(true);
    if (info->kind == FileKind::Checkpoint) {
        auto* params = new QTreeWidgetItem(tree_, {tr("Parameters (%1 tensors, %2 values)")
                                                       .arg(info->params.size())
                                                       .arg(info->parameter_count)});
        for (const auto& p : info->params)
            add(params, QString::fromStdString(p.path.substr(8)), p);
        new QTreeWidgetItem(
            tree_, {tr("Tokenizer: %1").arg(QString::fromStdString(info->tokenizer_kind))});
        if (info->train_step)
            new QTreeWidgetItem(tree_, {tr("Resumable at step %1").arg(*info->train_step)});
        return;
    }
    auto* examples = new QTreeWidgetItem(
        tree_, {tr("Examples: S = %1, L = %2").arg(info->examples).arg(info->length)});
    for (const auto& d : info->data)
        add(examples, QString::fromStdString(d.path.substr(6)), d);
    examples->setExpanded(true);
    auto* layers = new QTreeWidgetItem(tree_, {tr("Layers (%1 stored)").arg(info->layers.size())});
    for (const auto& l : info->layers) {
        auto* li = new QTreeWidgetItem(layers, {tr("layer %1").arg(l.index)});
        if (l.hidden) add(li, "hidden", *l.hidden);
        if (l.sentence) add(li, "sentence", *l.sentence);
        if (l.example_index) add(li, "example_index", *l.example_index);
        for (const auto& g : l.gates)
            add(li, tr("gate %1").arg(QString::fromStdString(g.path.substr(g.path.rfind('/') + 1))),
                g);
    }
    layers->setExpanded(true);
    if (!info->kernels.empty()) {
        auto* kernels =
            new QTreeWidgetItem(tree_, {tr("SSM kernels (%1 layers)").arg(info->kernels.size())});
        for (const auto& k : info->kernels) {
            auto* ki = new QTreeWidgetItem(kernels, {tr("layer %1").arg(k.index)});
            if (k.forward) add(ki, "forward", *k.forward);
            if (k.backward) add(ki, "backward", *k.backward);
        }
    }
    if (!info->mixing.empty()) {
        auto* mixing =
            new QTreeWidgetItem(tree_, {tr("Spatial matrices (%1)").arg(info->mixing.size())});
        for (const auto& m : info->mixing)
            add(mixing, QString::fromStdString(m.path.substr(8)), m);
    }
    tree_->resizeColumnToContents(1);
    tree_->resizeColumnToContents(2);
}

}  // namespace routescope::views
