#pragma once
// A dump written by N ranks (routescope-cli dump under mpirun; docs/scaling.md): rank r writes the
// examples [lo_r, hi_r) — contiguous blocks in example order — into its own complete dump, the
// shard `X.rank<r>.dump.h5` beside X.dump.h5; rank 0 then writes X.dump.h5 itself, the master:
// root and /model attributes, /vocab, /kernels and /mixing copied from shard 0, and every dataset
// under /data and /layers an HDF5 virtual dataset (H5Pset_virtual) of shape [S, …] whose rows
// lo_r … hi_r − 1 are shard r's rows. Any HDF5 reader (h5py, validate, the analyses, the
// workbench) reads the master as one dump of S examples. The sources are named relative to the
// master (its directory is searched), so the master and its shards move together; a missing shard
// reads as fill values (zeros), so keep them with it.
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace routescope {

/// Shard r of the dump `out`: X.rank<r>.dump.h5 for out = X.dump.h5; any other name keeps its
/// whole name, NAME-rank<r>.dump.h5 (M.h5 → M.h5-rank0.dump.h5). One-to-one: two --out names
/// never share a shard (M.h5 and M.dump.h5 both wrote M.rank0.dump.h5, each job's master then
/// reading the other's examples).
std::string dump_shard_path(const std::string& out, int rank);

/// Where rank r stages its shard until every rank has written its own: a hidden name beside the
/// shard (.X.rank<r>.dump.h5.staged). A job that fails leaves the previous dump of the same --out,
/// master and shards, as it was.
std::string staged_shard_path(const std::string& shard);

/// `error` (thrown while rank `rank` wrote its shard of `out` under staged_shard_path) with the
/// staged name, given or absolute, replaced by the shard's own and the --out it belongs to:
/// "X.rank0.dump.h5 (rank 0's shard of X.dump.h5)". The staged name is hidden and never the
/// user's; a single-process dump names --out. The same kind of error; others are returned as
/// they are.
std::exception_ptr name_shard_in_error(std::exception_ptr error, const std::string& out, int rank);

/// Writes the master `out` (temporary name, then renamed) over `shards` (in rank order, each a
/// complete dump of `counts[r]` examples). FormatError when the shards disagree on a dataset's
/// type or trailing shape; IoError when a file cannot be read or written.
void write_dump_master(const std::string& out, const std::vector<std::string>& shards,
                       const std::vector<std::int64_t>& counts);

/// write_dump_master reading the shards from `staged` while the master names `shards` (the names
/// they are renamed to), and leaving the master under its temporary name, returned: the caller
/// renames every file into place once all are written.
std::string write_staged_dump_master(const std::string& out, const std::vector<std::string>& shards,
                                     const std::vector<std::string>& staged,
                                     const std::vector<std::int64_t>& counts);

}  // namespace routescope
