#include "src/core/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace vrdmasim {

void append_json_escaped(std::string& out, std::string_view s) {
    std::size_t from = 0;   // the run of characters that need no escape, appended at once
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c != '"' && c != '\\' && c >= 0x20) continue;
        out.append(s.data() + from, i - from);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += s[i];
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        }
        from = i + 1;
    }
    out.append(s.data() + from, s.size() - from);
}

std::string json_string(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    append_json_escaped(out, s);
    out += '"';
    return out;
}

void append_json_number(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += '0';
        return;
    }
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    if (res.ec != std::errc()) {   // cannot happen with 64 bytes; be safe
        const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
        out.append(buf, static_cast<std::size_t>(n));
        return;
    }
    out.append(buf, res.ptr);
}

void append_json_number(std::string& out, std::uint64_t v) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, res.ptr);
}

std::string json_number(double v) {
    std::string out;
    append_json_number(out, v);
    return out;
}

std::string json_number(std::uint64_t v) { return std::to_string(v); }
std::string json_number(std::int64_t v) { return std::to_string(v); }

}   // namespace vrdmasim
