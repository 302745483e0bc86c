#include "engine/core/json_text.hpp"

#include "engine/core/error.hpp"

namespace routescope {

namespace {

// Builds nothing: counts the open arrays/objects and stops the parse at the first one too deep.
class DepthCheck : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit DepthCheck(int max_depth) : max_depth_(max_depth) {}
    std::string problem;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open(); }
    bool key(string_t&) override { return true; }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& e) override {
        problem = std::string("not valid JSON (") + e.what() + ")";
        return false;
    }

private:
    bool open() {
        if (++depth_ <= max_depth_) return true;
        problem = "nested deeper than " + std::to_string(max_depth_) +
                  " levels of arrays/objects (the limit is " + std::to_string(max_depth_) + ")";
        return false;
    }
    bool close() {
        --depth_;
        return true;
    }
    int max_depth_;
    int depth_ = 0;
};

template <class Json>
Json parse_checked(std::string_view text, const std::string& source, int max_depth) {
    const std::string problem = json_text_problem(text, max_depth);
    if (!problem.empty()) throw FormatError(source + ": " + problem);
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // not expected after the check
        throw FormatError(source + ": not valid JSON (" + e.what() + ")");
    }
}

}  // namespace

std::string json_text_problem(std::string_view text, int max_depth) {
    DepthCheck check(max_depth);
    try {
        const bool ok = nlohmann::json::sax_parse(text, &check);
        if (!ok && check.problem.empty()) check.problem = "not valid JSON";
    } catch (const nlohmann::json::exception& e) {
        check.problem = std::string("not valid JSON (") + e.what() + ")";
    }
    return check.problem;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source, int max_depth) {
    return parse_checked<nlohmann::json>(text, source, max_depth);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& source,
                                               int max_depth) {
    return parse_checked<nlohmann::ordered_json>(text, source, max_depth);
}

nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth) {
    if (!json_text_problem(text, max_depth).empty())
        return nlohmann::json(nlohmann::json::value_t::discarded);
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace routescope
