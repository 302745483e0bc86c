#pragma once
// Data-parallel communication (ARCHITECTURE.md "Scaling past one machine"; docs/scaling.md).
//
// A Communicator connects the ranks of one job. Training needs little from it: one sum of the flat
// gradient buffer per step, a few small gathers (each rank's loss, target and token counts, the
// configuration's hash, "did anyone fail / stop") and an abort that ends every rank. Its sum is
// DETERMINISTIC: element i is ((x₀ + x₁) + x₂) + … in rank order, the same bits on every rank and
// in every run with the same number of ranks — unlike MPI_Allreduce, whose order is the
// implementation's. Implementations:
//   single  one process (no launcher, or a build without MPI): every call is a copy or nothing
//   mpi     Open MPI (build option ROUTESCOPE_MPI; mpi_communicator.cpp): the sum is a
//   reduce-scatter
//           by MPI_Alltoallv (rank k receives everyone's slice k and adds the slices in rank
//           order) followed by MPI_Allgatherv of the summed slices: 2·(N−1)/N · 4·P bytes sent
//           and received per rank, like a ring all-reduce, and P floats of scratch.
//   nccl    for the CUDA backend (device buffers, ncclAllReduce is not order-deterministic
//           either); not built yet: make_nccl_communicator() throws, naming why.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace routescope::dist {

class Communicator {
public:
    virtual ~Communicator() = default;
    /// "single", "mpi" or "nccl".
    virtual const char* name() const = 0;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// In place: data[i] ← Σ over ranks of data[i], added in rank order (file comment); the result
    /// is bit-identical on every rank. Every rank calls it with the same n.
    virtual void sum_in_rank_order(float* data, std::size_t n) = 0;
    /// Every rank's `bytes` bytes of `send`, in rank order, into `recv` (size() · bytes).
    virtual void allgather(const void* send, void* recv, std::size_t bytes) = 0;
    /// Waits for every rank.
    virtual void barrier() = 0;
    /// Ends every rank of the job with exit status `code` (MPI_Abort); does not return.
    [[noreturn]] virtual void abort(int code) = 0;
};

/// Every rank's value, in rank order.
template <class T>
std::vector<T> gather_all(Communicator& comm, const T& value) {
    std::vector<T> all(static_cast<std::size_t>(comm.size()));
    comm.allgather(&value, all.data(), sizeof(T));
    return all;
}

/// The lowest rank whose `flag` is true, or −1 when none is (a collective: every rank calls it).
int first_rank_with(Communicator& comm, bool flag);

/// The communicator of this process: MPI's world once init_world() found a launcher, otherwise a
/// single process.
Communicator& world();

/// Whether this build has MPI (ROUTESCOPE_MPI).
bool mpi_built();

/// The job's rank count according to the launcher's environment (mpirun: OMPI_COMM_WORLD_SIZE;
/// Slurm's srun and other PMI launchers: PMIX_SIZE / PMI_SIZE / SLURM_NTASKS with a rank
/// variable), 1 when not launched by one.
int launcher_size();

/// Starts MPI when this process was launched by mpirun / srun (launcher_size() > 1) and MPI is
/// built; otherwise world() stays the single process. Throws routescope::ConfigError when a
/// launcher started several ranks of a build without MPI (they would all write the same files).
/// Idempotent; finalize_world() (or WorldScope's destructor) ends MPI.
void init_world();
void finalize_world();

/// init_world() for the lifetime of a command.
class WorldScope {
public:
    WorldScope() { init_world(); }
    ~WorldScope() { finalize_world(); }
    WorldScope(const WorldScope&) = delete;
    WorldScope& operator=(const WorldScope&) = delete;
};

/// A communicator over the CUDA backend's device buffers. Not available yet (no CUDA training
/// path): throws routescope::Error saying so. The design: one ncclComm per rank from an
/// ncclUniqueId broadcast over MPI; sum_in_rank_order as ncclAllGather of the per-rank buffers
/// into an N·P device scratch and a kernel adding the N slices in rank order (ncclAllReduce's
/// order is not deterministic), or ncclReduceScatter per slice with the same caveat.
std::unique_ptr<Communicator> make_nccl_communicator();
/// Whether make_nccl_communicator() would succeed (false in every build today).
bool nccl_available();

/// A 64-bit FNV-1a hash (ranks compare their configurations by it).
std::uint64_t fnv1a(const std::string& text);

}  // namespace routescope::dist
