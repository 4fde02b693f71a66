// How the MMU-500 model names things in its trace (tracks "smmu tcu" and
// "smmu faults"): fault type names and async-span ids.
#pragma once

#include <cstdint>

#include "src/core/trace.hpp"
#include "models/common/smmu_fault.hpp"

namespace vrdmasim {

inline const char* fault_name(FaultType t) {
    switch (t) {
    case FaultType::Translation: return "translation";
    case FaultType::AccessFlag: return "access-flag";
    case FaultType::Permission: return "permission";
    case FaultType::External: return "external";
    default: return "none";
    }
}

// Async-span ids unique across the run (viewers match begin and end by
// category and id, whatever the process): the track in the top bits.
inline std::uint64_t span_id(Tracer::Track t, std::uint64_t seq) {
    return (static_cast<std::uint64_t>(t.pid) << 48) | (static_cast<std::uint64_t>(t.tid) << 40) | seq;
}

}   // namespace vrdmasim
