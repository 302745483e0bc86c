#include "engine/dist/communicator.hpp"

#include <cstdlib>
#include <cstring>

#include "engine/core/error.hpp"

namespace routescope::dist {

#ifdef ROUTESCOPE_HAVE_MPI
// mpi_communicator.cpp
std::unique_ptr<Communicator> start_mpi();
void stop_mpi();
#endif

namespace {

class SingleProcess final : public Communicator {
public:
    const char* name() const override { return "single"; }
    int rank() const override { return 0; }
    int size() const override { return 1; }
    void sum_in_rank_order(float*, std::size_t) override {}
    void allgather(const void* send, void* recv, std::size_t bytes) override {
        if (bytes > 0) std::memcpy(recv, send, bytes);
    }
    void barrier() override {}
    [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

SingleProcess& single() {
    static SingleProcess s;
    return s;
}

std::unique_ptr<Communicator>& mpi_world() {
    static std::unique_ptr<Communicator> w;
    return w;
}

int env_int(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return end && *end == '\0' && n > 0 && n < (1L << 30) ? static_cast<int>(n) : 0;
}

}  // namespace

int first_rank_with(Communicator& comm, bool flag) {
    const std::vector<std::uint8_t> all = gather_all<std::uint8_t>(comm, flag ? 1 : 0);
    for (std::size_t r = 0; r < all.size(); ++r)
        if (all[r]) return static_cast<int>(r);
    return -1;
}

Communicator& world() {
    if (mpi_world()) return *mpi_world();
    return single();
}

bool mpi_built() {
#ifdef ROUTESCOPE_HAVE_MPI
    return true;
#else
    return false;
#endif
}

int launcher_size() {
    // mpirun (Open MPI), then PMI-2 launchers (MPICH's hydra, srun --mpi=pmi2), then a Slurm job
    // step (srun; SLURM_NTASKS alone is also set in a batch script that runs one process).
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
        if (const int n = env_int(v); n > 0) return n;
    return 1;
}

void init_world() {
    if (mpi_world()) return;
    const int n = launcher_size();
    if (n <= 1) return;
#ifdef ROUTESCOPE_HAVE_MPI
    mpi_world() = start_mpi();
    // A launcher whose ranks MPI cannot wire up (srun without --mpi=pmix / pmi2 for this Open
    // MPI) starts each process as a singleton: N one-rank jobs would each train the whole run
    // into the same directory and tear each other's log. Every process refuses before any work.
    if (const int got = mpi_world()->size(); got != n) {
        mpi_world().reset();
        stop_mpi();
        std::string var;
        for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
            if (env_int(v) > 0) {
                var = v;
                break;
            }
        throw ConfigError("the launcher started " + std::to_string(n) + " ranks (" + var + "=" +
                          std::to_string(n) + ") but MPI joined this process to a job of " +
                          std::to_string(got) +
                          " (under Slurm, srun needs --mpi=pmix or --mpi=pmi2 for Open MPI; "
                          "docs/scaling.md); each would run alone and write the same files");
    }
#else
    throw ConfigError(
        "this routescope-cli was built without MPI (cmake -DROUTESCOPE_MPI=ON, "
        "packages libopenmpi-dev openmpi-bin) but a launcher started " +
        std::to_string(n) + " ranks of it; each would run alone and write the same files");
#endif
}

void finalize_world() {
#ifdef ROUTESCOPE_HAVE_MPI
    if (mpi_world()) {
        mpi_world().reset();
        stop_mpi();
    }
#endif
}

std::unique_ptr<Communicator> make_nccl_communicator() {
    throw Error(
        "NCCL is not available: this build has no NCCL communicator (there is no CUDA training "
        "path yet; docs/scaling.md). Data-parallel training runs on the CPU backend over MPI.");
}

bool nccl_available() {
    return false;
}

std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 1469598103934665603ULL;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

}  // namespace routescope::dist
