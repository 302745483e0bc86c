#!/usr/bin/python3
"""Hostile Flax msgpack files (probe Q2): `import` refuses each with exit 2 and a message naming the
file and the problem (docs/cli.md), within memory in proportion to the file (docs/decisions.md:
"declared counts and sizes are bounded by the file"), and writes nothing under --out.

- a 3 MB file of nested lists, each declaring up to the file's size in elements, made msgpack-cxx
  reserve gigabytes (each container was checked against the whole file alone);
- long keys (250 KB each, or 63 nested keys of 1000 bytes above 4000 arrays) took hundreds of MB:
  every array kept its whole joined name three times;
- a key's control characters (ESC, BEL, a newline forging a "note:" line) reached stderr raw, and
  a 4 MB key was echoed whole;
- a Git LFS pointer or an HTML page saved as flax_model.msgpack was "134 bytes after the msgpack
  object".

The files are written here by hand in msgpack's format (github.com/msgpack/msgpack spec.md) and
flax.serialization's layout (nested maps; every array an ExtType 1 whose payload is the msgpack of
(shape, dtype name, raw bytes)); the valid BiGS tree is make_import_fixtures.py's small_bigs.
Peak memory is the child's ru_maxrss (os.wait4), under an address-space limit of 1.5 GB.

    test_flax_hostile.py --cli routescope-cli --work DIR
"""
import collections
import json
import os
import resource
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cli_suite import suite_from_args  # noqa: E402

LIMIT_AS = 1500 << 20


# ---------------------------------------------------------------- msgpack, by hand


class Ext:
    def __init__(self, code, payload):
        self.code, self.payload = code, payload


class Raw:
    """Bytes written as they are (a hand-made header)."""

    def __init__(self, data):
        self.data = data


def mp(obj):
    """msgpack of str, bytes, int >= 0, list/tuple, dict, Ext or Raw."""
    if isinstance(obj, Raw):
        return obj.data
    if isinstance(obj, Ext):
        n = len(obj.payload)
        head = {1: b"\xd4", 2: b"\xd5", 4: b"\xd6", 8: b"\xd7", 16: b"\xd8"}.get(n)
        if head is None:
            head = (b"\xc7" + struct.pack(">B", n) if n < 256 else
                    b"\xc8" + struct.pack(">H", n) if n < 65536 else b"\xc9" + struct.pack(">I", n))
        return head + struct.pack(">b", obj.code) + obj.payload
    if isinstance(obj, str):
        obj = obj.encode()
        n = len(obj)
        return (bytes([0xa0 | n]) if n < 32 else b"\xd9" + struct.pack(">B", n) if n < 256
                else b"\xda" + struct.pack(">H", n) if n < 65536
                else b"\xdb" + struct.pack(">I", n)) + obj
    if isinstance(obj, bytes):
        n = len(obj)
        return (b"\xc4" + struct.pack(">B", n) if n < 256 else b"\xc5" + struct.pack(">H", n)
                if n < 65536 else b"\xc6" + struct.pack(">I", n)) + obj
    if isinstance(obj, int):
        assert obj >= 0
        return bytes([obj]) if obj < 128 else b"\xcd" + struct.pack(">H", obj)
    if isinstance(obj, (list, tuple)):
        n = len(obj)
        return (bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)) + \
            b"".join(mp(x) for x in obj)
    if isinstance(obj, dict):
        n = len(obj)
        return (bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n) if n < 65536
                else b"\xdf" + struct.pack(">I", n)) + \
            b"".join(mp(k) + mp(v) for k, v in obj.items())
    raise TypeError(type(obj))


def flax_leaf(a):
    """flax.serialization._ndarray_to_bytes: msgpack((shape, dtype.name, bytes)) as ExtType 1."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    return Ext(1, mp((tuple(a.shape), "float32", a.tobytes("C"))))


EMPTY_LEAF = flax_leaf(np.zeros(0, np.float32))


def flax_tree(flat):
    """{'a/b/c': array} → nested maps with leaves, in insertion order."""
    root = {}
    for path, a in flat.items():
        node = root
        parts = path.split("/")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = flax_leaf(a)
    return root


# ---------------------------------------------------------------- a small valid BiGS (Flax names)

V_PIECES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat"]
D, I, LAYERS, N, LMAX, V = 8, 12, 1, 4, 16, len(V_PIECES)
LINEARS = {"dv": (D, I), "du_forward": (D, D), "du_backward": (D, D), "duc_forward": (D, D),
           "duc_backward": (D, D), "dol": (D, I), "do": (I, D)}  # (in, out)


def small_bigs_flax(rng):
    """The published Flax BiGS names and shapes (make_import_fixtures.py's to_flax)."""
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    out = collections.OrderedDict()
    e = "s4_bert/embeddings/"
    out[e + "word_embeddings/embedding"] = f(V, D)
    out[e + "position_embeddings/embedding"] = f(LMAX, D)
    out[e + "token_type_embeddings/embedding"] = f(2, D)
    out[e + "LayerNorm/scale"], out[e + "LayerNorm/bias"] = f(D), f(D)
    for i in range(LAYERS):
        s = f"s4_bert/encoder/layer/{i}/"
        out[s + "LayerNorm/scale"], out[s + "LayerNorm/bias"] = f(D), f(D)
        for lin, (fin, fout) in LINEARS.items():
            out[s + lin + "/kernel"], out[s + lin + "/bias"] = f(fin, fout), f(fout)
        for src in ("fs4", "bs4"):
            out[s + src + "/A_re"], out[s + src + "/A_im"] = f(N), f(N)
            out[s + src + "/C"], out[s + src + "/D"], out[s + src + "/log_step"] = \
                f(N, 2), f(1), f(1)
    c = "cls/predictions/"
    out[c + "transform/dense/kernel"], out[c + "transform/dense/bias"] = f(D, D), f(D)
    out[c + "transform/LayerNorm/scale"], out[c + "transform/LayerNorm/bias"] = f(D), f(D)
    out[c + "bias"] = f(V)
    return out


CONFIG = {"architectures": ["BiGSForMaskedLM"], "model_type": "BiGS", "vocab_size": V,
          "hidden_size": D, "num_hidden_layers": LAYERS, "intermediate_size": I, "num_ssm": N,
          "max_position_embeddings": LMAX, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
          "hidden_act": "gelu", "pre_norm": True, "pad_token_id": 0}


def main():
    t = suite_from_args()
    # AddressSanitizer reserves terabytes of address space and doubles the memory used: the
    # limit and the peak-memory bounds apply to an ordinary build only.
    with open(t.cli, "rb") as f:
        asan = b"__asan_init" in f.read()

    def model_dir(name, weights):
        """A model directory: config.json, vocab.txt and `weights` as flax_model.msgpack."""
        d = t.path(name)
        os.makedirs(d)
        with open(os.path.join(d, "flax_model.msgpack"), "wb") as f:
            f.write(weights)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(CONFIG, f)
        with open(os.path.join(d, "vocab.txt"), "w") as f:
            f.write("\n".join(V_PIECES) + "\n")
        return d

    def import_(*args):
        """Runs `import ARGS` under the address-space limit: (exit code, stderr bytes, peak
        resident memory in bytes)."""
        err_path = t.path("stderr.txt")

        def limited():
            if not asan:
                resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
        with open(err_path, "wb") as err, open(os.devnull, "wb") as out:
            p = subprocess.Popen([t.cli, "import", *args], stdout=out, stderr=err,
                                 preexec_fn=limited)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        with open(err_path, "rb") as f:
            return p.returncode, f.read(), usage.ru_maxrss * 1024

    def refused(d, needles, max_rss=None, out_name="out.ckpt.h5", extra=()):
        """import of `d` exits 2, its stderr holding every needle, --out not written and, when
        given, the peak memory under max_rss bytes. Returns stderr as text."""
        out = os.path.join(t.work, out_name)
        before = open(out, "rb").read() if os.path.exists(out) else None
        code, err, rss = import_(d, "--out", out, *extra)
        text = err.decode("utf-8")  # valid UTF-8 however hostile the key
        assert code == 2, (code, text[-600:])
        for needle in needles:
            assert needle in text, (needle, text[-1500:])
        assert "bad_alloc" not in text and "internal error" not in text, text[-600:]
        if before is None:
            assert not os.path.exists(out), "--out was written"
        else:
            assert open(out, "rb").read() == before, "--out was changed"
        assert not [n for n in os.listdir(t.work) if n.startswith(".")], os.listdir(t.work)
        if max_rss is not None and not asan:
            assert rss < max_rss, f"peak memory {rss >> 20} MiB, bound {max_rss >> 20} MiB"
        return text

    rng = np.random.default_rng(7)
    valid = small_bigs_flax(rng)

    def a_valid_file_imports():
        d = model_dir("valid", mp(flax_tree(valid)))
        out = t.path("valid.ckpt.h5")
        code, err, _ = import_(d, "--out", out)
        assert code == 0, (code, err.decode()[-800:])
        assert os.path.getsize(out) > 0
        os.remove(out)
    t.case("a valid Flax BiGS imports (the structure check accepts flax's layout)",
           a_valid_file_imports)

    # ---- 1: counts declared by nested containers are bounded by the file together
    def nested_counts_are_bounded_together():
        n = 3_000_000
        # {"a": [[[... 60 lists ...]]]}, each list declaring 3,000,000 (repro_01) or 1,500,000
        # elements: each alone fits in the file, together they ask 60 times its size (24 bytes
        # an element in msgpack-cxx: 4.3 and 2.2 GB, over the 1.5 GB limit).
        for count in (n, n // 2):
            head = b"\x81\xa1a" + (b"\xdd" + struct.pack(">I", count)) * 60
            d = model_dir(f"nested_lists_{count}", head + b"\xc0" * (n - len(head)))
            refused(d, [d + "/flax_model.msgpack: /: truncated or damaged msgpack",
                        f"declares {count} elements"], max_rss=200 << 20)
        # Maps as well: 40 nested map32 headers, each declaring 2^20 entries under key "k".
        head = b"\x81\xa1a" + (b"\xdf" + struct.pack(">I", 1 << 20) + b"\xa1k") * 40
        d = model_dir("nested_maps", head + b"\xc0" * (n - len(head)))
        refused(d, ["flax_model.msgpack: /: truncated or damaged msgpack",
                    "declares 1048576 entries"], max_rss=200 << 20)
        # An array's payload is checked the same way: a list of 2^31 elements in a 20-byte ext.
        payload = b"\x93\x91\x00\xa7float32\xdd\x7f\xff\xff\xff"
        d = model_dir("payload_list", mp({"a": Ext(1, payload)}))
        refused(d, ["flax_model.msgpack: a: truncated or damaged msgpack",
                    "declares 2147483647 elements"], max_rss=200 << 20)
        # Nested deeper than 64: said so.
        d = model_dir("deep", b"\x81\xa1a" + b"\x91" * 100 + b"\x00")
        refused(d, ["flax_model.msgpack: /: msgpack nested more than 64 deep"])
        # A file cut short is still "truncated".
        whole = mp(flax_tree(valid))
        d = model_dir("cut", whole[: len(whole) * 2 // 3])
        refused(d, ["flax_model.msgpack", "truncated"])
    t.case("counts declared by nested containers are bounded by the file together",
           nested_counts_are_bounded_together)

    # ---- 2, 3: keys and joined names are bounded
    def long_keys_are_refused_early():
        # repro_02: 64 nested maps, each key 250,000 bytes (a 16 MB file).
        body = b""
        for i in range(64):
            body += b"\x81" + mp((("k%02d" % i) * 100000)[:250000])
        d = model_dir("long_keys", body + b"\x05")
        text = refused(d, [d + "/flax_model.msgpack: /: a map key of 250000 bytes, 'k00k00",
                           "… (250000 bytes)'", "at most 1024 bytes"],
                       max_rss=(len(body) * 4) + (100 << 20))
        assert len(text) < 2000, len(text)
        # A key of 1024 bytes is read; the import then says the array is no parameter (its name
        # quoted at 200 bytes), one of 1025 is refused.
        tree = flax_tree(valid)
        tree["x" * 1024] = flax_leaf(np.zeros(2, np.float32))
        d = model_dir("key_1024", mp(tree))
        text = refused(d, ["flax_model.msgpack: 1 tensor problem:\n  " + "x" * 200 +
                           "… (1024 bytes): unexpected"])
        assert "x" * 201 not in text, text[-600:]
        tree = {"y" * 1025: flax_leaf(np.zeros(2, np.float32))}
        d = model_dir("key_1025", mp(tree))
        refused(d, ["flax_model.msgpack: /: a map key of 1025 bytes", "at most 1024 bytes"])
    t.case("a key longer than 1024 bytes is refused before its copies take memory",
           long_keys_are_refused_early)

    def long_joined_names_are_refused():
        # repro_05: 63 nested one-entry maps of 1000-byte keys, then 4000 empty arrays.
        body = b"".join(b"\x81" + mp(("%02d" % i) * 500) for i in range(63))
        n = 4000
        body += b"\xdf" + struct.pack(">I", n) + b"".join(
            mp(str(i)) + mp(EMPTY_LEAF) for i in range(n))
        d = model_dir("long_names", body)
        refused(d, [d + "/flax_model.msgpack: " + "00" * 100 + "… (4003 bytes): key '0404",
                    "makes a name of 5004 bytes once the keys are joined with '/' (at most 4096)"],
                max_rss=250 << 20)
        # Names of up to 4096 bytes are read, but not without bound: 17,000 arrays under a name
        # of 4 keys of 1000 bytes hold 68 MB of names in a 300 KB file.
        prefix = b"".join(b"\x81" + mp(c * 1000) for c in "abcd")
        n = 17000
        body = prefix + b"\xdf" + struct.pack(">I", n) + b"".join(
            mp(str(i)) + mp(EMPTY_LEAF) for i in range(n))
        d = model_dir("many_names", body)
        refused(d, ["flax_model.msgpack: " + "a" * 200 + "… (",
                    "the arrays' names, joined with '/', hold more than",
                    "bytes together (the file's size plus 64 MiB)"],
                max_rss=400 << 20)
    t.case("a joined name over 4096 bytes, or names over the file's size + 64 MiB, are refused",
           long_joined_names_are_refused)

    # ---- 4: control characters of a key are escaped
    forged = "\x1b]0;pwned\x07x\nroutescope-cli import: note: forged\x1b[2J"
    escaped = "\\x1B]0;pwned\\x07x\\x0Aroutescope-cli import: note: forged\\x1B[2J"

    def control_characters_are_escaped():
        def clean(text):
            assert "\x1b" not in text and "\x07" not in text, repr(text[-400:])
            assert not any(line.startswith("routescope-cli import: note: forged")
                           for line in text.splitlines()), repr(text[-400:])
        # In the reader's own message (the key holds an integer, not an array) ...
        d = model_dir("control_reader", mp({forged: 5}))
        clean(refused(d, [d + "/flax_model.msgpack: " + escaped + ": holds an integer"]))
        # ... in the tensor-problem list, whose own lines stay lines ...
        tree = flax_tree(valid)
        tree[forged] = flax_leaf(np.zeros(2, np.float32))
        d = model_dir("control_problem_list", mp(tree))
        clean(refused(d, ["flax_model.msgpack: 1 tensor problem:\n  " + escaped +
                          ": unexpected (no parameter of this bigs model)"]))
        # ... and in the key paths of two arrays whose keys join to one name.
        tree = {"a/" + forged: flax_leaf(np.zeros(1, np.float32)),
                "a": {forged: flax_leaf(np.zeros(1, np.float32))}}
        d = model_dir("control_duplicate", mp(tree))
        clean(refused(d, ["flax_model.msgpack: a/" + escaped + ": two arrays have this name",
                          "['a/" + escaped + "'] and ['a']['" + escaped + "']"]))
    t.case("a key's control characters are written as \\xNN, never forging a line",
           control_characters_are_escaped)

    # ---- 5: a long key is quoted at its first bytes
    def a_long_key_is_abbreviated():
        key = b"k" * 4_000_000
        d = model_dir("key_4mb", b"\x81\xdb" + struct.pack(">I", len(key)) + key + b"\x05")
        text = refused(d, ["flax_model.msgpack: /: a map key of 4000000 bytes",
                           "k" * 200 + "… (4000000 bytes)'"])
        assert len(text.encode()) < 2000, len(text.encode())
    t.case("a 4 MB key is quoted at 200 bytes, not echoed whole", a_long_key_is_abbreviated)

    # ---- 6: a text file named flax_model.msgpack
    lfs = (b"version https://git-lfs.github.com/spec/v1\n"
           b"oid sha256:4d1f5f0e3f4d8f5a1c2b0c9a1e6f7d8c9b0a1f2e3d4c5b6a7980f1e2d3c4b5a6\n"
           b"size 1346893467\n")

    def text_files_are_not_flax():
        d = model_dir("lfs", lfs)
        f = d + "/flax_model.msgpack"
        needles = [f + ": a Git LFS pointer (for a file of 1346893467 bytes), not the weights",
                   "git lfs pull"]
        for extra in ((), ("--format", "flax")):
            text = refused(d, needles, extra=extra)
            assert "after the msgpack object" not in text, text
        # The file itself as SRC (its format read from its content), beside its config.
        text = refused(f, needles)
        # An --out already there is left as it was.
        with open(t.path("kept.ckpt.h5"), "wb") as o:
            o.write(b"an earlier checkpoint")
        refused(d, needles, out_name="kept.ckpt.h5")
        os.remove(t.path("kept.ckpt.h5"))
        # The other formats' files say the same (the check every format's reader passes).
        for name in ("model.safetensors", "pytorch_model.bin"):
            other = model_dir("lfs_" + name.split(".")[0], b"")
            os.remove(os.path.join(other, "flax_model.msgpack"))
            with open(os.path.join(other, name), "wb") as o:
                o.write(lfs)
            refused(other, [os.path.join(other, name) + ": a Git LFS pointer", "git lfs pull"])
        # An HTML page (a download that got the site's error page): the top level is no map.
        d = model_dir("html", b"<!DOCTYPE html>\n<html><head><title>404</title></head></html>\n")
        text = refused(d, [d + '/flax_model.msgpack: not Flax msgpack: it starts as text, '
                               '"<!DOCTYPE html>…"',
                           "a msgpack map (its first byte 0x80-0x8F, 0xDE or 0xDF)"])
        assert "after the msgpack object" not in text, text
        # Not text, not a map: a msgpack list of arrays.
        d = model_dir("list", mp([EMPTY_LEAF]))
        refused(d, ["flax_model.msgpack: not Flax msgpack: its first byte is 0x91"])
    t.case("a Git LFS pointer or an HTML page as flax_model.msgpack is said to be one",
           text_files_are_not_flax)

    # A sharded checkpoint's index names tensors and shards in its own text: quoted the same way.
    def index_names_are_escaped():
        d = model_dir("index_names", b"")
        os.remove(os.path.join(d, "flax_model.msgpack"))
        index = {"metadata": {}, "weight_map": {forged: "missing\x1b[2J-00001.msgpack",
                                                 "k" * 5000: "missing\x1b[2J-00001.msgpack"}}
        with open(os.path.join(d, "flax_model.msgpack.index.json"), "w") as f:
            json.dump(index, f)
        text = refused(d, ["missing\\x1B[2J-00001.msgpack", "does not exist"])
        assert "\x1b" not in text and "k" * 201 not in text, repr(text[-600:])
        assert not any(line.startswith("routescope-cli import: note: forged")
                       for line in text.splitlines()), repr(text[-400:])
    t.case("a shard index's tensor and shard names are escaped and cut in messages",
           index_names_are_escaped)

    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
