#include "engine/models/block.hpp"

#include "engine/core/error.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/models/gated_att_block.hpp"
#include "engine/models/gated_ssm_block.hpp"
#include "engine/models/gmlp_block.hpp"
#include "engine/models/stack_att_block.hpp"
#include "engine/models/stack_ssm_block.hpp"

namespace routescope::models {

namespace {
[[noreturn]] void unsupported(const std::string& arch) {
    throw ConfigError("model.arch: '" + arch +
                      "' has no blocks of this engine (bigs, stack_ssm, gated_att, bert, birdie, "
                      "gmlp; slstm is a "
                      "shared recurrence, slstm_recurrence.hpp)");
}
}  // namespace

std::unique_ptr<Block> make_block(const ModelConfig& m, int index) {
    if (m.arch == "bigs") return std::make_unique<GatedSsmBlock>(m, index);
    if (m.arch == "birdie") return std::make_unique<BirdieBlock>(m, index);
    if (m.arch == "stack_ssm") return std::make_unique<StackSsmBlock>(m, index);
    if (m.arch == "gated_att") return std::make_unique<GatedAttBlock>(m, index);
    if (m.arch == "bert") return std::make_unique<StackAttBlock>(m, index);
    if (m.arch == "gmlp") return std::make_unique<GmlpBlock>(m, index);
    unsupported(m.arch);
}

void declare_block(ParamStore& store, const ModelConfig& m, int index) {
    if (m.arch == "bigs") return GatedSsmBlock::declare(store, m, index);
    if (m.arch == "birdie") return BirdieBlock::declare(store, m, index);
    if (m.arch == "stack_ssm") return StackSsmBlock::declare(store, m, index);
    if (m.arch == "gated_att") return GatedAttBlock::declare(store, m, index);
    if (m.arch == "bert") return StackAttBlock::declare(store, m, index);
    if (m.arch == "gmlp") return GmlpBlock::declare(store, m, index);
    unsupported(m.arch);
}

}  // namespace routescope::models
