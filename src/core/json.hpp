// The two pieces of JSON writing the core needs: strings and numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace vrdmasim {

// Quoted and escaped (quotes, backslashes, control characters as \u00XX).
std::string json_string(const std::string& s);
// Shortest text that reads back as exactly `v`; "0" for NaN and infinities
// (JSON has no representation for them).
std::string json_number(double v);
std::string json_number(std::uint64_t v);
std::string json_number(std::int64_t v);
// The same texts appended to `out` (writers of big outputs, which build
// them a block at a time): json_string without its quotes, json_number.
void append_json_escaped(std::string& out, std::string_view s);
void append_json_number(std::string& out, double v);
void append_json_number(std::string& out, std::uint64_t v);
// Any other integer type, without ambiguity between the overloads above.
template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, std::uint64_t> &&
                                                  !std::is_same_v<T, std::int64_t>>>
std::string json_number(T v) {
    if constexpr (std::is_signed_v<T>) return json_number(static_cast<std::int64_t>(v));
    else return json_number(static_cast<std::uint64_t>(v));
}

}   // namespace vrdmasim
