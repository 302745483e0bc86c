#pragma once
// Embeddings of every architecture of the BiGS family (MODELS.md):
//
//   x = E_word[token] + E_pos[position] (+ E_type[segment]) → LN → dropout
//
// model.embedding_norm = false leaves out the LN (and its parameters): x = sum → dropout.
//
// E_pos is learned absolute (max_len rows; none for gMLP or with model.position_embeddings =
// false); positions are 0..L−1 for every row, padding included; segment ids default to 0.
// Parameters `embeddings.{word, position, type, norm}`.
#include <cstdint>

#include "engine/models/block.hpp"

namespace routescope::models {

class Embeddings {
public:
    explicit Embeddings(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);
    /// Whether the model has E_pos: not gMLP, and model.position_embeddings.
    static bool has_position_embeddings(const ModelConfig& m);
    /// tokens, types [B, L] (types may be null: all 0). positions [B, L] (0..L−1 in every row)
    /// and zeros [B, L] are the model's, made once. Dropout p = model.dropout when training.
    Act forward(Graph& g, const std::int32_t* tokens, const std::int32_t* types,
                const std::int32_t* positions, const std::int32_t* zeros, int B, int L,
                const ops::DropoutSite& dropout);

private:
    bool types_;
    bool positions_;  ///< false for gmlp (MODELS.md: order comes from its spatial gate)
    bool norm_;       ///< model.embedding_norm
    float eps_;
};

}  // namespace routescope::models
