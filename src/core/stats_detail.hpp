// What the files of the statistics (stats.cpp, histogram.cpp,
// stat_name.cpp, stats_output.cpp) share; not part of the core's API.
#pragma once

#include <cstdint>
#include <string_view>

namespace vrdmasim::stats_detail {

// The kinds of statistics, and a reference to one: kind << kIndexBits | (index + 1).
enum Kind { kCounter = 0, kScalar = 1, kHistogram = 2 };
constexpr std::uint32_t kIndexBits = 30;
constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1;

// FNV-1a: the statistics index's hash of a name.
std::uint32_t name_hash(std::string_view s);

}   // namespace vrdmasim::stats_detail
