// Part (b) of the conformance suite (test_op_conformance.cpp is parts (a) and the spec check):
// every backend besides the CPU, on every op spec of engine/backend/op_specs.hpp, against the CPU
// backend in float32 — normalised MSE of every output and input gradient within the op's
// tolerance. A build or machine without such a backend reports this test SKIPPED with the reason.
#include <QtTest>

class TestBackendConformance : public QObject {
    Q_OBJECT

private slots:
    void otherBackendsMatchTheCpu() {
#ifndef ROUTESCOPE_HAVE_CUDA
        QSKIP("the CUDA backend is not compiled into this build (nvcc was not found)");
#else
        QSKIP(
            "no backend besides the CPU implements the op table in this build: the CUDA backend "
            "(engine/backend/cuda) has only bench conv's cuFFT path so far (the GPU engine issue), "
            "and this machine has no GPU");
#endif
    }
};

QTEST_APPLESS_MAIN(TestBackendConformance)
#include "test_backend_conformance.moc"
