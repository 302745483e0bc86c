#include "engine/core/config.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/utf8.hpp"

namespace routescope {

namespace {

using ojson = nlohmann::ordered_json;

// What a leaf key accepts. Enumerations list their values; the rest are types ("?" = null allowed).
struct Kind {
    std::string type;                 // int, int?, float, float?, bool, str?, betas, enum
    std::vector<std::string> values;  // enum values
    std::int64_t lo = 0, hi = 0;      // int, int?: the documented range (docs/config.md)
};

constexpr std::int64_t kInt32Max = 2147483647;             // the key is an `int` field
constexpr std::int64_t kInt64Max = 9223372036854775807LL;  // the key is an `int64_t` field

Kind ints(std::int64_t lo, std::int64_t hi, bool nullable = false) {
    return {nullable ? "int?" : "int", {}, lo, hi};
}

const std::map<std::string, Kind>& kinds() {
    static const std::map<std::string, Kind> table = {
        {"model.arch",
         {"enum", {"bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp"}}},
        {"model.vocab_size", ints(1, kInt32Max)},
        {"model.d_model", ints(1, kInt32Max)},
        {"model.n_layers", ints(1, kInt32Max)},
        {"model.d_inner", ints(1, kInt32Max, true)},
        {"model.max_len", ints(1, kInt32Max)},
        {"model.type_embeddings", {"bool", {}}},
        {"model.position_embeddings", {"bool", {}}},
        {"model.embedding_norm", {"bool", {}}},
        {"model.ln_eps", {"float", {}}},
        {"model.block_gelu", {"enum", {"tanh", "erf"}}},
        {"model.n_heads", ints(1, kInt32Max, true)},
        {"model.dropout", {"float", {}}},
        {"model.init_std", {"float", {}}},
        {"model.ssm.n_modes", ints(1, kInt32Max)},
        {"model.ssm.n_kernels", ints(1, kInt32Max)},
        {"model.ssm.a_im_init", {"enum", {"hippo", "lin", "inv"}}},
        {"model.ssm.dt_min", {"float", {}}},
        {"model.ssm.dt_max", {"float", {}}},
        {"model.n_labels", ints(0, kInt32Max)},
        {"model.pool", {"enum", {"mean", "mean_all", "first", "sentence"}}},
        {"model.norm_position", {"enum", {"pre", "post"}}},
        {"model.mlm_head", {"bool", {}}},
        {"model.mlm_transform", {"bool", {}}},
        {"model.causal", {"bool", {}}},
        {"model.birdie.mode", {"enum", {"causal", "bidirectional", "prefix"}}},
        {"model.birdie.layer_pattern", {"enum", {"alternate", "uniform"}}},
        {"model.birdie.forget_init", {"enum", {"zero", "spread"}}},
        {"model.gmlp.causal", {"bool", {}}},
        {"model.slstm.gate_norm", {"bool", {}}},
        {"tokenizer.kind", {"enum", {"bytes", "sentencepiece", "wordpiece", "wordpiece_cased"}}},
        {"tokenizer.model", {"str?", {}}},
        // (at most 2^24 when a SentencePiece model is trained: train_sentencepiece)
        {"tokenizer.vocab_size", ints(1, kInt32Max)},
        {"tokenizer.model_type", {"enum", {"unigram", "bpe"}}},
        {"data.task", {"str?", {}}},
        {"data.task_params.seed", ints(0, kInt64Max)},
        // A task's splits are generated in memory: at most 10^8 examples a split, of at most
        // 2^20 tokens (data/task_builder.hpp, kMaxTaskSplit and kMaxTaskLength).
        {"data.task_params.n_train", ints(0, 100'000'000)},
        {"data.task_params.n_valid", ints(0, 100'000'000)},
        {"data.task_params.n_test", ints(0, 100'000'000)},
        {"data.task_params.min_len", ints(0, 1 << 20)},
        {"data.task_params.max_len", ints(0, 1 << 20)},
        {"data.task_params.n_symbols", ints(0, kInt32Max)},
        {"data.task_params.min_entries", ints(0, kInt32Max)},
        {"data.task_params.max_entries", ints(0, kInt32Max)},
        {"data.task_params.n_queries", ints(0, kInt32Max)},
        {"data.task_params.span_len", ints(0, kInt32Max)},
        {"data.task_params.question_len", ints(0, kInt32Max)},
        {"data.task_params.sentence_len", ints(0, kInt32Max)},
        {"data.task_params.max_attractors", ints(0, kInt32Max)},
        {"data.train", {"str?", {}}},
        {"data.valid", {"str?", {}}},
        {"data.doc_sep", {"enum", {"line", "blank"}}},
        {"data.seq_len", ints(1, kInt32Max)},
        {"data.labels", {"strs?", {}}},
        {"data.pairs", {"bool?", {}}},
        {"data.pair_gap", ints(0, kInt32Max)},
        {"train.objective", {"enum", {"mlm", "classify", "clm", "prefix_lm", "birdie"}}},
        {"train.mask_prob", {"float", {}}},
        {"train.prefix_fraction", {"float", {}}},
        {"train.birdie.update_every", ints(1, kInt64Max)},
        {"train.birdie.arms", {"strs?", {}}},
        {"train.batch_size", ints(1, kInt32Max)},
        {"train.grad_accum", ints(1, kInt32Max)},
        {"train.steps", ints(0, kInt64Max)},
        {"train.lr", {"float", {}}},
        {"train.ssm_lr", {"float?", {}}},
        {"train.betas", {"betas", {}}},
        {"train.eps", {"float", {}}},
        {"train.weight_decay", {"float", {}}},
        {"train.warmup_steps", ints(0, kInt64Max)},
        {"train.schedule", {"enum", {"cosine", "linear", "constant"}}},
        {"train.precision", {"enum", {"fp32", "tf32", "bf16-mixed"}}},
        {"train.clip_grad_norm", {"float", {}}},
        {"train.eval_every", ints(0, kInt64Max)},
        {"train.eval_batches", ints(0, kInt32Max)},
        {"train.checkpoint_every", ints(0, kInt64Max)},
        {"train.keep_checkpoints", {"bool", {}}},
        {"train.seed", ints(0, kInt64Max)},
        {"train.threads", ints(0, kMaxThreads)},
        {"train.init_from", {"str?", {}}},
        {"train.freeze_ssm", {"bool", {}}},
        {"train.epochs", ints(0, kInt64Max)},
    };
    return table;
}

[[noreturn]] void fail(const std::string& key, const std::string& what) {
    // The key as it can be printed: a file's key may hold a NUL ("tra\u0000in"), which cut the
    // message there (what() is a C string) and lost the problem, or a newline or ESC; and only
    // its start when it is long. The same for what is said of it, which may quote the value
    // ("'big\x00s' is not one of ...": a NUL in a string value cut the message there too).
    throw ConfigError(data::printable_text(data::abbreviated(key, 200)) + ": " +
                      data::printable_text(what));
}

bool is_integral(const ojson& v) {
    if (v.is_number_integer()) return true;
    if (v.is_number_float()) {
        const double x = v.get<double>();
        return std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.0e15;
    }
    return false;
}

ojson checked_value(const std::string& key, const ojson& value, const Kind& kind) {
    if (kind.type == "enum") {
        if (value.is_string()) {
            const auto s = value.get<std::string>();
            for (const auto& allowed : kind.values)
                if (s == allowed) return value;
        }
        std::string list;
        for (const auto& allowed : kind.values)
            list += (list.empty() ? "" : ", ") + allowed;
        std::string what = "'";
        // Only its start when it is long (fail() escapes what cannot be printed).
        what += value.is_string() ? data::abbreviated(value.get<std::string>(), 200)
                                  : data::abbreviated(value.dump(), 200);
        what += "' is not one of ";
        what += list;
        fail(key, what);
    }
    const bool nullable = kind.type.back() == '?';
    const std::string base = nullable ? kind.type.substr(0, kind.type.size() - 1) : kind.type;
    if (value.is_null()) {
        if (nullable) return value;
        fail(key, "null is not allowed (expected " + base + ")");
    }
    if (base == "bool") {
        if (!value.is_boolean()) fail(key, "expected true or false, got " + value.dump());
        return value;
    }
    if (base == "int") {
        // A whole number written as a real past 9e15 (1e16): a double no longer holds every
        // integer there, so the value read may not be the one written; said so, not "expected
        // an integer" of a number that is one.
        if (value.is_number_float() && std::isfinite(value.get<double>()) &&
            value.get<double>() == std::floor(value.get<double>()) && !is_integral(value)) {
            if (std::fabs(value.get<double>()) >= 9.2233720368547758e18)  // past 64 bits
                fail(key, "must lie in [" + std::to_string(kind.lo) + ", " +
                              std::to_string(kind.hi) + "], got " + value.dump());
            fail(key, "a whole number written as a real number (" + value.dump() +
                          ") must lie within ±9e15, where a double holds every integer; write "
                          "larger ones with digits only (e.g. 10000000000000000)");
        }
        if (value.is_boolean() || !is_integral(value))
            fail(key, "expected an integer, got " + value.dump());
        const auto range = [&] {
            return "must lie in [" + std::to_string(kind.lo) + ", " + std::to_string(kind.hi) +
                   "], got " + value.dump();
        };
        if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(kInt64Max))
            fail(key, range());
        const std::int64_t v = value.is_number_integer()
                                   ? value.get<std::int64_t>()
                                   : static_cast<std::int64_t>(value.get<double>());
        if (v < kind.lo || v > kind.hi) fail(key, range());
        return ojson(v);
    }
    if (base == "float") {
        if (value.is_boolean() || !value.is_number() || !std::isfinite(value.get<double>()))
            fail(key, "expected a finite number, got " + value.dump());
        return ojson(value.get<double>());
    }
    if (base == "str") {
        if (!value.is_string()) fail(key, "expected a string, got " + value.dump());
        return value;
    }
    if (base == "strs") {
        if (!value.is_array()) fail(key, "expected a list of strings, got " + value.dump());
        for (const auto& item : value)
            if (!item.is_string()) fail(key, "expected a list of strings, got " + value.dump());
        return value;
    }
    // betas
    if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_number() ||
        value[0].is_boolean() || value[1].is_boolean())
        fail(key, "expected a pair of numbers [beta1, beta2], got " + value.dump());
    return ojson::array({value[0].get<double>(), value[1].get<double>()});
}

// Merges `given` into `target` (which holds every key with its current value), checking each key.
void merge(const std::string& path, ojson& target, const nlohmann::json& given) {
    if (!given.is_object())
        fail(path.empty() ? "<root>" : path, "expected an object, got " + given.dump());
    for (const auto& [key, value] : given.items()) {
        const std::string where = path.empty() ? key : path + "." + key;
        if (!target.contains(key)) fail(where, "unknown key");
        auto& slot = target[key];
        if (slot.is_object()) {
            merge(where, slot, value);
            continue;
        }
        auto it = kinds().find(where);
        if (it == kinds().end()) fail(where, "unknown key");
        slot = checked_value(where, ojson::parse(value.dump()), it->second);
    }
}

template <class T>
std::optional<T> opt(const ojson& v) {
    if (v.is_null()) return std::nullopt;
    return v.get<T>();
}

template <class T>
ojson opt_json(const std::optional<T>& v) {
    return v ? ojson(*v) : ojson(nullptr);
}

RunConfig from_full_json(const ojson& j) {
    RunConfig c;
    const auto& m = j["model"];
    c.model.arch = m["arch"];
    c.model.vocab_size = m["vocab_size"];
    c.model.d_model = m["d_model"];
    c.model.n_layers = m["n_layers"];
    c.model.d_inner = opt<int>(m["d_inner"]);
    c.model.max_len = m["max_len"];
    c.model.type_embeddings = m["type_embeddings"];
    c.model.position_embeddings = m["position_embeddings"];
    c.model.embedding_norm = m["embedding_norm"];
    c.model.ln_eps = m["ln_eps"];
    c.model.block_gelu = m["block_gelu"];
    c.model.n_heads = opt<int>(m["n_heads"]);
    c.model.dropout = m["dropout"];
    c.model.init_std = m["init_std"];
    const auto& s = m["ssm"];
    c.model.ssm.n_modes = s["n_modes"];
    c.model.ssm.n_kernels = s["n_kernels"];
    c.model.ssm.a_im_init = s["a_im_init"];
    c.model.ssm.dt_min = s["dt_min"];
    c.model.ssm.dt_max = s["dt_max"];
    c.model.n_labels = m["n_labels"];
    c.model.pool = m["pool"];
    c.model.norm_position = m["norm_position"];
    c.model.mlm_head = m["mlm_head"];
    c.model.mlm_transform = m["mlm_transform"];
    c.model.causal = m["causal"];
    c.model.birdie.mode = m["birdie"]["mode"];
    c.model.birdie.layer_pattern = m["birdie"]["layer_pattern"];
    c.model.birdie.forget_init = m["birdie"]["forget_init"];
    c.model.gmlp.causal = m["gmlp"]["causal"];
    c.model.slstm.gate_norm = m["slstm"]["gate_norm"];
    const auto& k = j["tokenizer"];
    c.tokenizer.kind = k["kind"];
    c.tokenizer.model = opt<std::string>(k["model"]);
    c.tokenizer.vocab_size = k["vocab_size"];
    c.tokenizer.model_type = k["model_type"];
    const auto& d = j["data"];
    c.data.task = opt<std::string>(d["task"]);
    const auto& tp = d["task_params"];
    c.data.task_params.seed = tp["seed"];
    c.data.task_params.n_train = tp["n_train"];
    c.data.task_params.n_valid = tp["n_valid"];
    c.data.task_params.n_test = tp["n_test"];
    c.data.task_params.min_len = tp["min_len"];
    c.data.task_params.max_len = tp["max_len"];
    c.data.task_params.n_symbols = tp["n_symbols"];
    c.data.task_params.min_entries = tp["min_entries"];
    c.data.task_params.max_entries = tp["max_entries"];
    c.data.task_params.n_queries = tp["n_queries"];
    c.data.task_params.span_len = tp["span_len"];
    c.data.task_params.question_len = tp["question_len"];
    c.data.task_params.sentence_len = tp["sentence_len"];
    c.data.task_params.max_attractors = tp["max_attractors"];
    c.data.train = opt<std::string>(d["train"]);
    c.data.valid = opt<std::string>(d["valid"]);
    c.data.doc_sep = d["doc_sep"];
    c.data.seq_len = d["seq_len"];
    c.data.labels = opt<std::vector<std::string>>(d["labels"]);
    c.data.pairs = opt<bool>(d["pairs"]);
    c.data.pair_gap = d["pair_gap"];
    const auto& t = j["train"];
    c.train.objective = t["objective"];
    c.train.mask_prob = t["mask_prob"];
    c.train.prefix_fraction = t["prefix_fraction"];
    c.train.birdie.update_every = t["birdie"]["update_every"];
    c.train.birdie.arms = opt<std::vector<std::string>>(t["birdie"]["arms"]);
    c.train.batch_size = t["batch_size"];
    c.train.grad_accum = t["grad_accum"];
    c.train.steps = t["steps"];
    c.train.lr = t["lr"];
    c.train.ssm_lr = opt<double>(t["ssm_lr"]);
    c.train.betas = {t["betas"][0].get<double>(), t["betas"][1].get<double>()};
    c.train.eps = t["eps"];
    c.train.weight_decay = t["weight_decay"];
    c.train.warmup_steps = t["warmup_steps"];
    c.train.schedule = t["schedule"];
    c.train.precision = t["precision"];
    c.train.clip_grad_norm = t["clip_grad_norm"];
    c.train.eval_every = t["eval_every"];
    c.train.eval_batches = t["eval_batches"];
    c.train.checkpoint_every = t["checkpoint_every"];
    c.train.keep_checkpoints = t["keep_checkpoints"];
    c.train.seed = t["seed"];
    c.train.threads = t["threads"];
    c.train.init_from = opt<std::string>(t["init_from"]);
    c.train.freeze_ssm = t["freeze_ssm"];
    c.train.epochs = t["epochs"];
    return c;
}

}  // namespace

std::string number_text(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

namespace {

// A generous estimate of the parameter count from the configuration alone (no allocation): the
// embeddings, per layer every dense matrix a block of any architecture can have (4·d² attention or
// spatial projections, 3·d·I gated-block matrices, the SSM's complex modes, gMLP's max_len² spatial
// matrix), and the classifier. Refused above kMaxParameterBytes for the parameters, their gradients
// and AdamW's two moments (16 bytes per parameter), naming the key whose term is largest, so that
// n_layers = 10^9 is a message and not an allocation failure.
constexpr double kMaxParameterBytes = 64.0 * 1024 * 1024 * 1024;

void check_parameter_memory(const RunConfig& c) {
    const auto& m = c.model;
    const double d = m.d_model, L = m.max_len, layers = m.n_layers;
    // Each term is a product of factors, each factor owned by a key; the key named is the largest
    // factor of the largest term (d_model = 2·10⁹ with one layer names model.d_model, not
    // model.n_layers).
    struct Term {
        double value;
        std::vector<std::pair<const char*, double>> factors;
    };
    std::vector<Term> terms = {
        {double(m.vocab_size) * d,
         {{"model.vocab_size", double(m.vocab_size)}, {"model.d_model", d}}},
        // The learned position table [max_len, d], only where the model has one (the rule of
        // Embeddings::has_position_embeddings: gMLP and model.position_embeddings = false have
        // none): a model without it and max_len = 2^31 − 1 was refused for 512 GiB it never uses.
        {m.arch != "gmlp" && m.position_embeddings ? L * d : 0.0,
         {{"model.max_len", L}, {"model.d_model", d}}},
        {layers * (4 * d * d + 16 * d), {{"model.n_layers", layers}, {"model.d_model", d * d}}},
        {layers * 8 * double(m.ssm.n_modes) * d,
         {{"model.n_layers", layers},
          {"model.ssm.n_modes", double(m.ssm.n_modes)},
          {"model.d_model", d}}},
        {double(m.n_labels) * (d + 1),
         {{"model.n_labels", double(m.n_labels)}, {"model.d_model", d}}},
    };
    if (m.d_inner)
        terms.push_back({layers * 3 * d * double(*m.d_inner),
                         {{"model.n_layers", layers},
                          {"model.d_inner", double(*m.d_inner)},
                          {"model.d_model", d}}});
    else
        terms.push_back(
            {layers * 12 * d * d, {{"model.n_layers", layers}, {"model.d_model", d * d}}});
    if (m.arch == "gmlp")
        terms.push_back({layers * L * L, {{"model.n_layers", layers}, {"model.max_len", L * L}}});
    double parameters = 0;
    const Term* largest = &terms.front();
    for (const auto& term : terms) {
        parameters += term.value;
        if (term.value > largest->value) largest = &term;
    }
    const auto* key = &largest->factors.front();
    for (const auto& f : largest->factors)
        if (f.second > key->second) key = &f;
    const double bytes = 16 * parameters;
    if (bytes > kMaxParameterBytes) {
        char count[32];
        std::snprintf(count, sizeof count, "%.3g", parameters);
        fail(key->first,
             "the model would need about " + bytes_text(bytes) + " (" + count +
                 " parameters, estimated from model.*, × 16 bytes for the weights, gradients and "
                 "AdamW moments); the limit is " +
                 bytes_text(kMaxParameterBytes) + " (docs/config.md, \"Ranges\")");
    }
}

// An epsilon the engine adds in float32 (AdamW's denominator, LayerNorm's variance): a value
// below float32's smallest normal number rounds to 0 or a denormal there (1e-320 gave 0/0 = NaN for
// every parameter whose gradient is 0, and a message blaming train.lr), one above its largest to
// infinity.
bool float_normal(double v) {
    return v >= std::numeric_limits<float>::min() && v <= std::numeric_limits<float>::max();
}
const char* const kFloatNormalRange =
    "must lie in [1.2e-38, 3.4e38] (it is used in single precision, where smaller values round "
    "to 0 or a denormal)";

// The value ranges of tests/reference/routescope_ref/config.py, with the same keys in messages.
void check_ranges(const RunConfig& c) {
    const auto& m = c.model;
    const auto& s = m.ssm;
    const auto& t = c.train;
    auto need = [](bool ok, const std::string& key, const std::string& what) {
        if (!ok) fail(key, what);
    };
    need(m.vocab_size >= 1, "model.vocab_size", "must be at least 1");
    need(m.d_model >= 1, "model.d_model", "must be at least 1");
    need(m.n_layers >= 1, "model.n_layers", "must be at least 1");
    need(m.max_len >= 1, "model.max_len", "must be at least 1");
    need(!m.d_inner || *m.d_inner >= 1, "model.d_inner", "must be at least 1 or null");
    need(m.arch != "gmlp" || m.inner() % 2 == 0, "model.d_inner",
         "must be even for gmlp (its spatial gating unit splits I in two halves)");
    need(m.arch != "birdie" || m.birdie.mode == "causal" || m.inner() % 2 == 0, "model.d_inner",
         "must be even for birdie's bidirectional and prefix layers (the state splits in halves)");
    need(m.pool != "sentence" || m.arch == "slstm", "model.pool",
         "'sentence' is the S-LSTM sentence node (model.arch = slstm); '" + m.arch +
             "' pools by 'mean', 'mean_all' or 'first'");
    need(m.norm_position == "pre" || m.arch == "bert", "model.norm_position",
         "'post' is for arch bert (Hugging Face BERT's post-LN blocks); '" + m.arch +
             "' blocks are pre-norm");
    if (m.causal && m.arch != "bigs" && m.arch != "stack_ssm" && m.arch != "gated_att" &&
        m.arch != "bert") {
        const std::string why = m.arch == "gmlp" ? "has its own switch, model.gmlp.causal = true"
                                : m.arch == "birdie"
                                    ? "has its own switch, model.birdie.mode = causal"
                                    : "has no causal variant";
        fail("model.causal",
             "true is for arch bigs, stack_ssm, gated_att and bert; '" + m.arch + "' " + why);
    }
    // mlm_head = false with n_labels = 0 is an encoder without heads (an imported BertModel or
    // BiGSModel): it dumps, and fine-tunes through train.init_from; an MLM or classification batch
    // is refused by the model, naming the key.
    need(float_normal(m.ln_eps), "model.ln_eps", kFloatNormalRange);
    // In float, as the dropout op holds it: 0.9999999999999999 rounds to 1 there, and the run
    // failed at its first step with a message naming neither the key nor the value.
    need(m.dropout >= 0 && static_cast<float>(m.dropout) < 1.0f, "model.dropout",
         "must lie in [0, 1) (in single precision: values within 6e-8 of 1 round to 1)");
    need(m.init_std > 0, "model.init_std", "must be positive");
    need(m.n_labels >= 0, "model.n_labels", "must be at least 0");
    need(s.n_modes >= 1, "model.ssm.n_modes", "must be at least 1");
    need(s.n_kernels >= 1, "model.ssm.n_kernels", "must be at least 1");
    need(m.d_model % s.n_kernels == 0, "model.ssm.n_kernels",
         "must divide model.d_model=" + std::to_string(m.d_model) +
             " (contiguous channel groups), got " + std::to_string(s.n_kernels));
    need(s.dt_min > 0 && s.dt_min <= s.dt_max, "model.ssm.dt_min", "need 0 < dt_min <= dt_max");
    if (m.n_heads)
        need(*m.n_heads >= 1 && m.d_model % *m.n_heads == 0, "model.n_heads",
             "must be at least 1 and divide model.d_model=" + std::to_string(m.d_model) + ", got " +
                 std::to_string(*m.n_heads));
    need(t.steps >= 0, "train.steps", "must be at least 0");
    need(t.warmup_steps >= 0, "train.warmup_steps", "must be at least 0");
    need(t.lr >= 0, "train.lr", "must be at least 0");
    need(!t.ssm_lr || *t.ssm_lr >= 0, "train.ssm_lr", "must be at least 0 or null");
    need(float_normal(t.eps), "train.eps", kFloatNormalRange);
    need(t.betas[0] >= 0 && t.betas[0] < 1 && t.betas[1] >= 0 && t.betas[1] < 1, "train.betas",
         "each must lie in [0, 1)");
    need(t.weight_decay >= 0, "train.weight_decay", "must be at least 0");
    need(t.clip_grad_norm >= 0, "train.clip_grad_norm", "must be at least 0 (0 = off)");
    need(t.mask_prob >= 0 && t.mask_prob <= 1, "train.mask_prob", "must lie in [0, 1]");
    need(t.prefix_fraction > 0 && t.prefix_fraction < 1, "train.prefix_fraction",
         "must lie in (0, 1)");
    need(t.birdie.update_every >= 1, "train.birdie.update_every", "must be at least 1");
    need(t.batch_size >= 1, "train.batch_size", "must be at least 1");
    need(t.grad_accum >= 1, "train.grad_accum", "must be at least 1");
    // A step of more than 2^24 sequences (a thousand times the largest published batches) is a
    // mistake that would run for days before its first step ends, and a signal stops a run only
    // between steps.
    need(double(t.batch_size) * double(t.grad_accum) <= double(1 << 24),
         t.grad_accum > 1 ? "train.grad_accum" : "train.batch_size",
         "train.batch_size × train.grad_accum = " +
             std::to_string(std::int64_t(t.batch_size) * std::int64_t(t.grad_accum)) +
             " sequences per step, more than 16777216 (2^24)");
    need(t.threads >= 0, "train.threads", "must be at least 0 (0 = all cores)");
    need(c.data.seq_len >= 1, "data.seq_len", "must be at least 1");
    need(t.epochs >= 0, "train.epochs", "must be at least 0 (0 = train.steps)");
    need(t.eval_every >= 0, "train.eval_every", "must be at least 0 (0 = only at the end)");
    need(t.eval_batches >= 0, "train.eval_batches",
         "must be at least 0 (0 = the whole held-out part)");
    need(t.checkpoint_every >= 0, "train.checkpoint_every",
         "must be at least 0 (0 = only at the end)");
    need(t.seed >= 0, "train.seed", "must be at least 0");
    need(c.tokenizer.vocab_size >= 1, "tokenizer.vocab_size", "must be at least 1");
    // train.init_from: fine-tuning (classify, a task with mlm: engine/train/finetuner.cpp) takes
    // the pretrained encoder; every other run starts from the checkpoint's weights
    // (engine/train/trainer.cpp: a task fine-tune of a causal model, continued pretraining).
    check_parameter_memory(c);
}

}  // namespace

int ModelConfig::inner() const {
    if (d_inner) return *d_inner;
    if (arch == "birdie") return 3 * d_model;  // Birdie's state size N: a gated block's 3d
    if (arch == "gmlp")
        return 6 * d_model;  // the gMLP paper's d_ffn = 6·d_model (docs/decisions.md)
    return (arch == "bigs" || arch == "gated_att" ? 3 : 4) * d_model;
}

int ModelConfig::heads() const {
    if (n_heads) return *n_heads;
    const int h = std::max(1, d_model / 64);  // heads of width 64 (BERT's)
    if (d_model % h != 0)
        fail("model.n_heads",
             "d_model=" + std::to_string(d_model) + " is not a multiple of 64; set model.n_heads");
    return h;
}

nlohmann::ordered_json RunConfig::to_json() const {
    ojson j;
    j["model"] = {{"arch", model.arch},
                  {"vocab_size", model.vocab_size},
                  {"d_model", model.d_model},
                  {"n_layers", model.n_layers},
                  {"d_inner", opt_json(model.d_inner)},
                  {"max_len", model.max_len},
                  {"type_embeddings", model.type_embeddings},
                  {"position_embeddings", model.position_embeddings},
                  {"embedding_norm", model.embedding_norm},
                  {"ln_eps", model.ln_eps},
                  {"block_gelu", model.block_gelu},
                  {"n_heads", opt_json(model.n_heads)},
                  {"dropout", model.dropout},
                  {"init_std", model.init_std},
                  {"ssm",
                   {{"n_modes", model.ssm.n_modes},
                    {"n_kernels", model.ssm.n_kernels},
                    {"a_im_init", model.ssm.a_im_init},
                    {"dt_min", model.ssm.dt_min},
                    {"dt_max", model.ssm.dt_max}}},
                  {"n_labels", model.n_labels},
                  {"pool", model.pool},
                  {"norm_position", model.norm_position},
                  {"mlm_head", model.mlm_head},
                  {"mlm_transform", model.mlm_transform},
                  {"causal", model.causal},
                  {"birdie",
                   {{"mode", model.birdie.mode},
                    {"layer_pattern", model.birdie.layer_pattern},
                    {"forget_init", model.birdie.forget_init}}}};
    j["model"]["gmlp"] = {{"causal", model.gmlp.causal}};  // after "birdie", docs/config.md order
    j["model"]["slstm"] = {{"gate_norm", model.slstm.gate_norm}};
    j["tokenizer"] = {{"kind", tokenizer.kind},
                      {"model", opt_json(tokenizer.model)},
                      {"vocab_size", tokenizer.vocab_size},
                      {"model_type", tokenizer.model_type}};
    const auto& tp = data.task_params;
    j["data"] = {{"task", opt_json(data.task)},
                 {"task_params",
                  {{"seed", tp.seed},
                   {"n_train", tp.n_train},
                   {"n_valid", tp.n_valid},
                   {"n_test", tp.n_test},
                   {"min_len", tp.min_len},
                   {"max_len", tp.max_len},
                   {"n_symbols", tp.n_symbols},
                   {"min_entries", tp.min_entries},
                   {"max_entries", tp.max_entries},
                   {"n_queries", tp.n_queries},
                   {"span_len", tp.span_len},
                   {"question_len", tp.question_len},
                   {"sentence_len", tp.sentence_len},
                   {"max_attractors", tp.max_attractors}}},
                 {"train", opt_json(data.train)},
                 {"valid", opt_json(data.valid)},
                 {"doc_sep", data.doc_sep},
                 {"seq_len", data.seq_len},
                 {"labels", opt_json(data.labels)},
                 {"pairs", opt_json(data.pairs)},
                 {"pair_gap", data.pair_gap}};
    j["train"] = {
        {"objective", train.objective},
        {"mask_prob", train.mask_prob},
        {"prefix_fraction", train.prefix_fraction},
        {"birdie",
         {{"update_every", train.birdie.update_every}, {"arms", opt_json(train.birdie.arms)}}},
        {"batch_size", train.batch_size},
        {"grad_accum", train.grad_accum},
        {"steps", train.steps},
        {"lr", train.lr},
        {"ssm_lr", opt_json(train.ssm_lr)},
        {"betas", {train.betas[0], train.betas[1]}},
        {"eps", train.eps},
        {"weight_decay", train.weight_decay},
        {"warmup_steps", train.warmup_steps},
        {"schedule", train.schedule},
        {"precision", train.precision},
        {"clip_grad_norm", train.clip_grad_norm},
        {"eval_every", train.eval_every},
        {"eval_batches", train.eval_batches},
        {"checkpoint_every", train.checkpoint_every},
        {"keep_checkpoints", train.keep_checkpoints},
        {"seed", train.seed},
        {"threads", train.threads},
        {"init_from", opt_json(train.init_from)},
        {"freeze_ssm", train.freeze_ssm},
        {"epochs", train.epochs}};
    return j;
}

std::string RunConfig::to_json_text() const {
    return to_json().dump(2);
}

RunConfig RunConfig::from_json(const nlohmann::json& given) {
    const RunConfig defaults;  // docs/config.md's
    ojson full = defaults.to_json();
    merge("", full, given);
    RunConfig c = from_full_json(full);
    check_ranges(c);
    return c;
}

RunConfig RunConfig::parse(const std::string& text) {
    nlohmann::json j;
    try {
        // Depth-checked before it is built (json_text.hpp); a key named twice is refused.
        j = parse_json_text(text, "<json>", kJsonMaxDepth, JsonKeys::unique);
    } catch (const FormatError& e) {
        throw ConfigError(e.what());
    }
    return from_json(j);
}

void RunConfig::check() const {
    check_ranges(*this);
}

RunConfig RunConfig::load(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw ConfigError(path + ": a directory, not a run configuration file (a JSON file)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot read");
    // Read up to a cap, not whole: /dev/zero or a huge file was read until memory ran out
    // ("out of memory", no file named). A pipe (--config <(…)) still works.
    constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;
    std::string text;
    char piece[1 << 16];
    while (text.size() <= kMaxConfigBytes && in.read(piece, sizeof piece).gcount() > 0)
        text.append(piece, static_cast<std::size_t>(in.gcount()));
    if (in.bad()) throw ConfigError(path + ": read error");
    if (text.size() > kMaxConfigBytes)
        throw ConfigError(path + ": more than 16 MiB; a run configuration is a small JSON file");
    try {
        return parse(text);
    } catch (const ConfigError& e) {
        throw ConfigError(path + ": " + e.what());
    }
}

namespace {
// One `--set key=value` merged into the configuration `full` (not yet checked).
void merge_override(ojson& full, const std::string& assignment) {
    // Key and value become JSON strings (a bare word is a string value): text that is not UTF-8
    // would make every later dump() throw nlohmann's type_error instead of a ConfigError.
    try {
        (void)nlohmann::json(assignment).dump();
    } catch (const nlohmann::json::type_error&) {
        throw ConfigError("--set: the assignment is not valid UTF-8");
    }
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ConfigError("--set " + assignment + ": expected key=value");
    const std::string key = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);
    nlohmann::json value = parse_json_or_discarded(text);
    if (value.is_discarded()) {
        const std::string problem = json_text_problem(text);
        if (problem.rfind("nested", 0) == 0) throw ConfigError("--set " + key + ": " + problem);
        value = text;  // a bare word: a string value (`--set train.schedule=linear`)
    }
    // Build {"a": {"b": value}} from "a.b".
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
        parts.push_back(key.substr(start, dot - start));
    parts.push_back(key.substr(start));
    nlohmann::json nested = value;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
        nested = nlohmann::json{{*it, nested}};
    merge("", full, nested);
}
}  // namespace

RunConfig RunConfig::with_override(const std::string& assignment) const {
    return with_overrides({assignment});
}

RunConfig RunConfig::with_overrides(const std::vector<std::string>& assignments) const {
    ojson full = to_json();
    for (const auto& assignment : assignments)
        merge_override(full, assignment);
    RunConfig c = from_full_json(full);
    check_ranges(c);
    return c;
}

}  // namespace routescope
