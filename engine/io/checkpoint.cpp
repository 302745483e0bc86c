#include "engine/io/checkpoint.hpp"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/h5_reserve.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/io/validation.hpp"
#include "engine/models/model.hpp"

namespace routescope {

namespace {

constexpr std::int64_t kVersion = 1;  // CHECKPOINT_FORMAT.md "version 1"
constexpr const char* kProducer = "routescope engine";
constexpr std::int64_t kMaxTrainCounter = std::int64_t{1}
                                          << 62;  // step, tokens_seen, data_position

std::vector<hsize_t> dims_of(const std::vector<std::int64_t>& shape) {
    return {shape.begin(), shape.end()};
}

void write_floats(H5::Group& group, const std::string& name, const std::vector<std::int64_t>& shape,
                  const float* data) {
    const auto dims = dims_of(shape);
    H5::DataSpace space(static_cast<int>(dims.size()), dims.empty() ? nullptr : dims.data());
    H5::DataSet ds = group.createDataSet(name, H5::PredType::IEEE_F32LE, space);
    ds.write(data, H5::PredType::NATIVE_FLOAT);
}

bool all_finite(const float* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(data[i])) return false;
    return true;
}

void write_contents(H5::H5File& file, const std::string& path, const RunConfig& config,
                    const ParamStore& store, const TokenizerBlob& tokenizer,
                    const TrainState* train, const std::string& device,
                    const BestMark* best = nullptr) {
    h5::write_string_attr(file, "format", kCheckpointFormat);
    h5::write_int_attr(file, "format_version", kVersion);
    h5::write_string_attr(file, "producer", kProducer);
    h5::write_string_attr(file, "created", h5::iso8601_now());
    if (!device.empty()) h5::write_string_attr(file, "device", device);
    if (best) {
        h5::write_int_attr(file, kBestStepAttr, best->step);
        h5::write_string_attr(file, kBestMetricAttr, best->metric);
        h5::write_float_attr(file, kBestValueAttr, best->value);
    }
    H5::Group cfg = file.createGroup("config");
    h5::write_string_attr(cfg, "json", config.to_json_text());

    H5::Group params = file.createGroup("params");
    for (const auto& e : store.entries()) {
        const float* p = store.data() + e.offset;
        if (!all_finite(p, e.size))
            throw FormatError(path + ": /params/" + e.name +
                              ": non-finite value; checkpoint not written");
        write_floats(params, e.name, e.shape, p);
    }

    H5::Group tok = file.createGroup("tokenizer");
    h5::write_string_attr(tok, "kind", tokenizer.kind);
    if (!tokenizer.model.empty()) {
        const hsize_t n = tokenizer.model.size();
        H5::DataSpace space(1, &n);
        tok.createDataSet("model", H5::PredType::STD_U8LE, space)
            .write(tokenizer.model.data(), H5::PredType::NATIVE_UINT8);
    }

    if (train) {
        H5::Group tr = file.createGroup("train");
        h5::write_int_attr(tr, "step", train->step);
        h5::write_int_attr(tr, "tokens_seen", train->tokens_seen);
        h5::write_int_attr(tr, "data_position", train->data_position);
        if (!train->rng_state.empty()) {
            const hsize_t n = train->rng_state.size();
            H5::DataSpace space(1, &n);
            tr.createAttribute("rng_state", H5::PredType::STD_U64LE, space)
                .write(H5::PredType::NATIVE_UINT64, train->rng_state.data());
        }
        const std::pair<const char*, const std::vector<float>*> moments[] = {
            {"adam_m", &train->adam_m}, {"adam_v", &train->adam_v}};
        for (const auto& [group_name, values] : moments) {
            if (values->empty()) continue;
            if (values->size() != store.size())
                throw Error(path + ": /train/" + group_name + " holds " +
                            std::to_string(values->size()) + " values, the parameters " +
                            std::to_string(store.size()));
            H5::Group g = tr.createGroup(group_name);
            for (const auto& e : store.entries()) {
                const float* v = values->data() + e.offset;
                if (!all_finite(v, e.size))
                    throw FormatError(path + ": /train/" + group_name + "/" + e.name +
                                      ": non-finite value; checkpoint not written");
                write_floats(g, e.name, e.shape, v);
            }
        }
        if (const auto& mc = train->mixture_controller) {
            H5::Group g = tr.createGroup("mixture_controller");
            std::string arms;
            for (const auto& a : mc->arms)
                arms += (arms.empty() ? "" : ",") + a;
            h5::write_string_attr(g, "arms", arms);
            h5::write_int_attr(g, "updates", mc->updates);
            const std::pair<const char*, const std::vector<double>*> series[] = {
                {"mixture", &mc->mixture},
                {"rewards", &mc->rewards},
                {"predicted", &mc->predicted},
                {"losses", &mc->losses}};
            for (const auto& [name, values] : series) {
                if (values->size() != mc->arms.size())
                    throw Error(path + ": /train/mixture_controller/" + name + " holds " +
                                std::to_string(values->size()) + " values for " +
                                std::to_string(mc->arms.size()) + " arms");
                const hsize_t n = values->size();
                H5::DataSpace space(1, &n);
                g.createDataSet(name, H5::PredType::IEEE_F64LE, space)
                    .write(values->data(), H5::PredType::NATIVE_DOUBLE);
            }
        }
    }
}

// The checkpoint as the bytes of an HDF5 file, built in memory (the core driver without a backing
// store). Writing those bytes is then an ordinary write() whose failure (a full disk) is reported;
// a failed flush inside HDF5 1.10 leaves a file that cannot be closed (it truncates, fails, and a
// second close crashes).
std::vector<char> file_image(const std::string& path, const RunConfig& config,
                             const ParamStore& store, const TokenizerBlob& tokenizer,
                             const TrainState* train, const std::string& device,
                             const BestMark* best) {
    H5::FileAccPropList access;
    H5Pset_fapl_core(access.getId(), std::size_t{1} << 20, /*backing_store=*/0);
    H5::H5File file(path, H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, access);
    write_contents(file, path, config, store, tokenizer, train, device, best);
    file.flush(H5F_SCOPE_GLOBAL);
    const ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
    std::vector<char> image(size > 0 ? static_cast<std::size_t>(size) : 0);
    if (size <= 0 || H5Fget_file_image(file.getId(), image.data(), image.size()) != size)
        throw IoError(path + ": cannot take the checkpoint's file image (" +
                      h5::error_stack_text() + ")");
    file.close();
    return image;
}

// Writes `bytes` to `tmp`; IoError naming `path` (the final name) on any failure.
void write_bytes(const std::string& tmp, const std::string& path, const std::vector<char>& bytes) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw IoError(path + ": cannot create the checkpoint (" + std::strerror(errno) + ")");
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : EIO;
            ::close(fd);
            throw IoError(path + ": write error while saving the checkpoint (" + std::strerror(e) +
                          "; disk full?)");
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0)
        throw IoError(path + ": write error while saving the checkpoint (" + std::strerror(errno) +
                      ")");
}

[[noreturn]] void bad(const std::string& path, const std::string& where, const std::string& what) {
    throw FormatError(path + ": " + where + ": " + what);
}

// The float dataset at `where`, of the expected shape (metadata only: checked for every
// dataset before anything is allocated, so a /config declaring a huge model is refused by its
// shapes, not by bad_alloc).
H5::DataSet float_dataset(const std::string& path, const H5::Group& root, const std::string& where,
                          const std::vector<std::int64_t>& shape) {
    if (!h5::is_dataset(root, where))
        bad(path, where, h5::is_group(root, where) ? "a group, not a dataset" : "missing dataset");
    H5::DataSet ds = root.openDataSet(where);
    // A checkpoint holds its own data (docs/formats/checkpoint.md): a parameter mapped from
    // another file would be read from a file nobody named (validate says the same).
    if (const auto sources = h5::virtual_sources(ds))
        bad(path, where,
            "a virtual dataset over " + *sources +
                "; a checkpoint holds its parameters itself, nothing outside it");
    if (!h5::is_float(ds.getDataType()))
        bad(path, where, "type " + h5::type_name(ds.getDataType()) + " is not floating point");
    const auto dims = h5::shape_of(ds);
    if (dims != dims_of(shape))
        bad(path, where,
            "shape " + h5::shape_text(dims) + " disagrees with /config (expected " +
                h5::shape_text(dims_of(shape)) + ")");
    return ds;
}

// A float dataset of the expected shape, finite, as float32.
void read_floats(const std::string& path, const H5::Group& root, const std::string& where,
                 const std::vector<std::int64_t>& shape, float* out) {
    H5::DataSet ds = float_dataset(path, root, where, shape);
    try {
        ds.read(out, H5::PredType::NATIVE_FLOAT);
    } catch (const H5::Exception&) {
        // Named (a filter the library lacks, a failed checksum): was "malformed checkpoint
        // (H5Dread failed ...)" with no dataset.
        bad(path, where, "cannot read: " + h5::error_stack_text());
    }
    std::size_t n = 1;
    for (auto s : shape)
        n *= static_cast<std::size_t>(s);
    // As validate's value scan says it: which value, where, how many.
    std::size_t count = 0, first = n;
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(out[i])) {
            if (count++ == 0) first = i;
        }
    if (count > 0)
        bad(path, where,
            std::string("non-finite value: ") +
                (std::isnan(out[first]) ? "NaN"
                 : out[first] > 0       ? "+Inf"
                                        : "-Inf") +
                " at flat index " + std::to_string(first) + " (" + std::to_string(count) +
                " non-finite in all)");
}

Checkpoint read_open(const std::string& path, H5::H5File& file, CheckpointRead what) {
    const bool values = what == CheckpointRead::all;
    const auto format = h5::read_string_attr(file, "format");
    if (!format) bad(path, "/", "missing string attr format");
    if (*format != kCheckpointFormat)
        bad(path, "/", "attr format is '" + *format + "', expected '" + kCheckpointFormat + "'");
    const auto version = h5::read_int_attr(file, "format_version");
    if (!version) bad(path, "/", "missing integer attr format_version");
    if (*version != kVersion)
        bad(path, "/",
            "unknown format_version " + h5::int_attr_text(file, "format_version") +
                " (this reader knows 1)");

    Checkpoint ck;
    if (!h5::is_group(file, "config")) bad(path, "/config", "missing group");
    const auto json = h5::read_string_attr(file.openGroup("config"), "json");
    if (!json) bad(path, "/config", "missing string attr json");
    try {
        ck.config = RunConfig::parse(*json);
        if (h5::is_group(file, "params"))
            if (const auto why = parameter_count_problem(
                    ck.config.model, h5::child_dataset_links(file.openGroup("params"))))
                bad(path, "/config attr json", *why);
        ck.layout = models::Model::parameter_layout(ck.config.model);
    } catch (const ConfigError& e) {
        bad(path, "/config attr json", e.what());
    }

    if (!h5::is_group(file, "params")) bad(path, "/params", "missing group");
    std::uint64_t total = 0;
    for (const auto& e : ck.layout) {
        float_dataset(path, file, "/params/" + e.name, e.shape);
        total += e.size;
    }
    const bool has_moments =
        h5::is_group(file, "train/adam_m") || h5::is_group(file, "train/adam_v");
    if (values) {
        h5::require_memory(path,
                           "/params (" + std::to_string(total) + " float32 parameters of /config" +
                               (has_moments ? ", twice more for /train/adam_m and adam_v)" : ")"),
                           total * sizeof(float) * (has_moments ? 3 : 1));
        ck.params.assign(total, 0.0f);
        for (const auto& e : ck.layout)
            read_floats(path, file, "/params/" + e.name, e.shape, ck.params.data() + e.offset);
    }
    {
        H5::Group params = file.openGroup("params");
        std::vector<std::string> known;
        for (const auto& name : h5::children(params)) {
            bool found = false;
            for (const auto& e : ck.layout)
                found = found || e.name == name;
            if (!found)
                bad(path, "/params/" + name, "unexpected parameter (not in the model of /config)");
        }
    }

    if (!h5::is_group(file, "tokenizer")) bad(path, "/tokenizer", "missing group");
    H5::Group tok = file.openGroup("tokenizer");
    const auto kind = h5::read_string_attr(tok, "kind");
    if (!kind) bad(path, "/tokenizer", "missing string attr kind");
    if (*kind != "bytes" && *kind != "sentencepiece" && *kind != "wordpiece" &&
        *kind != "wordpiece_cased")
        bad(path, "/tokenizer",
            "attr kind '" + *kind + "' is not bytes, sentencepiece, wordpiece or wordpiece_cased");
    ck.tokenizer.kind = *kind;
    if (h5::exists(tok, "model")) {
        if (!h5::is_dataset(tok, "model")) bad(path, "/tokenizer/model", "not a dataset");
        H5::DataSet ds = tok.openDataSet("model");
        const auto dims = h5::shape_of(ds);
        if (dims.size() != 1 || ds.getDataType().getClass() != H5T_INTEGER ||
            ds.getDataType().getSize() != 1)
            bad(path, "/tokenizer/model",
                "expected uint8 [n], found " + h5::type_name(ds.getDataType()) + " " +
                    h5::shape_text(dims));
        h5::require_memory(path, "/tokenizer/model", dims[0]);
        ck.tokenizer.model.resize(dims[0]);
        if (dims[0] > 0) ds.read(ck.tokenizer.model.data(), H5::PredType::NATIVE_UINT8);
    }
    // The stored tokenizer must parse and give the ids the model has: the tokenizer's plus the
    // objective's specials (the rule eval and train --resume apply; docs/decisions.md, "One
    // validation path").
    try {
        const auto tokenizer = data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
        const std::int32_t extra = data::objective_extra_ids(ck.config.train.objective);
        if (tokenizer->vocab_size() + extra != ck.config.model.vocab_size)
            bad(path, "/tokenizer",
                "vocabulary mismatch: the " + ck.tokenizer.kind + " tokenizer has " +
                    std::to_string(tokenizer->vocab_size()) + " ids" +
                    (extra > 0 ? " (+ " + std::to_string(extra) + " objective specials)" : "") +
                    " but /config has model.vocab_size = " +
                    std::to_string(ck.config.model.vocab_size));
    } catch (const FormatError&) {
        throw;
    } catch (const Error& e) {
        bad(path, "/tokenizer/model", e.what());
    }

    if (h5::exists(file, "train")) {
        if (!h5::is_group(file, "train")) bad(path, "/train", "not a group");
        H5::Group tr = file.openGroup("train");
        TrainState st;
        const auto step = h5::read_int_attr(tr, "step");
        if (!step) bad(path, "/train", "missing integer attr step");
        st.step = *step;
        if (const auto v = h5::read_int_attr(tr, "tokens_seen")) st.tokens_seen = *v;
        if (const auto v = h5::read_int_attr(tr, "data_position")) st.data_position = *v;
        for (const auto& [name, value] :
             {std::pair{"step", st.step}, std::pair{"tokens_seen", st.tokens_seen},
              std::pair{"data_position", st.data_position}})
            if (value < 0)
                bad(path, std::string("/train attr ") + name,
                    std::to_string(value) + " is negative");
            // Beyond any run (2^62 rows at a million a second is 146,000 years): near 2^63 the
            // resumed loop's sums wrapped, indexing the data order at a negative position. Said
            // with the value stored (a uint64 2^64 − 1 is read as 2^63 − 1).
            else if (value > kMaxTrainCounter)
                bad(path, std::string("/train attr ") + name,
                    h5::int_attr_text(tr, name) + " is beyond any run (at most 2^62 = " +
                        std::to_string(kMaxTrainCounter) + ")");
        if (tr.attrExists("rng_state")) {
            H5::Attribute a = tr.openAttribute("rng_state");
            if (a.getDataType().getClass() != H5T_INTEGER)
                bad(path, "/train attr rng_state", "not an integer array");
            // The writer stores [seed, step] (training_loop.cpp).
            H5::DataSpace space = a.getSpace();
            if (space.getSimpleExtentType() != H5S_SIMPLE || space.getSimpleExtentNdims() != 1 ||
                space.getSimpleExtentNpoints() != 2)
                bad(path, "/train attr rng_state",
                    "expected 2 integers [seed, step], found " +
                        h5::attr_type_name(tr, "rng_state"));
            // The two numbers are the whole random state (docs/formats/checkpoint.md): every
            // draw of a resumed step comes from train.seed of /config and the step, so a pair
            // that says otherwise ([999, 7] beside seed 1234, step 2) is no state of this run;
            // it resumed as if it were [1234, 2]. Compared as stored (a negative int64 is not
            // read as the uint64 HDF5 would clip it to).
            const auto seed = static_cast<std::uint64_t>(ck.config.train.seed);
            const auto step = static_cast<std::uint64_t>(st.step);
            std::string stored[2];
            bool agrees = false;
            st.rng_state.resize(2);
            if (a.getIntType().getSign() == H5T_SGN_NONE) {
                a.read(H5::PredType::NATIVE_UINT64, st.rng_state.data());
                stored[0] = std::to_string(st.rng_state[0]);
                stored[1] = std::to_string(st.rng_state[1]);
                agrees = st.rng_state[0] == seed && st.rng_state[1] == step;
            } else {
                std::int64_t v[2] = {};
                a.read(H5::PredType::NATIVE_INT64, v);
                stored[0] = std::to_string(v[0]);
                stored[1] = std::to_string(v[1]);
                agrees = v[0] >= 0 && v[1] >= 0 && static_cast<std::uint64_t>(v[0]) == seed &&
                         static_cast<std::uint64_t>(v[1]) == step;
                st.rng_state = {static_cast<std::uint64_t>(v[0]), static_cast<std::uint64_t>(v[1])};
            }
            if (!agrees)
                bad(path, "/train attr rng_state",
                    "expected [seed, step] = [" + std::to_string(seed) + ", " +
                        std::to_string(step) + "] (train.seed of /config, /train step), found [" +
                        stored[0] + ", " + stored[1] +
                        "] (write those two, or leave the optional attribute out)");
        }
        for (const char* moment : {"adam_m", "adam_v"}) {
            if (!values || !h5::exists(tr, moment)) continue;
            auto& values = std::string(moment) == "adam_m" ? st.adam_m : st.adam_v;
            values.assign(total, 0.0f);
            for (const auto& e : ck.layout) {
                const std::string where = std::string("/train/") + moment + "/" + e.name;
                read_floats(path, file, where, e.shape, values.data() + e.offset);
                if (std::string(moment) != "adam_v") continue;
                // AdamW's second moment is an average of squares: a negative one made the first
                // step of a resume NaN, reported as a diverged loss blaming train.lr.
                const float* v = values.data() + e.offset;
                std::size_t count = 0, first = 0;
                for (std::size_t i = 0; i < e.size; ++i)
                    if (v[i] < 0 && count++ == 0) first = i;
                if (count > 0)
                    bad(path, where,
                        "expected values ≥ 0 (AdamW's second moment, an average of squares), "
                        "found " +
                            number_text(v[first]) + " at flat index " + std::to_string(first) +
                            " (" + std::to_string(count) + " negative in all)");
            }
        }
        if (h5::exists(tr, "mixture_controller")) {
            const std::string where = "/train/mixture_controller";
            if (!h5::is_group(tr, "mixture_controller")) bad(path, where, "not a group");
            H5::Group g = tr.openGroup("mixture_controller");
            MixtureControllerState mc;
            const auto arms = h5::read_string_attr(g, "arms");
            const auto updates = h5::read_int_attr(g, "updates");
            if (!arms || !updates)
                bad(path, where, "missing attr arms (string) or updates (integer)");
            for (std::size_t at = 0; at <= arms->size();) {
                const std::size_t comma = std::min(arms->find(',', at), arms->size());
                mc.arms.push_back(arms->substr(at, comma - at));
                at = comma + 1;
            }
            mc.updates = *updates;
            for (auto [name, values] :
                 {std::pair{"mixture", &mc.mixture}, std::pair{"rewards", &mc.rewards},
                  std::pair{"predicted", &mc.predicted}, std::pair{"losses", &mc.losses}}) {
                if (!h5::is_dataset(g, name)) bad(path, where + "/" + name, "missing dataset");
                H5::DataSet ds = g.openDataSet(name);
                const auto shape = h5::shape_of(ds);
                if (!h5::is_float(ds.getDataType()) || shape.size() != 1 ||
                    shape[0] != mc.arms.size())
                    bad(path, where + "/" + name,
                        "not a float array of one value per arm (" +
                            std::to_string(mc.arms.size()) + ")");
                values->resize(mc.arms.size());
                ds.read(values->data(), H5::PredType::NATIVE_DOUBLE);
                // The next steps' objectives are drawn from these: a NaN, an infinity or (in the
                // mixture) a negative weight was sampled from silently. A loss may be infinite
                // (the controller scores a diverged arm's validation loss 0 reward), never NaN.
                const bool losses = values == &mc.losses;
                for (std::size_t k = 0; k < values->size(); ++k) {
                    const double v = (*values)[k];
                    if (losses ? std::isnan(v)
                               : !std::isfinite(v) || (values == &mc.mixture && v < 0))
                        bad(path, where + "/" + name,
                            number_text(v) + " at index " + std::to_string(k) +
                                (values == &mc.mixture ? " (the mixture's weights are finite and "
                                                         "not negative)"
                                 : losses              ? " (a loss is a number or infinite)"
                                                       : " (the values are finite)"));
                }
            }
            if (mc.updates < 0)
                bad(path, where + " attr updates", std::to_string(mc.updates) + " is negative");
            double total = 0;
            for (double w : mc.mixture)
                total += w;
            if (!(total > 0))
                bad(path, where + "/mixture",
                    "every weight is 0 (the mixture draws each step's objective from them)");
            st.mixture_controller = std::move(mc);
        }
        ck.train = std::move(st);
    }
    return ck;
}

}  // namespace

void write_checkpoint(const std::string& path, const RunConfig& config, const ParamStore& store,
                      const TokenizerBlob& tokenizer, const TrainState* train,
                      const std::string& device, const BestMark* best) {
    if (store.on_device())  // the writer reads values on the host: one staging download
        return write_checkpoint(path, config, store.host_copy(), tokenizer, train, device, best);
    h5::quiet_errors();
    namespace fs = std::filesystem;
    const fs::path final_path = atomic_write_target(path);
    const fs::path tmp = temporary_path_for(final_path.string());
    remove_stale_temporaries(final_path.string());  // of a run killed mid-write (issue 17)
    const TemporaryFileGuard guard(tmp.string());
    try {
        write_bytes(tmp.string(), path,
                    file_image(tmp.string(), config, store, tokenizer, train, device, best));
    } catch (const H5::Exception& e) {
        std::error_code ec;
        fs::remove(tmp, ec);
        throw IoError(path + ": cannot write checkpoint (" + e.getDetailMsg() + ": " +
                      h5::error_stack_text() + ")");
    } catch (...) {
        std::error_code ec;
        fs::remove(tmp, ec);
        throw;
    }
    std::error_code ec;
    fs::rename(tmp, final_path, ec);  // atomic on POSIX within one directory
    if (ec) {
        const std::string why = ec.message();  // fs::remove below clears ec
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw IoError(path + ": cannot rename the written checkpoint into place (" + why + ")");
    }
}

void write_checkpoint_streaming(const std::string& path, const RunConfig& config,
                                const ParamStore& store, const TokenizerBlob& tokenizer) {
    if (store.on_device())
        return write_checkpoint_streaming(path, config, store.host_copy(), tokenizer);
    h5::quiet_errors();
    namespace fs = std::filesystem;
    const fs::path final_path = atomic_write_target(path);
    const fs::path tmp = temporary_path_for(final_path.string());
    // HDF5 1.10 cannot be trusted to fail cleanly when the disk fills mid-file (see file_image),
    // so the room is checked first: the parameters, the tokenizer, 2% and 1 MiB for the rest (16
    // MiB refused a 62 kB import with 15 MiB free). A directory it cannot write is said as such
    // (a read-only file system reports no free space).
    if (::access(final_path.parent_path().c_str(), W_OK) != 0)
        throw RuntimeFailure(path + ": cannot write in " + final_path.parent_path().string() +
                             ": " + std::strerror(errno));
    std::error_code ec;
    const auto space = fs::space(final_path.parent_path(), ec);
    std::uintmax_t need = store.size() * sizeof(float) + tokenizer.model.size();
    need += need / 50 + (std::uintmax_t{1} << 20);
    if (!ec && space.available < need)
        throw IoError(path + ": not enough free space for the checkpoint (" +
                      std::to_string(space.available >> 20) + " MiB free, " +
                      std::to_string(need >> 20) + " MiB needed)");
    remove_stale_temporaries(final_path.string());
    const TemporaryFileGuard guard(tmp.string());
    if (const int error = h5::probe_create(tmp.string(), need))
        throw IoError(h5::reserve_failure(path, need, error, "the checkpoint"));
    try {
        H5::H5File file(tmp.string(), H5F_ACC_TRUNC);
        // The room reserved on disk before anything is written (h5_reserve.hpp): the space check
        // above cannot see a quota, `ulimit -f` or another writer filling the disk meanwhile, and
        // an import that filled it died in HDF5's close (SIGSEGV, its temporary left behind).
        if (const int error = h5::reserve_file_space(file.getId(), need)) {
            h5::divert_file_to_memory(file.getId());
            fs::remove(tmp, ec);
            throw IoError(h5::reserve_failure(path, need, error, "the checkpoint"));
        }
        try {
            write_contents(file, tmp.string(), config, store, tokenizer, nullptr, {});
            file.close();
        } catch (...) {
            // Its closing writes cannot fail again; in memory, which (unlike /dev/null) can be
            // cut to HDF5's end of allocation, so the close itself succeeds.
            h5::divert_file_to_memory(file.getId());
            throw;
        }
        h5::give_back_reserve(tmp.string());
    } catch (const H5::Exception& e) {
        fs::remove(tmp, ec);
        throw IoError(path + ": cannot write checkpoint (" + e.getDetailMsg() + ": " +
                      h5::error_stack_text() + ")");
    } catch (...) {
        fs::remove(tmp, ec);
        throw;
    }
    fs::rename(tmp, final_path, ec);
    if (ec) {
        const std::string why = ec.message();  // fs::remove below clears ec
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw IoError(path + ": cannot rename the written checkpoint into place (" + why + ")");
    }
}

Checkpoint read_checkpoint(const std::string& path, CheckpointRead what) {
    h5::quiet_errors();
    // The format checker's structural rules first (the same code `validate` runs, so the two
    // never disagree; the values are checked below, as they are read).
    ValidateOptions options;
    options.scan_values = false;
    options.max_violations = 5;
    const ValidationReport report = validate_checkpoint_structure(path, options);
    if (!report.readable)
        throw IoError(path + ": cannot open: " +
                      (report.violations.empty() ? "unreadable" : report.violations.front().found));
    if (!report.violations.empty()) {
        std::string text =
            path + ": not a valid checkpoint (docs/formats/checkpoint.md, version 1):";
        for (const auto& v : report.violations)
            text += "\n  " + v.text();
        throw FormatError(text);
    }
    H5::H5File file = h5::open_read(path);  // IoError naming the file and why
    try {
        return read_open(path, file, what);
    } catch (const H5::Exception& e) {
        throw FormatError(path + ": malformed checkpoint (" + e.getDetailMsg() + ": " +
                          h5::error_stack_text() + ")");
    }
}

std::optional<std::string> parameter_count_problem(const ModelConfig& m, std::uint64_t held) {
    if (m.n_layers < 2) return std::nullopt;
    // Every block of an architecture declares the same tensors (their names differ by the
    // index), so two layouts of one and two blocks say what one block has.
    ModelConfig one = m, two = m;
    one.n_layers = 1;
    two.n_layers = 2;
    const std::uint64_t base = models::Model::parameter_layout(one).size();
    const std::uint64_t with_two = models::Model::parameter_layout(two).size();
    const std::uint64_t per_block = with_two > base ? with_two - base : 0;  // sLSTM: shared
    const std::uint64_t blocks = per_block * static_cast<std::uint64_t>(m.n_layers);
    if (blocks <= held) return std::nullopt;
    return "model.n_layers = " + std::to_string(m.n_layers) + " blocks of " +
           std::to_string(per_block) + " parameter tensors need " + std::to_string(blocks) +
           ", but /params holds " + std::to_string(held) + " datasets";
}

void require_checkpoint_format_version(const std::string& path) {
    h5::quiet_errors();
    const H5::H5File file = h5::open_read(path);
    try {
        const auto version = h5::read_int_attr(file, "format_version");
        if (!version)
            throw FormatError(
                path + ": root attr format_version " +
                (h5::has_attr(file, "format_version")
                     ? "is a " + h5::attr_type_name(file, "format_version") + ", not an integer"
                     : "is missing (an integer, " + std::to_string(kCheckpointFormatVersion) +
                           " for this build)"));
        if (*version < 1 || *version > kCheckpointFormatVersion)
            throw FormatError(path + ": format_version " +
                              h5::int_attr_text(file, "format_version") +
                              " is not one this build reads (1 … " +
                              std::to_string(kCheckpointFormatVersion) + ")");
    } catch (const H5::Exception& e) {
        throw FormatError(path + ": cannot read its root attributes (" + e.getDetailMsg() + ": " +
                          h5::error_stack_text() + ")");
    }
}

namespace {
/// Whether `store` has the parameters of `layout`, by name and shape: Error naming the first that
/// differs, before anything is copied.
void check_same_layout(const std::vector<ParamEntry>& layout, const ParamStore& store,
                       const char* who) {
    for (const auto& e : layout) {
        if (!store.contains(e.name))
            throw Error(std::string(who) + ": the model has no parameter '" + e.name + "'");
        if (store.entry(e.name).shape != e.shape)
            throw Error(std::string(who) + ": '" + e.name + "' has another shape in the model");
    }
    if (store.entries().size() != layout.size())
        throw Error(std::string(who) + ": the model has " + std::to_string(store.entries().size()) +
                    " parameters, the checkpoint " + std::to_string(layout.size()));
}
}  // namespace

void read_params_into(const std::string& path, const std::vector<ParamEntry>& layout,
                      ParamStore& store) {
    h5::quiet_errors();
    check_same_layout(layout, store, "read_params_into");
    std::size_t largest = 0;
    for (const auto& e : layout)
        largest = std::max(largest, e.size);
    std::vector<float> buffer(largest);
    H5::H5File file = h5::open_read(path);
    try {
        for (const auto& e : layout) {
            read_floats(path, file, "/params/" + e.name, e.shape, buffer.data());
            store.upload_entry(e.name, buffer.data());  // host or device
        }
    } catch (const H5::Exception& e) {
        throw FormatError(path + ": malformed checkpoint (" + e.getDetailMsg() + ": " +
                          h5::error_stack_text() + ")");
    }
}

void load_params(const Checkpoint& checkpoint, ParamStore& store) {
    check_same_layout(checkpoint.layout, store, "load_params");
    for (const auto& e : checkpoint.layout)
        store.upload_entry(e.name, checkpoint.params.data() + e.offset);  // host or device
}

}  // namespace routescope
