#pragma once
// Which models can be trained with the causal objectives (clm, prefix_lm, birdie) without reading
// the tokens they must predict (TASKS.md "Objectives": prefix-LM-capable models are Birdie,
// attention with a prefix mask and causal gMLP).
//
//   birdie, mode causal   every layer scans left to right
//   birdie, mode prefix   reverse halves cut on the causal region by the reset mask
//                         (clm marks the whole row causal, so nothing flows back)
//   gmlp, causal = true   W's strict upper triangle is zero
//   bigs, stack_ssm with model.causal = true    the forward SSM only (no backward branch)
//   bert, gated_att with model.causal = true    a causal attention mask (t attends to t' ≤ t)
//
// Everything else reads the future: bidirectional Birdie (its reverse half), the SSM models (bigs,
// stack_ssm) without model.causal (the backward SSM), S-LSTM (right neighbours and the sentence
// node), gMLP without model.gmlp.causal, and the attention models (bert, gated_att) without
// model.causal (a padding mask only). A causal model trains with prefix_lm and birdie too: it
// reads nothing after a position, the prefix included (a prefix mask is not implemented).
#include "engine/core/config.hpp"

namespace routescope::train {

/// Whether train.objective is one of clm | prefix_lm | birdie.
bool is_causal_objective(const std::string& objective);

/// ConfigError naming train.objective and the model key that makes the model see the answer.
void check_causal_objective(const RunConfig& config);

}  // namespace routescope::train
