"""safetensors read and written by hand (json + numpy; the `safetensors` package is not needed).

Format (huggingface/safetensors): 8 bytes little-endian N, N bytes of JSON header
{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
then the data; offsets are relative to the first byte after the header. Every size and offset is
checked against the file before anything is read, and every problem is a SafetensorsError naming
the file and the tensor.
"""
import json
import os
import struct

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I8": "i1",
          "U8": "u1", "BOOL": "?"}  # BF16 is read separately (numpy has no bfloat16)


class SafetensorsError(ValueError):
    """A malformed safetensors file; the message names the file and the tensor or header."""


def read_header(path):
    """(header dict without __metadata__, metadata dict, data offset, file size)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise SafetensorsError(f"{path}: header: file too short for the 8-byte header length")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise SafetensorsError(f"{path}: header: declares {n} header bytes, the file has "
                                   f"{size - 8} after the length")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SafetensorsError(f"{path}: header: not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header: not a JSON object")
    metadata = header.pop("__metadata__", {}) or {}
    return header, metadata, 8 + n, size


def read(path):
    """{name: numpy array} of every tensor, in header order (BF16 widened exactly to float32)."""
    header, _, start, size = read_header(path)
    data_size = size - start
    spans = []
    plan = []
    for name, e in header.items():
        if not isinstance(e, dict) or not {"dtype", "shape", "data_offsets"} <= set(e):
            raise SafetensorsError(f"{path}: {name}: header entry lacks dtype, shape or "
                                   "data_offsets")
        dtype, shape, offsets = e["dtype"], e["shape"], e["data_offsets"]
        if dtype not in DTYPES and dtype != "BF16":
            raise SafetensorsError(f"{path}: {name}: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise SafetensorsError(f"{path}: {name}: shape {shape!r} is not a list of dimensions")
        if (not isinstance(offsets, list) or len(offsets) != 2 or
                not all(isinstance(o, int) and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
            raise SafetensorsError(f"{path}: {name}: data_offsets {offsets!r} is not [begin, end]")
        begin, end = offsets
        if end > data_size:
            raise SafetensorsError(f"{path}: {name}: data_offsets [{begin}, {end}] run past the "
                                   f"end of the file ({data_size} data bytes)")
        width = 2 if dtype == "BF16" else np.dtype(DTYPES[dtype]).itemsize
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * width != end - begin:
            raise SafetensorsError(f"{path}: {name}: data_offsets span {end - begin} bytes, its "
                                   f"shape {shape} and dtype {dtype} need {count * width}")
        spans.append((begin, end, name))
        plan.append((name, dtype, shape, begin, end))
    spans.sort()
    furthest = None
    for begin, end, name in spans:
        if end == begin:
            continue
        if furthest is not None and begin < furthest[1]:
            raise SafetensorsError(f"{path}: {name}: data_offsets overlap those of {furthest[2]}")
        if furthest is None or end > furthest[1]:
            furthest = (begin, end, name)
    out = {}
    with open(path, "rb") as f:
        for name, dtype, shape, begin, end in plan:
            f.seek(start + begin)
            raw = f.read(end - begin)
            if dtype == "BF16":
                bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
                a = bits.view(np.float32)
            else:
                a = np.frombuffer(raw, dtype=DTYPES[dtype]).astype(DTYPES[dtype].lstrip("<"))
            out[name] = a.reshape(shape)
    return out


def write(path, tensors, metadata=None):
    """Writes {name: numpy array} (float32, float16, int64 ...) as safetensors, to a temporary
    beside `path` renamed into place."""
    codes = {np.dtype(v).str.lstrip("<|"): k for k, v in DTYPES.items()}
    header, offset, arrays = {}, 0, []
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        code = codes.get(a.dtype.str.lstrip("<|"))
        if code is None:
            raise SafetensorsError(f"{path}: {name}: dtype {a.dtype} has no safetensors code")
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
                f.write(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
