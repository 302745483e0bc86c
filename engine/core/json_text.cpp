#include "engine/core/json_text.hpp"

#include "engine/core/error.hpp"

#include <set>
#include <vector>

namespace routescope {

namespace {

// Builds nothing: counts the open arrays/objects and stops the parse at the first one too deep.
class DepthCheck : public nlohmann::json_sax<nlohmann::json> {
public:
    DepthCheck(int max_depth, JsonKeys keys)
        : max_depth_(max_depth), unique_keys_(keys == JsonKeys::unique) {}
    std::string problem;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open(true); }
    bool key(string_t& k) override {
        if (!unique_keys_) return true;
        Level& level = levels_.back();
        level.key = k;
        if (level.keys.insert(k).second) return true;
        problem = "the key '" + key_path() + "' appears twice in one object (which one is meant?)";
        return false;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& e) override {
        problem = std::string("not valid JSON (") + e.what() + ")";
        return false;
    }

private:
    // Only kept with JsonKeys::unique: the keys seen in each open object, and the key being read.
    struct Level {
        bool object = false;
        std::set<std::string> keys;
        std::string key;
    };
    bool open(bool object) {
        if (++depth_ > max_depth_) {
            problem = "nested deeper than " + std::to_string(max_depth_) +
                      " levels of arrays/objects (the limit is " + std::to_string(max_depth_) + ")";
            return false;
        }
        if (unique_keys_) levels_.push_back(Level{object, {}, {}});
        return true;
    }
    bool close() {
        --depth_;
        if (unique_keys_) levels_.pop_back();
        return true;
    }
    // "model.d_model", "views[].settings.dumps": where the repeated key is.
    std::string key_path() const {
        std::string path;
        for (std::size_t i = 0; i < levels_.size(); ++i) {
            const bool last = i + 1 == levels_.size();
            if (levels_[i].object) {
                if (!path.empty()) path += '.';
                path += levels_[i].key;
            } else if (!last) {
                path += "[]";
            }
        }
        return path;
    }
    int max_depth_;
    bool unique_keys_;
    int depth_ = 0;
    std::vector<Level> levels_;
};

template <class Json>
Json parse_checked(std::string_view text, const std::string& source, int max_depth, JsonKeys keys) {
    const std::string problem = json_text_problem(text, max_depth, keys);
    if (!problem.empty()) throw FormatError(source + ": " + problem);
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // not expected after the check
        throw FormatError(source + ": not valid JSON (" + e.what() + ")");
    }
}

}  // namespace

std::string json_text_problem(std::string_view text, int max_depth, JsonKeys keys) {
    DepthCheck check(max_depth, keys);
    try {
        const bool ok = nlohmann::json::sax_parse(text, &check);
        if (!ok && check.problem.empty()) check.problem = "not valid JSON";
    } catch (const nlohmann::json::exception& e) {
        check.problem = std::string("not valid JSON (") + e.what() + ")";
    }
    return check.problem;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source, int max_depth,
                               JsonKeys keys) {
    return parse_checked<nlohmann::json>(text, source, max_depth, keys);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& source,
                                               int max_depth, JsonKeys keys) {
    return parse_checked<nlohmann::ordered_json>(text, source, max_depth, keys);
}

nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth) {
    if (!json_text_problem(text, max_depth).empty())
        return nlohmann::json(nlohmann::json::value_t::discarded);
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace routescope
