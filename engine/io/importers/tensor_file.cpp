#include "engine/io/importers/tensor_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/importers/mapped_file.hpp"

namespace routescope::importers {

MappedFile::MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(path + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw IoError(path + ": not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int e = errno;
            ::close(fd);
            throw IoError(path + ": cannot map (" + std::strerror(e) + ")");
        }
        data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

void MappedFile::release(const unsigned char* p, std::size_t n) const {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void NamedTensor::values_into(float* out, std::size_t begin, std::size_t n) const {
    if (!raw) {
        std::copy(data.begin() + static_cast<std::ptrdiff_t>(begin),
                  data.begin() + static_cast<std::ptrdiff_t>(begin + n), out);
        return;
    }
    convert_to_float(dtype, raw + begin * dtype_size(dtype), n, out);
}

std::vector<float> NamedTensor::values() const {
    std::vector<float> v(size());
    values_into(v.data());
    return v;
}

void TensorFile::release(const NamedTensor& t) const {
    if (!t.raw) return;
    for (const auto& m : mappings)
        if (t.raw >= m->data() && t.raw < m->data() + m->size()) {
            m->release(t.raw, t.count * dtype_size(t.dtype));
            return;
        }
}

const std::string& TensorFile::path_of(const NamedTensor& t) const {
    return t.shard >= 0 && static_cast<std::size_t>(t.shard) < shards.size()
               ? shards[static_cast<std::size_t>(t.shard)]
               : path;
}

const NamedTensor* TensorFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

float bfloat16_to_float(std::uint16_t bits) {
    return std::bit_cast<float>(std::uint32_t(bits) << 16);
}

std::size_t dtype_size(const std::string& dtype) {
    if (dtype == "float32") return 4;
    if (dtype == "float16" || dtype == "bfloat16") return 2;
    if (dtype == "int64") return 8;    // integer buffers (position_ids); never a parameter
    if (dtype == "float64") return 8;  // rounded to float32 (the import says so)
    return 0;
}

bool convert_to_float(const std::string& dtype, const unsigned char* bytes, std::size_t count,
                      float* out) {
    static_assert(std::endian::native == std::endian::little, "the readers assume little-endian");
    if (dtype == "float32") {
        if (count) std::memcpy(out, bytes, count * 4);
    } else if (dtype == "float64") {
        for (std::size_t i = 0; i < count; ++i) {  // round to nearest; beyond float's range: ±inf
            double v;
            std::memcpy(&v, bytes + 8 * i, 8);
            out[i] = static_cast<float>(v);
        }
    } else if (dtype == "float16") {
        from_half(bytes, count, out);
    } else if (dtype == "bfloat16") {
        for (std::size_t i = 0; i < count; ++i) {
            std::uint16_t v;
            std::memcpy(&v, bytes + 2 * i, 2);
            out[i] = bfloat16_to_float(v);
        }
    } else if (dtype == "int64") {
        // Exact for |v| <= 2^24; the importer accepts int64 tensors only as buffers whose values
        // it checks (position_ids = 0..Lmax-1), never as parameters.
        for (std::size_t i = 0; i < count; ++i) {
            std::int64_t v;
            std::memcpy(&v, bytes + 8 * i, 8);
            out[i] = static_cast<float>(v);
        }
    } else {
        return false;
    }
    return true;
}

std::size_t checked_numel(const std::vector<std::int64_t>& shape, std::size_t limit,
                          const std::string& what) {
    std::size_t n = 1;
    for (const auto dim : shape) {
        if (dim < 0) throw FormatError(what + ": negative dimension in the shape");
        if (dim == 0) return 0;
        if (static_cast<std::uint64_t>(dim) > limit || n > limit / static_cast<std::size_t>(dim))
            throw FormatError(what + ": the shape declares more elements than the file can hold");
        n *= static_cast<std::size_t>(dim);
    }
    return n;
}

void refuse_plain_pickle(const std::string& path, const unsigned char* data, std::size_t size) {
    // Protocols 2-5 open with PROTO (0x80, the protocol); 0 and 1 have no PROTO and open with an
    // ordinary opcode — MARK '(', EMPTY_DICT '}', EMPTY_LIST ']', EMPTY_TUPLE ')', GLOBAL 'c' —
    // and, as every pickle, end with STOP '.' (a protocol-0 state_dict was "not a readable zip
    // archive"). Called after signed_format: a safetensors file, whose 8-byte header length may
    // start with one of those bytes, has been recognised by then unless its header is damaged.
    const bool proto = size >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5;
    const bool old_protocol =
        size >= 2 &&
        std::string_view("(}])c").find(static_cast<char>(data[0])) != std::string_view::npos &&
        data[size - 1] == '.';
    if ((proto || old_protocol) && !is_legacy_torch_save(data, size))
        throw FormatError(path +
                          ": a Python pickle that torch.save did not write (neither its zip nor "
                          "its legacy format); pickles are never run here: load it in Python "
                          "and save the state_dict with torch.save or safetensors");
}

void refuse_git_lfs_pointer(const std::string& path, const unsigned char* data, std::size_t size) {
    // git-lfs's pointer (docs/spec.md of git-lfs): "version https://git-lfs.github.com/spec/v1",
    // "oid sha256:<hex>" and "size <bytes>" lines, under 1024 bytes, in place of the file.
    const std::string_view text(reinterpret_cast<const char*>(data),
                                std::min<std::size_t>(size, 1024));
    if (!text.starts_with("version https://git-lfs")) return;
    std::string of;
    if (const auto at = text.find("\nsize "); at != std::string_view::npos) {
        std::string_view digits = text.substr(at + 6, 20);
        digits = digits.substr(0, std::min(digits.find_first_not_of("0123456789"), digits.size()));
        if (!digits.empty()) of = " (for a file of " + std::string(digits) + " bytes)";
    }
    throw FormatError(path + ": a Git LFS pointer" + of +
                      ", not the weights: a clone made without git-lfs holds these text files in "
                      "place of the large ones; fetch the real file with `git lfs pull` in the "
                      "clone (after `git lfs install`), or download it again");
}

std::string first_bytes_text(const unsigned char* data, std::size_t size) {
    // Text (an HTML error page saved under the weights' name) is quoted up to its first line end;
    // anything else is said by its first byte.
    const std::size_t shown = std::min<std::size_t>(size, 40);
    bool text = shown > 0;
    std::size_t line = shown;
    for (std::size_t i = 0; i < shown && text; ++i) {
        const unsigned char c = data[i];
        if ((c == '\n' || c == '\r') && line == shown) line = i;
        text = (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\r' || c == '\t';
    }
    if (text && line > 0)
        return "it starts as text, \"" +
               data::printable_text(std::string_view(reinterpret_cast<const char*>(data), line)) +
               (line < size ? "…\"" : "\"");
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", size > 0 ? data[0] : 0);
    return std::string("its first byte is ") + hex;
}

namespace {
// The format a file's first bytes prove (a signature no file of another format starts with): a zip
// or torch.save's legacy magic → pytorch; an 8-byte header length that fits the file followed by
// '{' → safetensors (checked before any pickle test: a safetensors header of 640 bytes starts
// 0x80 0x02, as a protocol-2 pickle does). "" when none does.
std::string signed_format(const unsigned char* p, std::size_t n) {
    if (n >= 4 && p[0] == 'P' && p[1] == 'K' && p[2] == 3 && p[3] == 4) return "pytorch";
    if (is_legacy_torch_save(p, n)) return "pytorch";
    if (n >= 9) {
        std::uint64_t header = 0;
        std::memcpy(&header, p, 8);
        if (header >= 2 && header <= n - 8 && p[8] == '{') return "safetensors";
    }
    return "";
}

std::string format_words(const std::string& format) {
    if (format == "pytorch") return "a PyTorch checkpoint (torch.save)";
    if (format == "safetensors") return "a safetensors file";
    if (format == "flax") return "a Flax msgpack file";
    return "a " + format + " file";
}
}  // namespace

std::string detect_tensor_format(const std::string& path) {
    MappedFile file(path);
    const unsigned char* p = file.data();
    const std::size_t n = file.size();
    refuse_git_lfs_pointer(path, p, n);
    if (const std::string f = signed_format(p, n); !f.empty()) return f;
    // Before the msgpack test: a pickle's PROTO opcode 0x80 is also a msgpack fixmap's first byte.
    // Any other pickle (PROTO 2-5 first; a msgpack file starting with an empty map, 0x80, would
    // hold nothing): pickle.dump's own files, not torch.save's.
    refuse_plain_pickle(path, p, n);
    if (n >= 1 && ((p[0] & 0xf0) == 0x80 || p[0] == 0xde || p[0] == 0xdf)) return "flax";
    throw FormatError(path +
                      ": not a weights file this reader knows (Flax msgpack, safetensors or a "
                      "PyTorch checkpoint, zip or legacy)");
}

std::string content_format_problem(const std::string& path, const std::string& expected) {
    MappedFile file(path);
    refuse_git_lfs_pointer(path, file.data(), file.size());
    const std::string found = signed_format(file.data(), file.size());
    if (found.empty()) {
        // No signature: read as `expected`, whose reader says what is wrong; a plain pickle is
        // said as such whatever the name (the PyTorch reader says it itself).
        if (expected != "pytorch") refuse_plain_pickle(path, file.data(), file.size());
        return "";
    }
    if (found == expected) return "";
    return format_words(found) + " by its content, not " + format_words(expected) +
           " as its name or --format says";
}

namespace {
// The importer looks tensors up by name (TensorFile::find takes the first), so a name the list
// holds twice would import whichever came first, silently. Each reader refuses the repeats its
// format allows (a safetensors header's, a state_dict's, a zip's entries, Flax keys joining to one
// name, a tensor in two shards); this is the one check every format passes through.
TensorFile refuse_repeated_names(TensorFile file) {
    std::unordered_map<std::string_view, const NamedTensor*> seen;
    seen.reserve(file.tensors.size());
    for (const auto& t : file.tensors)
        if (const auto [it, fresh] = seen.emplace(t.name, &t); !fresh) {
            const std::string& first = file.path_of(*it->second);
            throw FormatError(file.path_of(t) + ": " +
                              data::printable_text(data::abbreviated(t.name, 200)) +
                              ": two tensors of this name" +
                              (first != file.path_of(t) ? " (the other in " + first + ")" : "") +
                              "; readers disagree on which is the parameter");
        }
    return file;
}
}  // namespace

TensorFile read_tensor_file(const std::string& path, const std::string& format, bool lazy) {
    if (is_shard_index(path)) return refuse_repeated_names(read_sharded(path, format, lazy));
    // A format given (a model directory's file name, --format) is checked against the content:
    // a torch.save file named model.safetensors was read as safetensors, and refused with a
    // nonsensical header length.
    if (format != "auto") {
        if (const std::string problem = content_format_problem(path, format); !problem.empty()) {
            const std::string found = detect_tensor_format(path);
            const char* name = found == "pytorch"       ? "pytorch_model.bin"
                               : found == "safetensors" ? "model.safetensors"
                                                        : "flax_model.msgpack";
            throw FormatError(path + ": " + problem + " (rename it " + name +
                              ", or give the file itself as SRC: its format is then read from its "
                              "content)");
        }
    }
    const std::string f = format == "auto" ? detect_tensor_format(path) : format;
    if (f == "flax") return refuse_repeated_names(read_flax_msgpack(path));
    if (f == "safetensors") return refuse_repeated_names(read_safetensors(path, lazy));
    if (f == "pytorch") return refuse_repeated_names(read_pytorch_zip(path));
    throw Error("unknown weights format '" + format + "' (auto, flax, safetensors or pytorch)");
}

}  // namespace routescope::importers
