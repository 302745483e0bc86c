#include "engine/data/task.hpp"

#include "engine/core/error.hpp"

namespace routescope::data {

const std::vector<std::string>& task_names() {
    static const std::vector<std::string> names = {
        "induction", "phone-book", "copying", "selective-copying", "gap-matching", "attractors"};
    return names;
}

TaskData generate_task(const std::string& name, const TaskParams& params) {
    if (name == "induction") return generate_induction(params);
    if (name == "phone-book") return generate_phone_book(params);
    if (name == "copying") return generate_copying(params);
    if (name == "selective-copying") return generate_selective_copying(params);
    if (name == "gap-matching") return generate_gap_matching(params);
    if (name == "attractors") return generate_attractors(params);
    std::string list;
    for (const auto& n : task_names())
        list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("data.task: '" + name + "' is not one of " + list);
}

}  // namespace routescope::data
