// safetensors (huggingface/safetensors, "Format"): 8 bytes little-endian N, N bytes of JSON header
// {name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data; offsets are relative to the first byte after the header. The data is mapped, and
// every offset is checked against the file before it is read. Lazily read (the importer), the
// tensors stay in the mapping until their values are taken.
#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/io/importers/mapped_file.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {
namespace {

std::string dtype_of(const std::string& code) {
    if (code == "F32") return "float32";
    if (code == "F16") return "float16";
    if (code == "BF16") return "bfloat16";
    if (code == "I64") return "int64";
    if (code == "F64") return "float64";
    return "";
}

}  // namespace

TensorFile read_safetensors(const std::string& path, bool lazy) {
    auto mapping = std::make_shared<const MappedFile>(path);
    const MappedFile& file = *mapping;
    const auto fail = [&](const std::string& where, const std::string& what) {
        throw FormatError(path + ": " + where + ": " + what);
    };
    if (file.size() < 8) fail("header", "file too short for the 8-byte header length");
    std::uint64_t header_size = 0;
    std::memcpy(&header_size, file.data(), 8);
    if (header_size > file.size() - 8)
        fail("header", "declares " + std::to_string(header_size) + " header bytes, the file has " +
                           std::to_string(file.size() - 8) + " after the length");
    const auto* header_begin = reinterpret_cast<const char*>(file.data() + 8);
    // Depth-checked before a value is built (json_text.hpp): a hostile header nested 10^5 deep
    // would overflow the stack where a value is walked.
    const std::string_view header_text(header_begin, header_size);
    // The format: "The header data MUST begin with a { character (0x7B)" (only trailing spaces
    // pad it). A file whose header starts otherwise is refused as it is when given directly.
    if (header_text.empty() || header_text.front() != '{')
        fail("header",
             "does not begin with '{' (a safetensors header is a JSON object starting "
             "at byte 8, padded only at its end)");
    if (const std::string problem = json_text_problem(header_text); !problem.empty())
        fail("header", problem);
    // "Duplicate keys are disallowed": nlohmann keeps the last of two entries of one name (other
    // readers the first), so a second copy of a tensor silently replaced the first. Each object's
    // keys are recorded as the parser meets them.
    std::vector<std::set<std::string>> open_objects;
    std::string top_key, duplicate;  // the top-level key being read; the first repeated key
    const nlohmann::json header = nlohmann::json::parse(
        header_text, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            using Event = nlohmann::json::parse_event_t;
            if (event == Event::object_start) {
                open_objects.emplace_back();
            } else if (event == Event::object_end) {
                if (!open_objects.empty()) open_objects.pop_back();
            } else if (event == Event::key && !open_objects.empty()) {
                const std::string& key = parsed.get_ref<const std::string&>();
                if (open_objects.size() == 1) top_key = key;
                if (!open_objects.back().insert(key).second && duplicate.empty())
                    duplicate = open_objects.size() == 1
                                    ? "names '" + key + "' twice"
                                    : top_key + ": names its key '" + key + "' twice";
            }
            return true;
        });
    if (!duplicate.empty())
        fail("header", duplicate +
                           " (the format disallows duplicate keys: readers disagree on which "
                           "copy counts)");
    if (!header.is_object()) fail("header", "not a JSON object");
    const unsigned char* data = file.data() + 8 + header_size;
    const std::size_t data_size = file.size() - 8 - header_size;

    TensorFile out;
    out.path = path;
    out.format = "safetensors";
    struct Span {
        std::size_t begin, end;
        std::string name;
    };
    std::vector<Span> spans;
    for (const auto& [name, entry] : header.items()) {
        if (name == "__metadata__") continue;
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets"))
            fail(name, "header entry lacks dtype, shape or data_offsets");
        const auto& dtype = entry["dtype"];
        const auto& shape = entry["shape"];
        const auto& offsets = entry["data_offsets"];
        if (!dtype.is_string()) fail(name, "dtype is not a string");
        NamedTensor t;
        t.name = name;
        t.dtype = dtype_of(dtype.get<std::string>());
        if (t.dtype.empty())
            fail(name,
                 "unknown dtype '" + dtype.get<std::string>() + "' (F32, F16, BF16, F64 or I64)");
        if (!shape.is_array()) fail(name, "shape is not a list");
        for (const auto& d : shape) {
            if (!d.is_number_unsigned()) fail(name, "shape holds something other than a dimension");
            const auto v = d.get<std::uint64_t>();
            if (v > (std::uint64_t{1} << 62)) fail(name, "dimension too large");
            t.shape.push_back(static_cast<std::int64_t>(v));
        }
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned())
            fail(name, "data_offsets is not [begin, end]");
        const auto begin = offsets[0].get<std::uint64_t>();
        const auto end = offsets[1].get<std::uint64_t>();
        if (begin > end) fail(name, "data_offsets end before they begin");
        if (end > data_size)
            fail(name, "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                           "] run past the end of the file (" + std::to_string(data_size) +
                           " data bytes)");
        const std::size_t width = dtype_size(t.dtype);
        const std::size_t count = checked_numel(t.shape, data_size, path + ": " + name);
        if (count * width != end - begin)
            fail(name, "data_offsets span " + std::to_string(end - begin) +
                           " bytes, its shape and dtype need " + std::to_string(count * width));
        if (lazy) {  // converted when the importer asks for the values (NamedTensor::raw)
            t.raw = data + begin;
            t.count = count;
        } else {
            t.data.resize(count);
            convert_to_float(t.dtype, data + begin, count, t.data.data());
        }
        spans.push_back({begin, end, name});
        out.tensors.push_back(std::move(t));
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    // The format: "The byte buffer needs to be entirely indexed, and cannot contain holes" (it
    // prevents polyglot files): the tensors tile the data from its first byte to the file's end.
    const auto hole = [&](std::size_t begin, std::size_t end, const std::string& where) {
        const std::size_t at = 8 + header_size;  // the data's first byte in the file
        fail("data", "bytes [" + std::to_string(begin) + ", " + std::to_string(end) +
                         ") of the data buffer (file bytes [" + std::to_string(at + begin) + ", " +
                         std::to_string(at + end) + ")) belong to no tensor (" + where +
                         "); the format requires the tensors to cover the buffer without holes");
    };
    const Span* furthest = nullptr;  // the span reaching furthest so far
    for (const auto& s : spans) {
        if (s.end == s.begin) continue;  // an empty tensor occupies nothing
        if (furthest && s.begin < furthest->end)
            fail(s.name, "data_offsets overlap those of " + furthest->name);
        const std::size_t covered = furthest ? furthest->end : 0;
        if (s.begin > covered)
            hole(covered, s.begin,
                 furthest ? "between " + furthest->name + " and " + s.name : "before " + s.name);
        if (!furthest || s.end > furthest->end) furthest = &s;
    }
    if (const std::size_t covered = furthest ? furthest->end : 0; covered < data_size)
        hole(covered, data_size, furthest ? "after " + furthest->name : "no tensor holds a byte");
    if (lazy) out.mappings.push_back(std::move(mapping));
    return out;
}

}  // namespace routescope::importers
