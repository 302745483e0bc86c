#include "engine/io/sharded_dump.hpp"

#include <hdf5.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope {

namespace fs = std::filesystem;

namespace {

// Closes an HDF5 id with its own close function.
class Id {
public:
    Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    ~Id() {
        if (id_ >= 0) close_(id_);
    }
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    operator hid_t() const { return id_; }
    bool ok() const { return id_ >= 0; }

private:
    hid_t id_;
    herr_t (*close_)(hid_t);
};

void need(bool ok, const std::string& what) {
    if (!ok) throw IoError(what);
}

void copy_attributes(hid_t from, hid_t to, const std::string& where) {
    H5O_info_t info;
    need(H5Oget_info(from, &info) >= 0, where + ": cannot read its attributes");
    for (hsize_t i = 0; i < info.num_attrs; ++i) {
        Id a(H5Aopen_by_idx(from, ".", H5_INDEX_CRT_ORDER, H5_ITER_NATIVE, i, H5P_DEFAULT,
                            H5P_DEFAULT),
             H5Aclose);
        need(a.ok(), where + ": cannot open attribute " + std::to_string(i));
        Id type(H5Aget_type(a), H5Tclose);
        Id space(H5Aget_space(a), H5Sclose);
        char name[256];
        H5Aget_name(a, sizeof name, name);
        const hssize_t n = H5Sget_simple_extent_npoints(space);
        std::vector<unsigned char> buf(static_cast<std::size_t>(std::max<hssize_t>(n, 1)) *
                                       H5Tget_size(type));
        need(H5Aread(a, type, buf.data()) >= 0, where + ": cannot read attribute " + name);
        Id b(H5Acreate2(to, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
        const bool written = b.ok() && H5Awrite(b, type, buf.data()) >= 0;
        if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)
            H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf.data());
        need(written, where + ": cannot write attribute " + name);
    }
}

std::vector<hsize_t> dims_of(hid_t dataset) {
    Id space(H5Dget_space(dataset), H5Sclose);
    std::vector<hsize_t> d(
        static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space))));
    H5Sget_simple_extent_dims(space, d.data(), nullptr);
    return d;
}

struct Master {
    hid_t out;
    std::vector<Id*> shards;           // open shard files, rank order
    std::vector<std::string> names;    // the files read (messages)
    std::vector<std::string> sources;  // the names the virtual datasets give them
    std::vector<std::int64_t> counts, first;
    std::int64_t total;

    void virtual_dataset(const std::string& path) {
        Id src0(H5Dopen2(*shards[0], path.c_str(), H5P_DEFAULT), H5Dclose);
        need(src0.ok(), names[0] + ": cannot open " + path);
        Id type(H5Dget_type(src0), H5Tclose);
        std::vector<hsize_t> dims = dims_of(src0);
        if (dims.empty()) throw FormatError(names[0] + ": " + path + " is a scalar");
        std::vector<hsize_t> full = dims;
        full[0] = static_cast<hsize_t>(total);
        Id vspace(H5Screate_simple(static_cast<int>(full.size()), full.data(), nullptr), H5Sclose);
        Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
        for (std::size_t r = 0; r < shards.size(); ++r) {
            Id src(H5Dopen2(*shards[r], path.c_str(), H5P_DEFAULT), H5Dclose);
            need(src.ok(), names[r] + ": cannot open " + path + " (shard 0 has it)");
            Id t(H5Dget_type(src), H5Tclose);
            std::vector<hsize_t> d = dims_of(src);
            if (H5Tequal(t, type) <= 0 || d.size() != dims.size() ||
                !std::equal(d.begin() + 1, d.end(), dims.begin() + 1) ||
                d[0] != static_cast<hsize_t>(counts[r]))
                throw FormatError(names[r] + ": " + path +
                                  " disagrees with shard 0 (type or shape) or with its " +
                                  std::to_string(counts[r]) + " examples");
            Id sspace(H5Screate_simple(static_cast<int>(d.size()), d.data(), nullptr), H5Sclose);
            std::vector<hsize_t> start(d.size(), 0);
            start[0] = static_cast<hsize_t>(first[r]);
            need(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start.data(), nullptr, d.data(),
                                     nullptr) >= 0 &&
                     H5Pset_virtual(dcpl, vspace, fs::path(sources[r]).filename().c_str(),
                                    path.c_str(), sspace) >= 0,
                 path + ": cannot map shard " + std::to_string(r));
            H5Sselect_all(vspace);
        }
        Id v(H5Dcreate2(out, path.c_str(), type, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
        need(v.ok(), path + ": cannot create the virtual dataset");
        copy_attributes(src0, v, names[0] + ":" + path);
    }

    // Groups under /data and /layers are made here (attributes copied) and their datasets made
    // virtual; anything else is copied from shard 0.
    void walk(const std::string& group, bool per_example) {
        Id g(H5Gopen2(*shards[0], group.c_str(), H5P_DEFAULT), H5Gclose);
        need(g.ok(), names[0] + ": cannot open " + group);
        H5G_info_t info;
        H5Gget_info(g, &info);
        for (hsize_t i = 0; i < info.nlinks; ++i) {
            char name[1024];
            H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                               H5P_DEFAULT);
            const std::string path = (group == "/" ? "/" : group + "/") + name;
            H5O_info_t oi;
            need(H5Oget_info_by_name(*shards[0], path.c_str(), &oi, H5P_DEFAULT) >= 0,
                 names[0] + ": cannot inspect " + path);
            const bool inside = per_example || path == "/data" || path == "/layers";
            if (inside && oi.type == H5O_TYPE_GROUP) {
                Id sub(H5Gopen2(*shards[0], path.c_str(), H5P_DEFAULT), H5Gclose);
                Id made(H5Gcreate2(out, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        H5Gclose);
                need(made.ok(), path + ": cannot create the group");
                copy_attributes(sub, made, names[0] + ":" + path);
                walk(path, true);
            } else if (inside && oi.type == H5O_TYPE_DATASET) {
                virtual_dataset(path);
            } else {
                need(H5Ocopy(*shards[0], path.c_str(), out, path.c_str(), H5P_DEFAULT,
                             H5P_DEFAULT) >= 0,
                     names[0] + ": cannot copy " + path);
            }
        }
    }
};

}  // namespace

std::string dump_shard_path(const std::string& out, int rank) {
    constexpr std::string_view ext = ".dump.h5";
    const std::string r = std::to_string(rank);
    if (out.size() > ext.size() && out.ends_with(ext))
        return out.substr(0, out.size() - ext.size()) + ".rank" + r + ".dump.h5";
    return out + "-rank" + r + ".dump.h5";
}

std::string staged_shard_path(const std::string& shard) {
    const fs::path p(shard);
    return (p.parent_path() / ("." + p.filename().string() + ".staged")).string();
}

std::exception_ptr name_shard_in_error(std::exception_ptr error, const std::string& out, int rank) {
    if (!error) return error;
    const std::string shard = dump_shard_path(out, rank);
    const std::string staged = staged_shard_path(shard);
    const std::string shown = shard + " (rank " + std::to_string(rank) + "'s shard of " + out + ")";
    const auto named = [&](std::string text) {
        // The writer names the file it was given made absolute (atomic_write_target); other
        // messages may name it as given.
        for (const std::string& as : {fs::absolute(staged).lexically_normal().string(), staged}) {
            for (std::size_t at = text.find(as); at != std::string::npos;
                 at = text.find(as, at + shown.size()))
                text.replace(at, as.size(), shown);
        }
        return text;
    };
    try {
        std::rethrow_exception(error);
    } catch (const IoError& e) {
        return std::make_exception_ptr(IoError(named(e.what())));
    } catch (const FormatError& e) {
        return std::make_exception_ptr(FormatError(named(e.what())));
    } catch (const ConfigError& e) {
        return std::make_exception_ptr(ConfigError(named(e.what())));
    } catch (const RuntimeFailure& e) {
        return std::make_exception_ptr(RuntimeFailure(named(e.what())));
    } catch (const Interrupted& e) {
        return std::make_exception_ptr(Interrupted(named(e.what())));
    } catch (...) {  // HDF5's exceptions, std::bad_alloc...: classified by main's handler
        return error;
    }
}

void write_dump_master(const std::string& out, const std::vector<std::string>& shards,
                       const std::vector<std::int64_t>& counts) {
    const std::string temp = write_staged_dump_master(out, shards, shards, counts);
    std::error_code ec;
    fs::rename(temp, out, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(temp, ignored);
        throw IoError(out + ": cannot rename the finished dump into place (" + ec.message() + ")");
    }
}

std::string write_staged_dump_master(const std::string& out, const std::vector<std::string>& shards,
                                     const std::vector<std::string>& staged,
                                     const std::vector<std::int64_t>& counts) {
    if (shards.empty() || shards.size() != counts.size() || staged.size() != shards.size())
        throw Error("write_dump_master: one count and one staged file per shard");
    std::vector<std::unique_ptr<Id>> files;
    Master m{-1, {}, staged, shards, counts, {}, 0};
    for (const auto& s : staged) {
        files.push_back(
            std::make_unique<Id>(H5Fopen(s.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose));
        need(files.back()->ok(), s + ": cannot open the shard");
        m.shards.push_back(files.back().get());
    }
    for (const std::int64_t c : counts) {
        m.first.push_back(m.total);
        m.total += c;
    }
    // A temporary of this process's own (".<name>.tmp-<pid>", swept when stale): a fixed name was
    // shared by two jobs writing the same --out.
    // Not a device or a FIFO (refused); a link is replaced, not followed: the master names its
    // shards relative to itself, and they are beside --out.
    (void)atomic_write_target(out);
    remove_stale_temporaries(out);
    const std::string temp = temporary_path_for(out);
    const TemporaryFileGuard unlink_on_signal(temp);
    {
        Id f(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
        // Named as the user gave it, not by its hidden temporary.
        need(f.ok(), out + ": cannot create the dump (in " +
                         fs::absolute(out).parent_path().string() + ")");
        m.out = f;
        try {
            Id root(H5Gopen2(*m.shards[0], "/", H5P_DEFAULT), H5Gclose);
            Id root_out(H5Gopen2(f, "/", H5P_DEFAULT), H5Gclose);
            copy_attributes(root, root_out, staged[0] + ":/");
            m.walk("/", false);
        } catch (...) {
            std::error_code ec;
            fs::remove(temp, ec);
            throw;
        }
    }
    return temp;
}

}  // namespace routescope
