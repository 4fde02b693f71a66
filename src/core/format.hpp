// Text formats shared by every output: addresses in hex, one way everywhere
// (log, trace, error messages). Part of the simulator core.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace vrdmasim {

// "0x7efffffff000": lower-case digits, no padding.
inline std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// A duration for a sentence of the log: "15.176 us" (up to 6 significant
// digits, as the log's other durations), from picoseconds.
inline std::string us_text(std::uint64_t ps) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g us", static_cast<double>(ps) * 1e-6);
    return buf;
}

}   // namespace vrdmasim
