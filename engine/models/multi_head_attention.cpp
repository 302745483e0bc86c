#include "engine/models/multi_head_attention.hpp"

namespace routescope::models {

MultiHeadAttention::MultiHeadAttention(const std::string& name, int d, int heads, bool causal)
    : q_(name + ".q"),
      k_(name + ".k"),
      v_(name + ".v"),
      o_(name + ".o"),
      d_(d),
      heads_(heads),
      causal_(causal) {}

void MultiHeadAttention::declare(ParamStore& store, const std::string& name, int d) {
    for (const char* p : {".q", ".k", ".v", ".o"})
        declare_linear(store, name + p, d, d);
}

Act MultiHeadAttention::forward(Graph& g, const Act& x, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const Act q = g.linear(x, rows, q_);
    const Act k = g.linear(x, rows, k_);
    const Act v = g.linear(x, rows, v_);
    const bool capture = capture_ && !g.planning() && !g.training();
    const float* probs = nullptr;
    const Act ctx = g.attention(q, k, v, in.lengths, in.B, in.L, d_, heads_, causal_,
                                capture ? &probs : nullptr);
    if (capture && probs) capture_(probs, heads_);
    return g.linear(ctx, rows, o_);
}

}  // namespace routescope::models
