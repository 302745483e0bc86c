#pragma once
// The QtTest data rows of the op-conformance tests (test_cuda_emulation, test_backend_conformance):
// one row per op of the op table, size and spec of op_specs.hpp, named "op (spec)", with the
// columns op, size and which.
#include <QtTest>

#include <vector>

#include "engine/backend/op_specs.hpp"
#include "engine/ops/op.hpp"

namespace routescope::test {

inline void add_op_spec_rows(const std::vector<SpecSize>& sizes) {
    QTest::addColumn<int>("op");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("which");
    for (const ops::OpDef& def : ops::op_defs())
        for (SpecSize size : sizes) {
            const auto specs = op_specs(def.id, size);
            for (std::size_t s = 0; s < specs.size(); ++s)
                QTest::newRow(qPrintable(
                    QString("%1 (%2)").arg(def.name).arg(QString::fromStdString(specs[s].label))))
                    << static_cast<int>(def.id) << static_cast<int>(size) << static_cast<int>(s);
        }
}

}  // namespace routescope::test
