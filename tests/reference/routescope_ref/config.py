"""The run configuration of docs/config.md: defaults, validation, derived values.

Every key has a default; a key that docs/config.md does not list is an error naming the key
(`model.d_modle: unknown key`). Values are type-checked and enumerations are checked so that a typo
never silently falls back to a default.
"""
import copy
import json
import math

from .errors import ConfigError

# (default, kind) per key. kind: "int", "float", "bool", "str", a trailing "?" allows null,
# a tuple of strings is an enumeration, "betas" is a pair of floats. Defaults are docs/config.md's.
SCHEMA = {
    "model": {
        "arch": ("bigs", ("bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp")),
        "vocab_size": (30522, "int"),
        "d_model": (256, "int"),
        "n_layers": (4, "int"),
        "d_inner": (None, "int?"),
        "max_len": (512, "int"),
        "type_embeddings": (False, "bool"),
        "position_embeddings": (True, "bool"),
        "embedding_norm": (True, "bool"),
        "ln_eps": (1e-12, "float"),
        "block_gelu": ("tanh", ("tanh", "erf")),
        "n_heads": (None, "int?"),
        "dropout": (0.1, "float"),
        "init_std": (0.02, "float"),
        "ssm": {
            "n_modes": (64, "int"),
            "n_kernels": (1, "int"),
            "a_im_init": ("hippo", ("hippo", "lin", "inv")),
            "dt_min": (0.01, "float"),
            "dt_max": (1.0, "float"),
        },
        "n_labels": (0, "int"),
        "pool": ("mean", ("mean", "mean_all", "first", "sentence")),
        "norm_position": ("pre", ("pre", "post")),
        "mlm_head": (True, "bool"),
        "mlm_transform": (True, "bool"),
        "causal": (False, "bool"),
        "birdie": {
            "mode": ("bidirectional", ("causal", "bidirectional", "prefix")),
            "layer_pattern": ("alternate", ("alternate", "uniform")),
            "forget_init": ("zero", ("zero", "spread")),
        },
        "gmlp": {
            "causal": (False, "bool"),
        },
        "slstm": {
            "gate_norm": (False, "bool"),
        },
    },
    "tokenizer": {
        "kind": ("bytes", ("bytes", "sentencepiece", "wordpiece", "wordpiece_cased")),
        "model": (None, "str?"),
        "vocab_size": (8000, "int"),
        "model_type": ("unigram", ("unigram", "bpe")),
    },
    "data": {
        "task": (None, "str?"),
        "task_params": {
            "seed": (1, "int"),
            "n_train": (1000, "int"),
            "n_valid": (200, "int"),
            "n_test": (200, "int"),
            "min_len": (0, "int"),
            "max_len": (0, "int"),
            "n_symbols": (0, "int"),
            "min_entries": (0, "int"),
            "max_entries": (0, "int"),
            "n_queries": (0, "int"),
            "span_len": (0, "int"),
            "question_len": (0, "int"),
            "sentence_len": (0, "int"),
            "max_attractors": (0, "int"),
        },
        "train": (None, "str?"),
        "valid": (None, "str?"),
        "doc_sep": ("line", ("line", "blank")),
        "seq_len": (128, "int"),
        "labels": (None, "strs?"),
        "pairs": (None, "bool?"),
        "pair_gap": (0, "int"),
    },
    "train": {
        "objective": ("mlm", ("mlm", "classify", "clm", "prefix_lm", "birdie")),
        "mask_prob": (0.15, "float"),
        "prefix_fraction": (0.75, "float"),
        "birdie": {
            "update_every": (100, "int"),
            "arms": (None, "strs?"),
        },
        "batch_size": (8, "int"),
        "grad_accum": (1, "int"),
        "steps": (1000, "int"),
        "lr": (5e-4, "float"),
        "ssm_lr": (None, "float?"),
        "betas": ([0.9, 0.999], "betas"),
        "eps": (1e-8, "float"),
        "weight_decay": (0.01, "float"),
        "warmup_steps": (100, "int"),
        "schedule": ("cosine", ("cosine", "linear", "constant")),
        "precision": ("fp32", ("fp32", "tf32", "bf16-mixed")),
        "clip_grad_norm": (1.0, "float"),
        "eval_every": (100, "int"),
        "eval_batches": (4, "int"),
        "checkpoint_every": (500, "int"),
        "keep_checkpoints": (False, "bool"),
        "seed": (1234, "int"),
        "threads": (0, "int"),
        "init_from": (None, "str?"),
        "freeze_ssm": (False, "bool"),
        "epochs": (0, "int"),
    },
}

# The architectures model.causal applies to (docs/config.md); gmlp and birdie have their own switches.
CAUSAL_SWITCH_ARCHS = ("bigs", "stack_ssm", "gated_att", "bert")

# The architectures this reference implements (MODELS.md, the BiGS paper's 2x2 ablation).
# An epsilon used in float32 lies between float32's smallest normal number and its largest.
FLOAT32_NORMAL = (1.1754943508222875e-38, 3.4028234663852886e38)
FLOAT32_NORMAL_RANGE = ("must lie in [1.2e-38, 3.4e38] (it is used in single precision, where smaller "
                        "values round to 0 or a denormal)")

REFERENCE_ARCHS = ("bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp")


def defaults():
    """The full configuration with every default of docs/config.md."""

    def build(schema):
        return {k: build(v) if isinstance(v, dict) else copy.deepcopy(v[0]) for k, v in schema.items()}

    return build(SCHEMA)


def _check_value(path, value, kind):
    if isinstance(kind, tuple):
        if value not in kind:
            raise ConfigError(f"{path}: '{value}' is not one of {', '.join(kind)}")
        return value
    nullable = kind.endswith("?")
    base = kind.rstrip("?")
    if value is None:
        if nullable:
            return None
        raise ConfigError(f"{path}: null is not allowed (expected {base})")
    if base == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {json.dumps(value)}")
        return value
    if base == "int":
        if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())):
            raise ConfigError(f"{path}: expected an integer, got {json.dumps(value)}")
        return int(value)
    if base == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{path}: expected a finite number, got {json.dumps(value)}")
        return float(value)
    if base == "str":
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {json.dumps(value)}")
        return value
    if base == "strs":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: expected a list of strings, got {json.dumps(value)}")
        return list(value)
    if base == "betas":
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in value)):
            raise ConfigError(f"{path}: expected a pair of numbers [beta1, beta2], got {json.dumps(value)}")
        return [float(value[0]), float(value[1])]
    raise AssertionError(kind)


def _merge(path, schema, target, given):
    if not isinstance(given, dict):
        raise ConfigError(f"{path or '<root>'}: expected an object, got {json.dumps(given)}")
    for key, value in given.items():
        where = f"{path}.{key}" if path else key
        if key not in schema:
            raise ConfigError(f"{where}: unknown key")
        if isinstance(schema[key], dict):
            _merge(where, schema[key], target[key], value)
        else:
            target[key] = _check_value(where, value, schema[key][1])


def _check_ranges(cfg):
    m, s, t = cfg["model"], cfg["model"]["ssm"], cfg["train"]

    def need(ok, key, what):
        if not ok:
            raise ConfigError(f"{key}: {what}")

    for key in ("vocab_size", "d_model", "n_layers", "max_len"):
        need(m[key] >= 1, f"model.{key}", f"must be at least 1, got {m[key]}")
    need(cfg["data"]["pair_gap"] >= 0, "data.pair_gap",
         f"must be at least 0, got {cfg['data']['pair_gap']}")
    need(m["d_inner"] is None or m["d_inner"] >= 1, "model.d_inner", "must be at least 1 or null")
    need(m["arch"] != "gmlp" or d_inner(cfg) % 2 == 0, "model.d_inner",
         "must be even for gmlp (its spatial gating unit splits I in two halves)")
    need(m["arch"] != "birdie" or m["birdie"]["mode"] == "causal" or d_inner(cfg) % 2 == 0, "model.d_inner",
         "must be even for birdie's bidirectional and prefix layers (the state splits in halves)")
    need(m["pool"] != "sentence" or m["arch"] == "slstm", "model.pool",
         f"'sentence' is the S-LSTM sentence node (model.arch = slstm); '{m['arch']}' pools by 'mean' or 'first'")
    if m["causal"] and m["arch"] not in CAUSAL_SWITCH_ARCHS:
        why = {"gmlp": "has its own switch, model.gmlp.causal = true",
               "birdie": "has its own switch, model.birdie.mode = causal"}.get(m["arch"], "has no causal variant")
        raise ConfigError(f"model.causal: true is for arch bigs, stack_ssm, gated_att and bert; '{m['arch']}' {why}")
    need(FLOAT32_NORMAL[0] <= m["ln_eps"] <= FLOAT32_NORMAL[1], "model.ln_eps", FLOAT32_NORMAL_RANGE)
    need(0 <= m["dropout"] < 1, "model.dropout", "must lie in [0, 1)")
    need(m["init_std"] > 0, "model.init_std", "must be positive")
    need(m["n_labels"] >= 0, "model.n_labels", "must be at least 0")
    need(s["n_modes"] >= 1, "model.ssm.n_modes", "must be at least 1")
    need(s["n_kernels"] >= 1, "model.ssm.n_kernels", "must be at least 1")
    need(m["d_model"] % s["n_kernels"] == 0, "model.ssm.n_kernels",
         f"must divide model.d_model={m['d_model']} (contiguous channel groups), got {s['n_kernels']}")
    need(0 < s["dt_min"] <= s["dt_max"], "model.ssm.dt_min", "need 0 < dt_min <= dt_max")
    if m["n_heads"] is not None:
        need(m["n_heads"] >= 1 and m["d_model"] % m["n_heads"] == 0, "model.n_heads",
             f"must be at least 1 and divide model.d_model={m['d_model']}, got {m['n_heads']}")
    need(t["steps"] >= 0, "train.steps", "must be at least 0")
    need(t["warmup_steps"] >= 0, "train.warmup_steps", "must be at least 0")
    need(t["lr"] >= 0, "train.lr", "must be at least 0")
    need(t["ssm_lr"] is None or t["ssm_lr"] >= 0, "train.ssm_lr", "must be at least 0 or null")
    need(FLOAT32_NORMAL[0] <= t["eps"] <= FLOAT32_NORMAL[1], "train.eps", FLOAT32_NORMAL_RANGE)
    need(all(0 <= b < 1 for b in t["betas"]), "train.betas", "each must lie in [0, 1)")
    need(t["weight_decay"] >= 0, "train.weight_decay", "must be at least 0")
    need(t["clip_grad_norm"] >= 0, "train.clip_grad_norm", "must be at least 0 (0 = off)")
    need(0 <= t["mask_prob"] <= 1, "train.mask_prob", "must lie in [0, 1]")
    need(0 < t["prefix_fraction"] < 1, "train.prefix_fraction", "must lie in (0, 1)")
    need(t["birdie"]["update_every"] >= 1, "train.birdie.update_every", "must be at least 1")
    need(t["batch_size"] >= 1, "train.batch_size", "must be at least 1")
    need(t["grad_accum"] >= 1, "train.grad_accum", "must be at least 1")
    need(t["batch_size"] * t["grad_accum"] <= 1 << 24,
         "train.grad_accum" if t["grad_accum"] > 1 else "train.batch_size",
         f"train.batch_size × train.grad_accum = {t['batch_size'] * t['grad_accum']} sequences per step, "
         "more than 16777216 (2^24)")


def parse(given):
    """A full, validated configuration from a (possibly partial) dict or JSON text."""
    if isinstance(given, (str, bytes)):
        try:
            given = json.loads(given)
        except json.JSONDecodeError as e:
            raise ConfigError(f"<json>: not valid JSON ({e})") from None
    cfg = defaults()
    _merge("", SCHEMA, cfg, given)
    _check_ranges(cfg)
    return cfg


def load(path):
    """parse() of a JSON file; errors name the file."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return parse(text)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def apply_override(cfg, assignment):
    """`--set model.ssm.n_modes=32`: the value is JSON (numbers, true/false/null, lists) or a plain string."""
    if "=" not in assignment:
        raise ConfigError(f"--set {assignment}: expected key=value")
    key, text = assignment.split("=", 1)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    nested = value
    for part in reversed(key.split(".")):
        nested = {part: nested}
    merged = copy.deepcopy(cfg)
    _merge("", SCHEMA, merged, nested)
    _check_ranges(merged)
    return merged


# ---- derived values (MODELS.md)

def d_inner(cfg):
    """I: explicit, or 3d for gated blocks (bigs, gated_att), 4d for stack blocks (stack_ssm, bert)."""
    m = cfg["model"]
    if m["d_inner"] is not None:
        return m["d_inner"]
    if m["arch"] == "birdie":
        return 3 * m["d_model"]  # Birdie's state size N: a gated block's 3d (docs/decisions.md)
    if m["arch"] == "gmlp":
        return 6 * m["d_model"]  # the gMLP paper's d_ffn = 6 d_model (docs/decisions.md)
    return (3 if m["arch"] in ("bigs", "gated_att") else 4) * m["d_model"]


def n_heads(cfg):
    """Attention heads: explicit, or heads of width 64 (d/64, at least 1)."""
    m = cfg["model"]
    if m["n_heads"] is not None:
        return m["n_heads"]
    heads = max(1, m["d_model"] // 64)
    if m["d_model"] % heads != 0:
        raise ConfigError(f"model.n_heads: d_model={m['d_model']} is not a multiple of 64; set model.n_heads")
    return heads


def ssm_lr(cfg):
    t = cfg["train"]
    return t["lr"] if t["ssm_lr"] is None else t["ssm_lr"]


def to_json(cfg):
    return json.dumps(cfg, indent=2, sort_keys=False)
