#!/usr/bin/python3
"""The Python package (python/routescope, docs/python.md) on what `routescope-cli export` wrote,
for tests/io/test_python_package.cpp:

- routescope.load(DIR) of every export (model.safetensors parsed by hand; pytorch_model.bin read by
  torch.load(weights_only=True)) gives the module of its architecture, every parameter loaded by
  its file name; its logits (MLM, and classification where the export has a classifier) on the
  batch of BATCH are written to OUT in float64 for the C++ test to compare with the engine's;
  model.load_state_dict(torch.load(pytorch_model.bin, weights_only=True)) works (strict);
- the safetensors and the PyTorch export of one checkpoint load into the same module class with
  bit-identical parameters and logits;
- a damaged export is refused with a LoadError naming the file (truncated data, overlapping
  offsets, a wrongly shaped tensor), never loaded;
- hostile and inconsistent exports written by hand (check_python_refusals.py: session 30's probe
  findings 1-10) are refused with a LoadError naming the file and the problem, promptly and
  without the memory a config.json claims; their fixtures go to OUT's folder, refusals/.

Usage: check_python_package.py EXPORTS BATCH OUT   (EXPORTS holds <name>_safetensors and
<name>_pytorch directories). Exit 0, or 1 with the failures on stderr.
"""
import json
import os
import shutil
import struct
import sys

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import routescope  # noqa: E402
from routescope import safetensors as st  # noqa: E402

import check_python_refusals  # noqa: E402  (beside this file)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def logits(model, ids, mask, types):
    with torch.no_grad():
        return model.double()(ids, mask, types).numpy()


def refused(path, needles):
    try:
        routescope.load(path)
    except routescope.LoadError as e:
        return all(n in str(e) for n in needles), str(e)
    return False, "loaded"


def damaged_exports(src, work):
    """Copies of the safetensors export `src` with one defect each; each must be refused."""
    weights = os.path.join(src, "model.safetensors")
    header, _, start, _ = st.read_header(weights)
    with open(weights, "rb") as f:
        raw = f.read()
    cases = {}

    def variant(name, data):
        d = os.path.join(work, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(data)
        return d

    last = max(header, key=lambda k: header[k]["data_offsets"][1])
    cases["truncated"] = (variant("bad_truncated", raw[:-4]), [weights.replace(src, ""), last,
                                                               "run past the end"])
    names = sorted(header, key=lambda k: header[k]["data_offsets"][0])
    h = json.loads(json.dumps(header))
    h[names[1]]["data_offsets"] = [h[names[0]]["data_offsets"][0],
                                   h[names[0]]["data_offsets"][0] +
                                   (h[names[1]]["data_offsets"][1] - h[names[1]]["data_offsets"][0])]
    text = json.dumps(h).encode()
    cases["overlap"] = (variant("bad_overlap", struct.pack("<Q", len(text)) + text +
                                raw[start:]), ["model.safetensors", "overlap"])
    arrays = st.read(weights)
    name = next(k for k in arrays if k.endswith("dv.weight") or k.endswith("query.weight"))
    arrays[name] = arrays[name][:, :-1].copy()
    d = variant("bad_shape", b"")
    st.write(os.path.join(d, "model.safetensors"), arrays)
    cases["shape"] = (d, [name, "shape", "expected"])
    for what, (path, needles) in cases.items():
        ok, message = refused(path, [n.lstrip("/") for n in needles])
        print(f"damaged export ({what}): {message}")
        check(ok, f"damaged export ({what}) not refused as expected: {message}")


def port_file(d, sd, config, head, want, work, ids, mask, types):
    """The official BiGS PyTorch port saves its bigs.embeddings.position_ids buffer (0..Lmax−1)
    with the weights: such a file loads as the export does (session 35: it was refused as
    unexpected), and one whose ids are not 0..Lmax−1 is refused naming them."""
    port = os.path.join(work, "port-" + os.path.basename(d) + "-" + head)
    shutil.rmtree(port, ignore_errors=True)
    shutil.copytree(d, port)
    lmax = config["max_position_embeddings"]
    zeros = torch.zeros(1, lmax, dtype=torch.long)
    for ids_buffer, good in ((torch.arange(lmax)[None], True),
                             (torch.arange(lmax).flip(0)[None], False)):
        # and the token type ids buffer newer transformers save beside it (all 0)
        torch.save({**sd, "bigs.embeddings.position_ids": ids_buffer,
                    "bigs.embeddings.token_type_ids": zeros},
                   os.path.join(port, "pytorch_model.bin"))
        if good:
            model = routescope.load(port, head=head)
            check(np.array_equal(logits(model, ids, mask, types), want),
                  f"{port}: a port file with its position ids gives the export's logits")
        else:
            ok, said = refused(port, ["bigs.embeddings.position_ids", "not 0.."])
            check(ok, f"{port}: position ids that are not 0..Lmax-1 are refused ({said})")


def main():
    exports, batch, out = sys.argv[1:4]
    with h5py.File(batch, "r") as h:
        ids = torch.from_numpy(h["input_ids"][()].astype(np.int64))
        types = torch.from_numpy(h["token_type_ids"][()].astype(np.int64))
        lengths = h["lengths"][()]
    mask = torch.from_numpy((np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64))
    names = sorted({d.rsplit("_", 1)[0] for d in os.listdir(exports)
                    if d.endswith(("_safetensors", "_pytorch"))})
    check(names, f"{exports}: no exports")
    with h5py.File(out + ".tmp", "w") as result:
        for name in names:
            per_format = {}
            for fmt in ("safetensors", "pytorch"):
                d = os.path.join(exports, f"{name}_{fmt}")
                with open(os.path.join(d, "config.json")) as f:
                    config = json.load(f)
                heads = ["mlm"] + (["classify"] if "num_labels" in config else [])
                for head in heads:
                    model = routescope.load(d, head=head)
                    check(not model.training, f"{d}: not in eval mode")
                    per_format[(fmt, head)] = (type(model), model.state_dict(),
                                               logits(model, ids, mask, types))
                    if fmt == "safetensors":
                        result[f"{name}/{head}"] = per_format[(fmt, head)][2]
                    print(f"{d} ({head}): {type(model).__name__}, "
                          f"{sum(p.numel() for p in model.parameters())} parameters")
                    if fmt == "pytorch":  # the file itself, by torch.load(weights_only=True)
                        sd = torch.load(os.path.join(d, "pytorch_model.bin"), weights_only=True)
                        mine = model.float().state_dict()
                        used = [k for k in sd if k in mine]
                        check(len(used) == len(mine) - ("bert.embeddings.position_ids" in mine),
                              f"{d}: {len(used)} of the module's {len(mine)} tensors in the file")
                        check(all(torch.equal(sd[k], mine[k]) for k in used),
                              f"{d}: torch.load's tensors are not the module's")
                        # docs/python.md, "Parameter names": the file loads into the module by
                        # load_state_dict (strict), the other head's tensors left out
                        other = ("cls.",) if head == "classify" else (
                            "bert.pooler.", "bigs.pooler.", "classifier.")
                        try:
                            model.load_state_dict({k: v for k, v in sd.items()
                                                   if not k.startswith(other)})
                        except RuntimeError as e:
                            check(False, f"{d} ({head}): load_state_dict(torch.load(...)): {e}")
                        if config.get("model_type", "").lower() == "bigs":
                            port_file(d, sd, config, head, per_format[(fmt, head)][2],
                                      os.path.dirname(os.path.abspath(out)), ids, mask, types)
            for key in [k for k in per_format if k[0] == "safetensors"]:
                a, b = per_format[key], per_format[("pytorch", key[1])]
                check(a[0] is b[0], f"{name} {key[1]}: module classes {a[0]} and {b[0]} differ")
                check(set(a[1]) == set(b[1]) and all(torch.equal(a[1][k], b[1][k]) for k in a[1]),
                      f"{name} {key[1]}: safetensors and pytorch parameters differ")
                check(np.array_equal(a[2], b[2]), f"{name} {key[1]}: logits differ by format")
        damaged_exports(os.path.join(exports, f"{names[0]}_safetensors"),
                        os.path.dirname(os.path.abspath(out)))
    failures.extend(check_python_refusals.run(
        os.path.join(os.path.dirname(os.path.abspath(out)), "refusals")))
    os.replace(out + ".tmp", out)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
