#pragma once
// The run configuration of docs/config.md: one JSON document (model, tokenizer, data, train) that
// `routescope-cli train --config` reads, a checkpoint stores in /config attr `json`, and the
// PyTorch reference (tests/reference/routescope_ref/config.py) reads to build the same model.
//
// Every key has the default docs/config.md gives; a key docs/config.md does not list is a
// ConfigError naming it ("model.d_modle: unknown key"); values are type-checked and enumerations
// checked, so a typo never falls back to a default. `--set a.b=v` overrides one key (the value is
// JSON — numbers, true/false/null, lists — or else a plain string).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/memory.hpp"  // bytes_text, which configuration messages use

namespace routescope {

struct SsmConfig {
    int n_modes = 64;                 ///< N
    int n_kernels = 1;                ///< H
    std::string a_im_init = "hippo";  ///< hippo | lin | inv
    double dt_min = 0.01;
    double dt_max = 1.0;
};

/// gMLP options (MODELS.md "gMLP").
struct GmlpConfig {
    bool causal = false;  ///< use only W's lower triangle: position i mixes positions j ≤ i
};

/// Birdie options (MODELS.md "Birdie"; birdie_block.hpp).
struct BirdieConfig {
    std::string mode = "bidirectional";       ///< causal | bidirectional | prefix
    std::string layer_pattern = "alternate";  ///< alternate (odd layers causal) | uniform
    /// Bias of W_f at init: "zero" (MODELS.md's rule, σ(b_f) = 1/2) | "spread" (σ(b_f) from 0.9
    /// to 0.999 across each scan direction's channels, time constants 1/(1 − σ(b_f)) spaced
    /// geometrically from 10 to 1000; birdie_block.hpp, birdie_forget_bias).
    std::string forget_init = "zero";
};

/// S-LSTM options (MODELS.md "S-LSTM"; slstm_recurrence.hpp).
struct SlstmConfig {
    bool gate_norm = false;  ///< LayerNorm on each of the 7 pre-activations (MODELS.md's option)
};

struct ModelConfig {
    std::string arch = "bigs";  ///< bigs | stack_ssm | gated_att | bert | birdie | slstm | gmlp
    int vocab_size = 30522;
    int d_model = 256;
    int n_layers = 4;
    std::optional<int> d_inner;  ///< null → 3d (gated blocks) or 4d (stack blocks)
    int max_len = 512;
    bool type_embeddings = false;
    /// E_pos (learned absolute positions; MODELS.md). false: none, for a recurrent or convolutional
    /// model meant to run past the lengths it was trained on (gMLP never has them).
    bool position_embeddings = true;
    /// The LayerNorm after the embedding sum (MODELS.md; BERT's and BiGS's). false: none, the sum
    /// goes straight to dropout and the first block, as in GPT-2 and H3's lm_simple (issue 27).
    bool embedding_norm = true;
    double ln_eps = 1e-12;
    std::string block_gelu = "tanh";  ///< tanh | erf
    std::optional<int> n_heads;       ///< null → d/64, at least 1
    double dropout = 0.1;
    double init_std = 0.02;
    SsmConfig ssm;
    int n_labels = 0;
    std::string pool =
        "mean";  ///< mean | mean_all (all L positions, pads included) | first | sentence
    /// Where a bert block's LayerNorms sit: "pre" (h + F(LN(h)), the STACK/ATT baseline) or
    /// "post" (LN(h + F(h)), Hugging Face BERT; arch bert only).
    std::string norm_position = "pre";
    /// false: no MLM head (mlm.*), a classification-only model (needs n_labels > 0).
    bool mlm_head = true;
    /// The MLM head's transform, dense + gelu before its LayerNorm (BERT's and BiGS's head). false:
    /// logits = LN(h)·E_wordᵀ + bias, the final LayerNorm and tied decoder of GPT-2 and H3's
    /// lm_simple (no mlm.dense; issue 27).
    bool mlm_transform = true;
    /// Causal variants of bigs, stack_ssm (the forward SSM only: no backward branch, none of its
    /// parameters), gated_att and bert (a causal attention mask: position t attends to t' ≤ t).
    /// gMLP and Birdie have their own switches (gmlp.causal, birdie.mode); docs/config.md.
    bool causal = false;
    BirdieConfig birdie;
    GmlpConfig gmlp;
    SlstmConfig slstm;

    /// I of MODELS.md: explicit, else 3d for bigs/gated_att, 4d for stack_ssm/bert.
    int inner() const;
    /// Attention heads: explicit, else d/64 (at least 1). ConfigError when that does not divide d.
    int heads() const;
};

struct TokenizerConfig {
    std::string kind = "bytes";  ///< bytes | sentencepiece | wordpiece | wordpiece_cased
    std::optional<std::string> model;
    int vocab_size = 8000;
    std::string model_type = "unigram";  ///< unigram | bpe
};

/// Sizes and lengths of a built-in task (engine/data/task.hpp TaskParams; 0 = the task's default).
struct TaskParamsConfig {
    std::int64_t seed = 1;
    std::int64_t n_train = 1000;
    std::int64_t n_valid = 200;
    std::int64_t n_test = 200;
    int min_len = 0;
    int max_len = 0;
    int n_symbols = 0;
    int min_entries = 0;
    int max_entries = 0;
    int n_queries = 0;
    int span_len = 0;
    int question_len = 0;
    int sentence_len = 0;
    int max_attractors = 0;
};

struct DataConfig {
    std::optional<std::string> task;
    TaskParamsConfig task_params;
    std::optional<std::string> train;
    std::optional<std::string> valid;
    std::string doc_sep = "line";  ///< line | blank
    int seq_len = 128;
    /// Classification label names in id order, set by fine-tuning from the training data.
    std::optional<std::vector<std::string>> labels;
    /// Classification: whether the examples are sentence pairs (true) or single texts (false);
    /// set by fine-tuning from data.train, checked by eval (null: not recorded).
    std::optional<bool> pairs;
    /// Classification pairs: filler tokens between the two sentences of every example (the BiGS
    /// talk's "matching across gaps"; engine/train/labelled_set.hpp). 0 = none.
    int pair_gap = 0;
};

/// The Birdie mixture (TASKS.md "Objectives"; engine/train/mixture_controller.hpp).
struct BirdieMixtureConfig {
    std::int64_t update_every = 100;               ///< E: steps between controller updates
    std::optional<std::vector<std::string>> arms;  ///< null → every arm of birdie_arms.hpp
};

struct TrainConfig {
    std::string objective = "mlm";  ///< mlm | classify | clm | prefix_lm | birdie
    double mask_prob = 0.15;
    double prefix_fraction = 0.75;  ///< prefix LM: the mean fraction of a row before the split
    BirdieMixtureConfig birdie;
    int batch_size = 8;
    int grad_accum = 1;
    std::int64_t steps = 1000;
    double lr = 5e-4;
    std::optional<double> ssm_lr;  ///< null → lr
    std::array<double, 2> betas{0.9, 0.999};
    double eps = 1e-8;
    double weight_decay = 0.01;
    std::int64_t warmup_steps = 100;
    std::string precision = "fp32";   ///< fp32 | tf32 | bf16-mixed (docs/config.md)
    std::string schedule = "cosine";  ///< cosine | linear | constant
    double clip_grad_norm = 1.0;      ///< 0 = off
    std::int64_t eval_every = 100;
    int eval_batches = 4;
    std::int64_t checkpoint_every = 500;
    /// true: each checkpoint of a run is also kept, weights only, as DIR/step-<N>.ckpt.h5 (a
    /// checkpoint history, e.g. to compare two models at the same loss).
    bool keep_checkpoints = false;
    std::int64_t seed = 1234;
    int threads = 0;                       ///< 0 = all cores
    std::optional<std::string> init_from;  ///< fine-tuning: pretrained checkpoint to start from
    bool freeze_ssm = false;               ///< fine-tuning: no updates to *.ssm_forward/backward.*
    std::int64_t epochs = 0;               ///< fine-tuning: > 0 sets steps to whole epochs

    double effective_ssm_lr() const { return ssm_lr ? *ssm_lr : lr; }
};

struct RunConfig {
    ModelConfig model;
    TokenizerConfig tokenizer;
    DataConfig data;
    TrainConfig train;

    /// A full, validated configuration from a (possibly partial) JSON object: defaults filled in.
    /// Throws ConfigError naming the key ("train.schedule: 'cosin' is not one of ...").
    static RunConfig from_json(const nlohmann::json& given);
    /// from_json of JSON text; a parse error is a ConfigError ("<json>: not valid JSON (...)").
    static RunConfig parse(const std::string& text);
    /// parse() of a file; errors are prefixed with the path.
    static RunConfig load(const std::string& path);

    /// Every key, in docs/config.md's order; from_json(to_json()) gives the same configuration.
    nlohmann::ordered_json to_json() const;
    std::string to_json_text() const;

    /// `--set model.ssm.n_modes=32`: returns the configuration with that key replaced.
    RunConfig with_override(const std::string& assignment) const;
    /// Every `--set` at once, checked once all are applied: one at a time, each was checked
    /// against the keys not yet set (`--set model.d_inner=7 --set model.birdie.mode=causal` was
    /// refused for an odd d_inner that only bidirectional layers forbid).
    RunConfig with_overrides(const std::vector<std::string>& assignments) const;

    /// The checks from_json and with_override make (ranges, cross-key rules, the parameter
    /// memory estimate), for a configuration changed field by field (`train --init`).
    void check() const;
};

/// A number as messages write it: its shortest round-trip form ("1e-320", "0.9999999999999999",
/// "inf"), never std::to_string's six fixed decimals ("0.000000" for 1e-320, 300 digits for 1e300).
std::string number_text(double v);

}  // namespace routescope
