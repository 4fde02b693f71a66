#include "core/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace vrdmasim {

std::string json_string(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        } else {
            out += ch;
        }
    }
    out += '"';
    return out;
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "0";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    if (res.ec != std::errc()) {   // cannot happen with 64 bytes; be safe
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return buf;
    }
    return std::string(buf, res.ptr);
}

std::string json_number(std::uint64_t v) { return std::to_string(v); }
std::string json_number(std::int64_t v) { return std::to_string(v); }

}  // namespace vrdmasim
