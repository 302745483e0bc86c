#pragma once
// ROUTESCOPE_HD marks a function that runs on the host and, compiled by nvcc, on a CUDA device too:
// the per-element and per-row bodies of the kernels (engine/backend/cuda/ops/), the element math
// every backend shares (engine/ops/element_math.hpp) and the Philox generator (core/philox.hpp).
// A plain C++ compiler sees ordinary inline functions, so the host test suite runs the very bodies
// the GPU runs (tests/engine/test_cuda_emulation.cpp).
#if defined(__CUDACC__)
#define ROUTESCOPE_HD __host__ __device__
#else
#define ROUTESCOPE_HD
#endif
