// The MPI communicator (communicator.hpp), compiled with ROUTESCOPE_MPI.
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/dist/communicator.hpp"

namespace routescope::dist {

namespace {

void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator() {
        check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
        check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    }
    const char* name() const override { return "mpi"; }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    void sum_in_rank_order(float* data, std::size_t n) override {
        if (size_ == 1 || n == 0) return;
        layout(n);
        const auto N = static_cast<std::size_t>(size_);
        const auto r = static_cast<std::size_t>(rank_);
        const int mine = counts_[r];
        // Reduce-scatter: slice k of every rank goes to rank k, which receives the N copies of its
        // slice in rank order and adds them in that order.
        std::vector<int> rcounts(N, mine), rdispls(N);
        for (std::size_t k = 0; k < N; ++k)
            rdispls[k] = static_cast<int>(k) * mine;
        check(MPI_Alltoallv(data, counts_.data(), displs_.data(), MPI_FLOAT, scratch_.data(),
                            rcounts.data(), rdispls.data(), MPI_FLOAT, MPI_COMM_WORLD),
              "MPI_Alltoallv (gradient reduce-scatter)");
        float* out = data + displs_[r];
        const float* in = scratch_.data();
        std::copy_n(in, mine, out);
        for (std::size_t k = 1; k < N; ++k) {
            const float* s = in + k * static_cast<std::size_t>(mine);
            for (int i = 0; i < mine; ++i)
                out[i] += s[i];
        }
        check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts_.data(),
                             displs_.data(), MPI_FLOAT, MPI_COMM_WORLD),
              "MPI_Allgatherv (gradient all-gather)");
    }

    void allgather(const void* send, void* recv, std::size_t bytes) override {
        check(MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes),
                            MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Allgather");
    }

    void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

    [[noreturn]] void abort(int code) override {
        MPI_Abort(MPI_COMM_WORLD, code);
        std::_Exit(code);
    }

private:
    /// Slice k: elements [displs[k], displs[k] + counts[k]) — n / N each, the first n % N one more.
    void layout(std::size_t n) {
        if (n == laid_out_) return;
        const auto N = static_cast<std::size_t>(size_);
        if (n / N + 1 > static_cast<std::size_t>(INT32_MAX))
            throw Error("MPI gradient sum: " + std::to_string(n) +
                        " floats is more than int32 slices hold");
        counts_.assign(N, 0);
        displs_.assign(N, 0);
        int at = 0;
        for (std::size_t k = 0; k < N; ++k) {
            counts_[k] = static_cast<int>(n / N + (k < n % N ? 1 : 0));
            displs_[k] = at;
            at += counts_[k];
        }
        scratch_.resize(N * static_cast<std::size_t>(counts_[static_cast<std::size_t>(rank_)]));
        laid_out_ = n;
    }

    int rank_ = 0, size_ = 1;
    std::size_t laid_out_ = 0;
    std::vector<int> counts_, displs_;
    std::vector<float> scratch_;
};

}  // namespace

std::unique_ptr<Communicator> start_mpi() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        // Only the main thread calls MPI (the thread pool never does).
        int provided = 0;
        check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    }
    return std::make_unique<MpiCommunicator>();
}

void stop_mpi() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

}  // namespace routescope::dist
