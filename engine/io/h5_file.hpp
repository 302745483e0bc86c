#pragma once
// Thin helpers over the HDF5 C++ API shared by every reader and writer of Routescope's two formats
// (DUMP_FORMAT.md, CHECKPOINT_FORMAT.md). They turn HDF5's error stack into messages that name the
// file and the object, and never let an H5::Exception escape as something the caller cannot read.
#include <H5Cpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace routescope::h5 {

/// Silences HDF5's automatic error printing (once per thread); errors are reported by us. Also,
/// once per process, makes every external link unfollowable: HDF5's external link class is
/// replaced by one whose traversal fails naming the link and where it leads, so no path
/// resolution anywhere in the process (a soft link's target included) opens another file.
void quiet_errors();

/// The innermost messages of the current HDF5 error stack, joined ("truncated file: eof = ...").
std::string error_stack_text();

/// Why `path` cannot be opened as HDF5, or nullopt when it can. Distinguishes a missing file, an
/// empty file, a file that is not HDF5 and a damaged/truncated one.
std::optional<std::string> unreadable_reason(const std::string& path);

/// Opens `path` read-only. Throws IoError naming the file and the reason.
H5::H5File open_read(const std::string& path);

/// Human names of HDF5 types as numpy spells them: "int32", "float16", "float64", "vlen utf-8
/// string". A float is named by its layout, not its size: "bfloat16" (8 exponent bits, 7
/// mantissa bits, bias 127) is not "float16" (IEEE binary16); a layout neither IEEE nor bfloat16
/// is "float(16 bits, nonstandard: ...)".
std::string type_name(const H5::DataType& type);

/// Dimensions of a dataset's dataspace.
std::vector<hsize_t> shape_of(const H5::DataSet& ds);
/// Whether `type` is little-endian IEEE binary16 (numpy's float16; what a float16 dump holds), so
/// its bits can be read as they are and converted by engine/io/half.hpp. Any other 2-byte float
/// (bfloat16, big-endian, another bias) is not.
bool is_binary16_le(const H5::DataType& type);

/// "[3, 32, 64]".
std::string shape_text(const std::vector<hsize_t>& shape);

bool is_float(const H5::DataType& type);                   ///< float16/32/64
bool is_int(const H5::DataType& type, std::size_t bytes);  ///< signed integer of that size
bool is_string(const H5::DataType& type);                  ///< fixed or variable string

/// Attribute readers: nullopt when the attribute is absent or not of the asked class.
bool has_attr(const H5::H5Object& obj, const std::string& name);
std::optional<std::string> read_string_attr(const H5::H5Object& obj, const std::string& name);
/// An unsigned value above 2^63 − 1 (a uint64 attribute) is read as 2^63 − 1, so that every
/// range check refuses it; int_attr_text gives the value stored, for the message.
std::optional<std::int64_t> read_int_attr(const H5::H5Object& obj, const std::string& name);
/// The integer attribute's value as stored, in decimal ("18446744073709551615" for a uint64 that
/// read_int_attr reads as 2^63 − 1); "" when it is absent or not one integer.
std::string int_attr_text(const H5::H5Object& obj, const std::string& name);
std::optional<double> read_float_attr(const H5::H5Object& obj, const std::string& name);
/// Class of an attribute's type as text ("string", "int64", "float64", ...), for messages.
std::string attr_type_name(const H5::H5Object& obj, const std::string& name);

/// Child names of a group, in the file's order.
std::vector<std::string> children(const H5::Group& group);
/// Whether every link on `path` is there. Throws FormatError naming the link when one is an
/// external link, or a soft link whose target leads through one (neither is ever followed).
bool exists(const H5::Group& group, const std::string& path);
bool is_group(const H5::Group& group, const std::string& path);
bool is_dataset(const H5::Group& group, const std::string& path);
/// What `path` below `group` holds, as a message's "found ..." says it: "nothing", "a group", "a
/// dataset", "a named datatype", "a dangling link to /nowhere" (a soft link to no object), "a
/// soft link to /x (a dataset)", "an external link to other.h5:/x (not followed)". For the
/// branches that found no object of the kind they need: a fixed "a dataset" there misnamed a
/// dangling link. Never follows an external link, never throws.
std::string describe_path(const H5::Group& group, const std::string& path);

/// What identifies the object `id` refers to in its file (the file's number and the object's
/// address), the same through every hard link to it: what a walk of groups remembers to notice a
/// link back to a group it is inside (a cycle, which a recursive walk never leaves). nullopt when
/// HDF5 cannot say.
std::optional<std::string> object_identity(hid_t id);

/// How many of the group's links can name a dataset: hard links to datasets, and soft links
/// (counted without being resolved). External links are never followed (nor counted). Metadata
/// only, one look-up per link: cheap next to anything that builds a list from a count the file
/// merely states (a checkpoint's /config).
std::uint64_t child_dataset_links(const H5::Group& group);

/// The sources of a virtual dataset ("src.h5:/w", "a.h5:/x and 3 more"), or nullopt when `ds` is
/// not virtual. A checkpoint holds its own data: virtual storage is for sharded dumps only.
std::optional<std::string> virtual_sources(const H5::DataSet& ds);

/// Bytes a dataset declares (elements × the size of its type), saturating at UINT64_MAX: what a
/// whole read would hold before any conversion.
std::uint64_t declared_bytes(const H5::DataSet& ds);

/// Why the dataset's declared size cannot be what the file holds, or nullopt when it can: a
/// contiguous or compact dataset whose bytes do not fit in `file_size` or whose data were never
/// written (no storage allocated), or a chunked one whose allocated chunks are fewer than its
/// extent needs (a "2^40-element" dataset of a few KB reads fill values for hours). A virtual
/// dataset: every source file exists and is a regular, non-virtual HDF5 file, its mappings cover
/// the extent, and each source dataset passes these same checks against its own file's size (a
/// shard whose chunks were never written read as fill values). Metadata only; never reads the data.
std::optional<std::string> storage_problem(const H5::DataSet& ds, std::uint64_t file_size);

/// The most bytes one in-memory read of untrusted data may take: a quarter of the memory this
/// process may use (memory_limit(): physical memory, ulimit -v, ulimit -d, the cgroup's limit;
/// ROUTESCOPE_READ_LIMIT_MB overrides it, for tests).
std::uint64_t read_memory_limit();

/// "1.5 GB".
std::string bytes_text(std::uint64_t bytes);

/// Throws FormatError "<file>: <what>: ... needs <estimate>, more than the limit ..." when
/// `bytes` exceeds read_memory_limit(). Call before allocating for a dataset or key.
void require_memory(const std::string& file, const std::string& what, std::uint64_t bytes);

/// Reads a whole 1-D integer dataset as int64 (any integer storage type).
std::vector<std::int64_t> read_ints(const H5::DataSet& ds);
/// Reads a whole string dataset (fixed or variable length) as UTF-8 strings.
std::vector<std::string> read_strings(const H5::DataSet& ds);

/// Writes string/int/float attributes (variable-length UTF-8 strings, as h5py writes them).
void write_string_attr(H5::H5Object& obj, const std::string& name, const std::string& value);
void write_int_attr(H5::H5Object& obj, const std::string& name, std::int64_t value);
void write_float_attr(H5::H5Object& obj, const std::string& name, double value);

/// The local time as ISO-8601 ("2026-11-22T02:37:33Z", UTC), for the `created` attributes.
std::string iso8601_now();

}  // namespace routescope::h5
