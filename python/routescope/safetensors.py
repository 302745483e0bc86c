"""safetensors read and written by hand (json + numpy; the `safetensors` package is not needed).

Format (huggingface/safetensors): 8 bytes little-endian N, N bytes of UTF-8 JSON header
{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
then the data; offsets are relative to the first byte after the header. Every size and offset is
checked against the file before anything is read, and every problem is a SafetensorsError naming
the file and the tensor. What the reference reader (the Rust crate, serde_json) refuses is refused
here too: a header over 100,000,000 bytes, JSON that serde_json rejects (NaN or Infinity, a \\u
escape of a lone UTF-16 surrogate), a `__metadata__` that is not a map of strings to strings, a
shape whose element count does not fit the data_offsets span, and data that the tensors do not
cover exactly (their spans, sorted, must run from 0 to the end of the file with no gap, overlap or
trailing byte). A name given twice is refused as well, where the reference reader keeps the last:
the safer choice, as readers may disagree on which copy is the tensor. Only a regular file is
opened: a FIFO would block open() forever. Messages escape what they quote from a file, so they
are always printable as UTF-8.
"""
import json
import math
import os
import stat
import struct

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
          "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
          "BOOL": "?"}  # BF16 is read separately (numpy has no bfloat16)
# The format's code of each numpy dtype read (BF16 is read as float32).
CODES = {np.dtype(v): k for k, v in DTYPES.items()}
# The format's dtypes that numpy has no type for: refused by read() as unsupported.
UNSUPPORTED_DTYPES = ("F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4")

# The reference reader's limit on the JSON header (its HeaderTooLarge).
MAX_HEADER_BYTES = 100_000_000


def printable(text):
    """`text` with what UTF-8 cannot encode (a lone surrogate from a file or a file name)
    backslash-escaped, so that a message can always be printed or logged."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class SafetensorsError(ValueError):
    """A malformed safetensors file; the message names the file and the tensor or header."""

    def __init__(self, message):
        super().__init__(printable(str(message)))


class NotRegularFile(OSError):
    """A path that is a directory, FIFO, device or socket where a file is read."""


def cut(name, limit=200):
    """A name from a file for a message: itself (its repr() if it holds characters that are not
    printable: a control character, a lone surrogate), or its first `limit` characters and its
    length (a header may name a tensor with a megabyte of text)."""
    text = name if name.isprintable() else repr(name)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(name)} characters)"


def file_kind(mode):
    """What a st_mode that is not a regular file is, in words."""
    for test, words in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a file"


def open_regular(path):
    """`path` opened for binary reading if it is a regular file (symbolic links followed), else
    NotRegularFile; other OSErrors (missing, unreadable, a link loop) propagate. os.stat decides
    before anything is opened, and the descriptor is checked again once opened (non-blocking, so
    that a FIFO put there in between cannot block the open)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFile(f"not a regular file ({file_kind(mode)})")
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblock | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"not a regular file ({file_kind(mode)})")
        if nonblock:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def os_reason(e):
    """The words of an OSError for a message that already names the file."""
    if isinstance(e, NotRegularFile):
        return str(e)
    return f"cannot be read ({e.strerror or e})"


def _open(path):
    try:
        return open_regular(path)
    except OSError as e:
        raise SafetensorsError(f"{path}: {os_reason(e)}") from None


class _Duplicate(Exception):
    pass


class _NotJson(Exception):
    pass


def _unique_keys(pairs):
    """json object_pairs_hook: a dict, or _Duplicate for a key given twice (json, like the
    reference reader for a tensor name, would keep the last one silently; refused as the safer
    choice: readers may disagree on which copy is meant)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _no_constant(name):
    """json parse_constant hook: NaN, Infinity and -Infinity are not JSON (serde_json refuses
    them)."""
    raise _NotJson(f"{name} is not a JSON value")


def _lone_surrogate(value):
    """The first string (key or value) of a parsed JSON document that UTF-8 cannot encode: a \\u
    escape of a lone UTF-16 surrogate, which Python's json accepts and serde_json refuses; None if
    there is none. Iterative: the document may be nested as deeply as json allows."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def _header(f, path):
    """(header, metadata, data offset, file size) of the open file `f`."""
    size = os.fstat(f.fileno()).st_size
    head = f.read(8)
    if len(head) < 8:
        raise SafetensorsError(f"{path}: header: file too short for the 8-byte header length")
    (n,) = struct.unpack("<Q", head)
    if n > size - 8:
        raise SafetensorsError(f"{path}: header: declares {n} header bytes, the file has "
                               f"{size - 8} after the length")
    if n > MAX_HEADER_BYTES:
        raise SafetensorsError(f"{path}: header: declares {n} header bytes, more than the "
                               f"{MAX_HEADER_BYTES} the format allows")
    raw = f.read(n)
    if len(raw) != n:
        raise SafetensorsError(f"{path}: header: {len(raw)} of its {n} bytes could be read")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys,
                            parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        raise SafetensorsError(f"{path}: header: not valid JSON (not UTF-8: {e})") from None
    except _Duplicate as e:
        raise SafetensorsError(f"{path}: header: {str(e.args[0])[:80]!r} is given twice") from None
    except _NotJson as e:
        raise SafetensorsError(f"{path}: header: not valid JSON ({e})") from None
    except RecursionError:
        raise SafetensorsError(f"{path}: header: not valid JSON (nested too deeply)") from None
    except ValueError as e:  # json.JSONDecodeError, or an integer of too many digits
        raise SafetensorsError(f"{path}: header: not valid JSON ({e})") from None
    surrogate = _lone_surrogate(header)
    if surrogate is not None:
        raise SafetensorsError(f"{path}: header: not valid JSON (the string {surrogate[:80]!r} "
                               "holds a lone UTF-16 surrogate, which is no Unicode text)")
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header: not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise SafetensorsError(f"{path}: header: __metadata__ is not a map of strings to strings")
    return header, metadata, 8 + n, size


def read_header(path):
    """(header dict without __metadata__, metadata dict, data offset, file size)."""
    with _open(path) as f:
        return _header(f, path)


def read(path):
    """{name: numpy array} of every tensor, in header order (BF16 widened exactly to float32)."""
    with _open(path) as f:
        header, _, start, size = _header(f, path)
        data_size = size - start
        spans = []
        plan = []
        for name, e in header.items():
            label = cut(name)
            if not isinstance(e, dict) or not {"dtype", "shape", "data_offsets"} <= set(e):
                raise SafetensorsError(f"{path}: {label}: header entry lacks dtype, shape or "
                                       "data_offsets")
            dtype, shape, offsets = e["dtype"], e["shape"], e["data_offsets"]
            if isinstance(dtype, str) and dtype in UNSUPPORTED_DTYPES:
                raise SafetensorsError(f"{path}: {label}: dtype {dtype} is not supported (a type "
                                       "of the format that numpy does not have)")
            if not isinstance(dtype, str) or (dtype not in DTYPES and dtype != "BF16"):
                raise SafetensorsError(f"{path}: {label}: unknown dtype {repr(dtype)[:80]}")
            # type(d) is int: JSON's true and false are not dimensions (bool is an int subclass)
            if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
                raise SafetensorsError(f"{path}: {label}: shape {str(shape)[:80]} is not a list "
                                       "of dimensions")
            if (not isinstance(offsets, list) or len(offsets) != 2 or
                    not all(type(o) is int and o >= 0 for o in offsets) or
                    offsets[0] > offsets[1]):
                raise SafetensorsError(f"{path}: {label}: data_offsets {str(offsets)[:80]} is not "
                                       "[begin, end]")
            begin, end = offsets
            if end > data_size:
                raise SafetensorsError(f"{path}: {label}: data_offsets [{begin}, {end}] run past "
                                       f"the end of the file ({data_size} data bytes)")
            width = 2 if dtype == "BF16" else np.dtype(DTYPES[dtype]).itemsize
            count = math.prod(shape)  # Python ints: no wrap-around, whatever the dimensions
            if count * width != end - begin:
                raise SafetensorsError(f"{path}: {label}: data_offsets span {end - begin} bytes, "
                                       f"its shape {shape} and dtype {dtype} need {count * width}")
            spans.append((begin, end, label))
            plan.append((name, label, dtype, shape, begin, end))
        # The spans, sorted, must tile the data exactly (the reference reader's InvalidOffset and
        # MetadataIncompleteBuffer): a gap or trailing bytes are data that no tensor accounts for.
        at, previous = 0, None
        for begin, end, label in sorted(spans):
            if begin < at:
                raise SafetensorsError(f"{path}: {label}: data_offsets overlap those of "
                                       f"{previous}")
            if begin > at:
                raise SafetensorsError(f"{path}: {label}: data_offsets begin at {begin}, bytes "
                                       f"[{at}, {begin}) of the data belong to no tensor")
            at, previous = end, label
        if at != data_size:
            raise SafetensorsError(f"{path}: {data_size - at} bytes after the last tensor's data "
                                   f"(at {at} of {data_size} data bytes) belong to no tensor")
        out = {}
        for name, label, dtype, shape, begin, end in plan:
            f.seek(start + begin)
            raw = f.read(end - begin)
            if len(raw) != end - begin:
                raise SafetensorsError(f"{path}: {label}: {len(raw)} of its {end - begin} bytes "
                                       "could be read (the file changed?)")
            if dtype == "BF16":
                bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
                a = bits.view(np.float32)
            else:
                a = np.frombuffer(raw, dtype=DTYPES[dtype]).astype(DTYPES[dtype].lstrip("<"))
            out[name] = a.reshape(shape)
    return out


def _unicode(text):
    """Whether `text` is a string UTF-8 can encode (no lone surrogate)."""
    if not isinstance(text, str):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def write(path, tensors, metadata=None):
    """Writes {name: numpy array} (float32, float16, int64 ...; any byte order, written little-
    endian; a 0-d array as shape []) as safetensors, to a temporary beside `path` renamed into
    place. Names are strings other than "__metadata__". metadata: a map of strings to strings (the
    format's `__metadata__`)."""
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            _unicode(k) and _unicode(v) for k, v in metadata.items())):
        raise SafetensorsError(f"{path}: __metadata__ must map strings to strings")
    codes = {np.dtype(v).str.lstrip("<|"): k for k, v in DTYPES.items()}
    header, offset, arrays = {}, 0, []
    for name, a in tensors.items():
        if not _unicode(name):
            raise SafetensorsError(f"{path}: key {repr(name)[:80]} is not a tensor name (a string "
                                   "of Unicode text)")
        if name == "__metadata__":
            raise SafetensorsError(f"{path}: '__metadata__' is the format's metadata key, not a "
                                   "tensor name")
        a = np.asarray(a, order="C")  # not ascontiguousarray: it makes a 0-d array 1-d
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        code = codes.get(a.dtype.str.lstrip("<|"))
        if code is None:
            raise SafetensorsError(f"{path}: {cut(name)}: dtype {a.dtype} has no safetensors "
                                   "code")
        header[name] = {"dtype": code, "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        arrays.append(a)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)),
                       f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for a in arrays:
                f.write(a.tobytes())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
