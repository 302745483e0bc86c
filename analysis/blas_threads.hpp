#pragma once
// One BLAS/LAPACK thread for the analyses. Debian resolves libblas/liblapack to OpenBLAS's
// threaded build, whose worker threads spin while they wait; next to the analyses' own OpenMP
// threads, or on a loaded machine, that made the anisotropy analysis 3–7× slower than with one
// BLAS thread (measured on the 2-core development VM: 23 s / 9 s against 3.4 s;
// docs/benchmarks.md).
namespace routescope::analysis {

/// Sets OpenBLAS to one thread the first time it is called (openblas_set_num_threads, looked up at
/// run time, so a reference BLAS/LAPACK works too). Cheap after the first call.
void use_one_blas_thread();

}  // namespace routescope::analysis
