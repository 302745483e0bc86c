#pragma once
// The CLI's small text outputs are written atomically by engine/io/atomic_file.hpp.
#include "engine/io/atomic_file.hpp"

namespace routescope::cli {
using routescope::write_text_atomically;
using routescope::write_texts_atomically;
}  // namespace routescope::cli
