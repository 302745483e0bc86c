"""routescope.load: an export directory (config.json + model.safetensors or pytorch_model.bin)
into the module of its architecture, by load_state_dict with the file's own names.

Nothing in a file is trusted (docs/python.md, "What load refuses"): only regular files are
opened; config.json's keys are type- and range-checked, then its sizes are compared with the
shapes of the tensors in the weights file before any module is built, so that an edited config
cannot make load allocate what the file does not hold; tied tensors must be equal, position_ids
must be 0..max_position_embeddings-1, parameters must be floating point; a pytorch_model.bin's
zip records may not inflate to more than a small multiple of the file (checked before torch.load
inflates them). Every refusal is a LoadError naming the file.
"""
import io
import json
import math
import os
import pickle
import re
import stat
import struct
import zipfile

import numpy as np
import torch

from . import bert as bert_module
from . import bigs as bigs_module
from . import safetensors as st
from .bert import BertForMaskedLM, BertForSequenceClassification
from .bigs import BigsForMaskedLM, BigsForSequenceClassification

WEIGHTS = ("model.safetensors", "pytorch_model.bin")

# The heads' own names: a model exported with both heads (a classifier fine-tuned from an MLM
# checkpoint keeps its MLM head) loads into either class, the other head's tensors left out.
MLM_ONLY = ("cls.predictions.",)
CLASSIFY_ONLY = ("bigs.pooler.", "bert.pooler.", "classifier.")

# Tensors a state_dict repeats for the tied decoder; safetensors leaves them out. The module has
# one parameter under both names, so a file where they differ is refused.
TIED = {"cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias"}

# transformers' BERT buffer 0..max_position_embeddings-1; a file may hold it (the engine does not
# write it). It must be exactly that: the module's own buffer is kept.
POSITION_IDS = "bert.embeddings.position_ids"
# The official BiGS PyTorch port saves its position ids buffer too (its module registers it):
# accepted when it is 0..Lmax−1, the positions the module computes, and not loaded.
BIGS_POSITION_IDS = "bigs.embeddings.position_ids"

# config.json, per model_type: the keys the modules read. Sizes are positive ints (not bools,
# floats or strings); `required` must be present; BiGS's other keys have the official port's
# defaults (bigs.DEFAULTS).
SIZES = ("vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size",
         "max_position_embeddings")
REQUIRED = {"bert": SIZES + ("num_attention_heads", "type_vocab_size", "layer_norm_eps",
                             "hidden_act"),
            "bigs": SIZES}
# The architecture's other sizes, checked as SIZES are where present (bert requires them).
OTHER_SIZES = {"bert": ("num_attention_heads", "type_vocab_size"),
               "bigs": ("type_vocab_size", "num_ssm")}
ACTS = {"bert": bert_module.HIDDEN_ACTS,
        "bigs": bigs_module.TANH_GELUS + bigs_module.ERF_GELUS}
# Keys of a published config whose other values the modules do not compute (they would load as
# something else): key -> the one value accepted. position_embedding_type as the engine's
# importer reads it for both architectures (the official BiGS port adds position embeddings only
# for "absolute").
ONLY = {"bert": {"position_embedding_type": "absolute", "is_decoder": False},
        "bigs": {"position_embedding_type": "absolute", "pre_norm": True}}
# A BiGS MLM head: the official port applies hidden_act in the head's transform, where the module
# (as the engine) has the erf gelu, so only these hidden_act values load with it; the rule of
# `routescope-cli import` (engine/io/importers/model_import.cpp: "only 'gelu' imports with an MLM
# head"). A classifier has no such head.
BIGS_MLM_ACTS = ("gelu", "gelu_exact", "gelu_erf")

# torch.save's zip format, as torch.load tells it (the first four bytes); torch.load inflates
# every record in full, to the size the zip's central directory gives, before anything can be
# checked. The records may hold at most this multiple of the file's size (torch.save stores them
# uncompressed: about 1; a deflated copy of an export: about 1.1), and be stored or deflated (the
# methods torch's zip reader has).
ZIP_MAGIC = b"PK\x03\x04"
MAX_INFLATION = 8
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)

# At most this many problems are listed in one message.
MAX_PROBLEMS = 20


class LoadError(ValueError):
    """An export that cannot be loaded; the message names the file and the key or tensor (what
    UTF-8 cannot encode escaped, so that it can always be printed)."""

    def __init__(self, message):
        super().__init__(st.printable(str(message)))


def _quote(value):
    """repr(value), cut at 80 characters with its length (a value from a file may be huge)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}... ({len(text)} characters)"


def _regular(path):
    """Raises LoadError unless `path` is a regular file (symbolic links followed): a FIFO would
    block open() forever, and a directory or device is no export file."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise LoadError(f"{path}: {st.os_reason(e)}") from None
    if not stat.S_ISREG(mode):
        raise LoadError(f"{path}: not a regular file ({st.file_kind(mode)})")


def _locate(path):
    """(config.json, weights file) of an export directory or of a weights file; the weights file
    is a regular file."""
    path = os.fspath(path)
    if os.path.isdir(path):
        for name in WEIGHTS:
            if os.path.lexists(os.path.join(path, name)):
                _regular(os.path.join(path, name))
                return os.path.join(path, "config.json"), os.path.join(path, name)
        raise LoadError(f"{path}: no {' or '.join(WEIGHTS)}")
    if not os.path.lexists(path):
        raise LoadError(f"{path}: no such file or directory")
    _regular(path)
    return os.path.join(os.path.dirname(os.path.abspath(path)), "config.json"), path


def _positive_int(c, key, where):
    value = c[key]
    if type(value) is not int or value < 1:  # type(): JSON's true is no size
        raise LoadError(f"{where}: {key} = {_quote(value)} is not a positive integer")
    return value


def _finite(x):
    """math.isfinite for a JSON number: an integer too large for a float (a valid JSON integer of
    hundreds of digits) is not a finite float, rather than an OverflowError."""
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def check_config(c, where="config.json"):
    """Raises LoadError (naming `where`) unless the config dict `c` is one the modules can be
    built from: model_type BiGS or bert, every key the architecture reads present (or, for BiGS,
    defaulted) with its type and range, architectures a list of class names."""
    if not isinstance(c, dict):
        raise LoadError(f"{where}: not a JSON object")
    if "model_type" not in c:
        raise LoadError(f"{where}: missing key model_type")
    kind = c["model_type"]
    if not isinstance(kind, str) or kind.lower() not in REQUIRED:
        raise LoadError(f"{where}: model_type {_quote(kind)} (BiGS or bert)")
    kind = kind.lower()
    for key in REQUIRED[kind]:
        if key not in c:
            raise LoadError(f"{where}: missing key {key}")
    for key in SIZES + OTHER_SIZES[kind]:
        if key in c:
            _positive_int(c, key, where)
    if kind == "bert" and c["hidden_size"] % c["num_attention_heads"]:
        raise LoadError(f"{where}: hidden_size {c['hidden_size']} is not a multiple of "
                        f"num_attention_heads {c['num_attention_heads']}")
    if "layer_norm_eps" in c:
        eps = c["layer_norm_eps"]
        if type(eps) not in (int, float) or not _finite(eps) or eps <= 0:
            raise LoadError(f"{where}: layer_norm_eps = {_quote(eps)} is not a positive finite "
                            "number")
    if "hidden_act" in c and (not isinstance(c["hidden_act"], str) or
                              c["hidden_act"] not in ACTS[kind]):
        raise LoadError(f"{where}: hidden_act {_quote(c['hidden_act'])}: a {kind} has "
                        f"{', '.join(ACTS[kind])}")
    if kind == "bigs" and "pooler_type" in c and (not isinstance(c["pooler_type"], str) or
                                                  c["pooler_type"] not in bigs_module.POOLER_TYPES):
        raise LoadError(f"{where}: pooler_type {_quote(c['pooler_type'])}: a BiGS has "
                        f"{', '.join(bigs_module.POOLER_TYPES)}")
    for key, value in ONLY[kind].items():
        if key in c and (c[key] != value or type(c[key]) is not type(value)):
            raise LoadError(f"{where}: {key} = {_quote(c[key])}: the module computes only "
                            f"{json.dumps(value)}")
    arch = c.get("architectures")
    if arch is not None and (not isinstance(arch, list) or
                             not all(isinstance(a, str) for a in arch)):
        raise LoadError(f"{where}: architectures {_quote(arch)} is not a list of class names")


def load_config(path):
    """config.json of an export (directory, weights file or the config itself) as a dict, checked
    by check_config."""
    path = os.fspath(path)
    config = path if path.endswith(".json") else _locate(path)[0]
    try:
        with st.open_regular(config) as f:
            raw = f.read()
    except FileNotFoundError:
        raise LoadError(f"{config}: missing (export writes it beside the weights)") from None
    except OSError as e:
        raise LoadError(f"{config}: {st.os_reason(e)}") from None
    try:
        c = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise LoadError(f"{config}: not valid JSON (not UTF-8: {e})") from None
    except RecursionError:
        raise LoadError(f"{config}: not valid JSON (nested too deeply)") from None
    except ValueError as e:  # json.JSONDecodeError, or an integer of too many digits
        raise LoadError(f"{config}: not valid JSON ({e})") from None
    check_config(c, config)
    return c


def _overlapping(t):
    """Whether the elements of a strided tensor share memory (an expanded view: [3e7, 16] from
    16 stored values), so that it stands for more values than the file holds."""
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))
    return t.numel() > 0 and t.numel() > span


# Bytes per element of the storage types a torch.save pickle names (torch.<Name>Storage).
STORAGE_BYTES = {"DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2,
                 "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1,
                 "ByteStorage": 1, "BoolStorage": 1, "ComplexFloatStorage": 8,
                 "ComplexDoubleStorage": 16,
                 # torch >= 2.1's newer dtypes (uint16/32/64, float8): an untyped storage,
                 # torch.storage.UntypedStorage, whose element count is its bytes
                 "UntypedStorage": 1}


class _StorageDeclarations(pickle.Unpickler):
    """Reads a torch.save data.pkl for its storage declarations alone, {key: (type name,
    elements)}, running nothing: every global is a placeholder (torch.load then reads the file
    with its own weights_only checks)."""

    def __init__(self, data):
        super().__init__(io.BytesIO(data))
        self.declared = {}

    class _Placeholder:
        """What any other global builds: it takes items and state, and holds nothing."""

        def __init__(self, *args, **kwargs):
            pass

        def __setitem__(self, key, value):
            pass

        def __setstate__(self, state):
            pass

        def append(self, value):
            pass

        def extend(self, values):
            pass

    def find_class(self, module, name):
        if module in ("torch", "torch.storage") and name.endswith("Storage"):
            return name  # the storage type, as its name
        return _StorageDeclarations._Placeholder  # a rebuild function, OrderedDict, ...

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
            raise pickle.UnpicklingError(f"persistent id {_quote(pid)} is not a storage")
        _, kind, key, _location, numel = pid
        # A storage type this list lacks (a quantized one) is left to torch.load's own verdict.
        if isinstance(kind, str) and kind in STORAGE_BYTES and isinstance(numel, int):
            self.declared[str(key)] = (kind, numel)
        return None


def _check_records(z, entries, weights):
    """Raises LoadError unless every storage the pickle of the zip `z` declares has a record
    holding its bytes: torch 1.13's torch.load builds a storage of the declared size over a
    shorter record without a check, and the tensors on it read memory past the record (another
    model, or a segfault)."""
    pickles = [e.filename for e in entries if e.filename.endswith("/data.pkl")
               and e.filename.count("/") == 1]
    if len(pickles) != 1:
        raise LoadError(f"{weights}: not a torch.save state_dict (no single <archive>/data.pkl "
                        "record)")
    prefix = pickles[0][:-len("data.pkl")]
    try:
        reader = _StorageDeclarations(z.read(pickles[0]))
        reader.load()
    except Exception as e:  # noqa: BLE001 (zlib, pickle and the placeholders raise many kinds)
        raise LoadError(f"{weights}: not a readable torch.save state_dict ({e})") from None
    sizes = {e.filename: e.file_size for e in entries}
    for key, (kind, numel) in reader.declared.items():
        record = prefix + "data/" + key
        need = numel * STORAGE_BYTES[kind]
        if record not in sizes:
            raise LoadError(f"{weights}: storage {st.cut(key)} has no zip record {st.cut(record)}")
        if sizes[record] < need:
            raise LoadError(f"{weights}: zip record {st.cut(record)} holds {sizes[record]} bytes, "
                            f"its storage declares {numel} elements of {kind} ({need} bytes)")


def _check_zip(f, weights):
    """Raises LoadError if the open file `f` is a zip (as torch.load tells one) whose central
    directory is unreadable, uses a compression method other than stored or deflated, or lists
    records that inflate to more than MAX_INFLATION times the file's size (a compression bomb:
    torch.load would allocate them all); leaves `f` at its start."""
    size = os.fstat(f.fileno()).st_size
    magic = f.read(len(ZIP_MAGIC))
    f.seek(0)
    if magic != ZIP_MAGIC:
        return  # torch.load's legacy format: its storages are stored, not compressed
    try:
        with zipfile.ZipFile(f) as z:
            entries = z.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            struct.error) as e:
        raise LoadError(f"{weights}: not a readable torch.save state_dict (its zip directory: "
                        f"{e})") from None
    finally:
        f.seek(0)
    total = 0
    for entry in entries:
        if entry.compress_type not in ZIP_METHODS:
            raise LoadError(f"{weights}: zip record {st.cut(entry.filename)}: compression method "
                            f"{entry.compress_type} (torch.load reads stored and deflated "
                            "records only)")
        total += entry.file_size
    if total > MAX_INFLATION * size:
        raise LoadError(f"{weights}: its {len(entries)} zip records inflate to {total} bytes, "
                        f"more than {MAX_INFLATION} times the file's {size} bytes (a compression "
                        "bomb: refused before torch.load would inflate them)")
    try:
        with zipfile.ZipFile(f) as z:
            _check_records(z, entries, weights)
    finally:
        f.seek(0)


def load_state_dict(path):
    """{name: tensor} of an export's weights file, in the file's dtypes (safetensors by hand,
    pytorch_model.bin by torch.load(weights_only=True), its zip records checked first);
    LoadError for a name that is not a string, a value that is not a dense tensor, a tensor whose
    elements share memory, or a safetensors dtype torch has no type for."""
    weights = _locate(path)[1]
    if weights.endswith(".safetensors"):
        try:
            arrays = st.read(weights)
        except st.SafetensorsError as e:
            raise LoadError(str(e)) from None
        out = {}
        for k, v in arrays.items():
            try:
                out[k] = torch.from_numpy(np.asarray(v, order="C"))  # 0-d stays 0-d
            except TypeError:  # U16, U32, U64: numpy has them, torch (before 2.3) does not
                raise LoadError(f"{weights}: {st.cut(k)}: dtype {st.CODES.get(v.dtype, v.dtype)} "
                                f"({v.dtype}) has no torch type in torch {torch.__version__}") \
                    from None
        return out
    try:
        f = st.open_regular(weights)
    except OSError as e:
        raise LoadError(f"{weights}: {st.os_reason(e)}") from None
    with f:
        _check_zip(f, weights)
        try:
            sd = torch.load(f, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 (torch raises several kinds for a bad file)
            raise LoadError(f"{weights}: not a readable torch.save state_dict ({e})") from None
    if not isinstance(sd, dict):
        raise LoadError(f"{weights}: holds a {type(sd).__name__}, not a state_dict")
    for name, t in sd.items():
        if not isinstance(name, str):
            raise LoadError(f"{weights}: key {_quote(name)} is not a tensor name (a string)")
        if not isinstance(t, torch.Tensor):
            raise LoadError(f"{weights}: {st.cut(name)}: a value of type {type(t).__name__}, "
                            "not a tensor")
        if t.layout != torch.strided:
            raise LoadError(f"{weights}: {st.cut(name)}: a {t.layout} tensor, not a dense one")
        if _overlapping(t):
            raise LoadError(f"{weights}: {st.cut(name)}: its {t.numel()} elements overlap in "
                            "memory (an expanded view), more than the file stores")
    return dict(sd)


def model_class(config, head=None):
    """The module class of `config` (model_type BiGS | bert) for `head` (mlm | classify; None:
    config's architectures)."""
    kind = config.get("model_type", "")
    kind = kind.lower() if isinstance(kind, str) else ""
    if head is None:
        arch = config.get("architectures") or [""]
        if not isinstance(arch, list) or not isinstance(arch[0], str):
            raise LoadError(f"config.json: architectures {_quote(arch)} is not a list of class "
                            "names")
        head = "classify" if arch[0].endswith("ForSequenceClassification") else "mlm"
    if head not in ("mlm", "classify"):
        raise LoadError(f"head {head!r}: mlm or classify")
    if kind == "bigs":
        return BigsForMaskedLM if head == "mlm" else BigsForSequenceClassification
    if kind == "bert":
        return BertForMaskedLM if head == "mlm" else BertForSequenceClassification
    raise LoadError(f"config.json: model_type {_quote(config.get('model_type'))} (BiGS or bert)")


def _same_values(a, b):
    """Whether two tensors hold the same values (floating ones compared exactly in float64, NaN
    equal to NaN)."""
    if tuple(a.shape) != tuple(b.shape):
        return False
    if a.is_floating_point() and b.is_floating_point():
        a, b = a.double(), b.double()
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return a.dtype == b.dtype and torch.equal(a, b)


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def _layers_held(sd, root):
    """The distinct encoder layer indices among the names of `sd`, as the strings of digits they
    are (never converted: a name may carry a 10,000-digit index)."""
    pattern = re.compile(re.escape(root) + r"encoder\.layer\.([0-9]+)\.")
    return {m.group(1) for m in map(pattern.match, sd) if m}


def load(path, head=None, dtype=torch.float32):
    """The model of an export (directory or weights file), its parameters loaded by name, in eval
    mode. head: mlm | classify (default: config.json's architectures). Everything is checked
    before the module is built; a problem is a LoadError naming the file."""
    config_path, weights = _locate(path)
    c = dict(load_config(config_path))
    cls = model_class(c, head)
    act = c.get("hidden_act", bigs_module.DEFAULTS["hidden_act"])
    if cls is BigsForMaskedLM and act not in BIGS_MLM_ACTS:
        raise LoadError(f"{config_path}: hidden_act {_quote(act)}: the official BiGS port applies "
                        "it in the MLM head's transform, where the module (as the engine) has "
                        f"the erf gelu: only {', '.join(map(repr, BIGS_MLM_ACTS))} load with an "
                        "MLM head (as routescope-cli import; the classifier loads)")
    sd = load_state_dict(weights)
    classify = cls in (BigsForSequenceClassification, BertForSequenceClassification)
    is_bigs = cls in (BigsForMaskedLM, BigsForSequenceClassification)
    root = "bigs." if is_bigs else "bert."
    c["type_embeddings"] = root + "embeddings.token_type_embeddings.weight" in sd
    if classify:
        bias = sd.get("classifier.bias")
        if bias is None:
            raise LoadError(f"{weights}: classifier.bias: missing (no classification head)")
        if bias.dim() != 1 or bias.shape[0] < 1:
            raise LoadError(f"{weights}: classifier.bias: shape {list(bias.shape)}, expected "
                            "[num_labels] with at least one label")
        c["num_labels"] = int(bias.shape[0])

    # config.json against the file before anything is allocated: first the layer count (the
    # name list of a claimed 10^9 layers would itself be the bomb), then every shape.
    held = _layers_held(sd, root)
    if c["num_hidden_layers"] > len(held):
        where = ("no encoder layer" if not held else
                 f"encoder layers 0..{len(held) - 1}" if held == set(map(str, range(len(held))))
                 else f"{len(held)} encoder layers")
        raise LoadError(f"{config_path}: num_hidden_layers = {c['num_hidden_layers']}, but "
                        f"{weights} holds {where}")
    want = (bigs_module if is_bigs else bert_module).state_dict_shapes(
        c, "classify" if classify else "mlm")
    buffers = {POSITION_IDS} if not is_bigs else set()
    tied = {copy: original if original.startswith("cls.") else root + original
            for copy, original in TIED.items()}

    other = MLM_ONLY if classify else CLASSIFY_ONLY
    problems = []
    for copy, original in tied.items():  # one parameter in the module: equal in the file
        if copy in sd and original in sd and not _same_values(sd[copy], sd[original]):
            problems.append(f"{copy} and {original}: tied tensors differ (the module has one "
                            "parameter for both)")
    for name, t in sd.items():
        if name == root + "embeddings.token_type_ids":  # transformers' buffer (newer versions)
            lmax = c["max_position_embeddings"]
            if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
                problems.append(f"{name}: dtype {_dtype(t)}, expected an integer type")
            elif tuple(t.shape) not in ((lmax,), (1, lmax)) or bool((t != 0).any()):
                problems.append(f"{name}: not {lmax} zeros of shape [1, {lmax}] (the module's "
                                "default token types are 0)")
            continue
        if is_bigs and name == BIGS_POSITION_IDS:
            lmax = c["max_position_embeddings"]
            if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
                problems.append(f"{name}: dtype {_dtype(t)}, expected an integer type")
            elif tuple(t.shape) not in ((lmax,), (1, lmax)) or not torch.equal(
                    t.long().reshape(-1), torch.arange(lmax)):
                problems.append(f"{name}: not 0..{lmax - 1} of shape [1, {lmax}] (the module's "
                                "positions are arange(max_position_embeddings))")
            continue
        if name not in want:
            if not name.startswith(other):
                problems.append(f"{st.cut(name)}: unexpected")
        elif tuple(t.shape) != want[name]:
            problems.append(f"{name}: shape {list(t.shape)}, expected {list(want[name])}")
        elif name == POSITION_IDS:
            if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
                problems.append(f"{name}: dtype {_dtype(t)}, expected an integer type")
            elif not torch.equal(t.long(), torch.arange(want[name][1])[None]):
                problems.append(f"{name}: not 0..{want[name][1] - 1} (the module's positions "
                                "are arange(max_position_embeddings))")
        elif not t.is_floating_point():
            problems.append(f"{name}: dtype {_dtype(t)}, expected a floating-point type")
    for copy, original in tied.items():  # safetensors leaves the tied decoder out
        if copy in want and copy not in sd and original in sd:
            sd[copy] = sd[original]
    problems += [f"{name}: missing" for name in want if name not in sd and name not in buffers]
    if problems:
        more = len(problems) - MAX_PROBLEMS
        raise LoadError(f"{weights}: " + "; ".join(problems[:MAX_PROBLEMS]) +
                        (f"; and {more} more" if more > 0 else ""))
    # Every parameter of the module now has its tensor in the file, of its shape; each element
    # takes at least a byte there unless tensors share storage (a .bin may make views of one
    # array), which would let a small file stand for a huge model.
    parameters = sum(math.prod(shape) for name, shape in want.items()
                     if name not in buffers and name not in tied)
    size = os.stat(weights).st_size
    if parameters > size:
        raise LoadError(f"{weights}: its tensors name {parameters} parameter values, more than its "
                        f"{size} bytes can hold (tensors sharing storage)")

    # In the asked dtype before the weights go in: a float64 file's values were rounded through
    # the float32 parameters of a module built in the default dtype.
    model = cls(c).to(dtype)
    state = {k: v for k, v in sd.items() if k in want and k not in buffers}
    state.update((k, b) for k, b in model.named_buffers() if k in want)  # position_ids: its own
    model.load_state_dict(state, strict=True)
    return model.to(dtype).eval()
