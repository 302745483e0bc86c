#pragma once
// Every JSON text the engine and the applications read (run configurations, a checkpoint's /config
// attribute, project files, JSON-lines data and logs) goes through these: the nesting depth is
// checked with a SAX pass BEFORE a value is built, because deeply nested input overflows the stack
// in the recursive code that walks a parsed value (dump, conversions, destruction).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace routescope {

/// Whether an object may name a key twice. nlohmann (like Python's json) keeps the last value;
/// Routescope's own files (run configurations, projects) refuse it, because one of the two
/// values is a mistake the user would not see. Files of other tools (Hugging Face config.json,
/// safetensors headers) are read as those tools read them.
enum class JsonKeys { last_wins, unique };

/// Deepest nesting of arrays and objects accepted (a run configuration needs 3).
inline constexpr int kJsonMaxDepth = 64;

/// Parses `text`; FormatError "SOURCE: ..." naming the limit when it nests deeper than
/// `max_depth`, or the parser's message when it is not JSON (numbers too large included).
nlohmann::json parse_json_text(std::string_view text, const std::string& source,
                               int max_depth = kJsonMaxDepth, JsonKeys keys = JsonKeys::last_wins);
nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& source,
                                               int max_depth = kJsonMaxDepth,
                                               JsonKeys keys = JsonKeys::last_wins);

/// For callers that skip what they cannot read (a torn log line): a discarded value
/// (`is_discarded()`) when `text` is not JSON or nests deeper than `max_depth`; never throws.
nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth = kJsonMaxDepth);

/// The nesting depth check alone: an empty string when `text` is JSON nested at most `max_depth`
/// deep, else what is wrong ("nested deeper than 64 levels", or the parser's message).
/// With JsonKeys::unique, also the first key an object names twice ("the key 'model.d_model'
/// appears twice ...").
std::string json_text_problem(std::string_view text, int max_depth = kJsonMaxDepth,
                              JsonKeys keys = JsonKeys::last_wins);

/// A log record's number `key`: `fallback` when it is absent or null (a loss over no target is
/// written as null), else the number (a string or other type throws as j.at(key).get<double>()).
template <class Json>
double number_or(const Json& j, const char* key, double fallback) {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : it->template get<double>();
}

}  // namespace routescope
