// The PLDMA's transfer ids, and how every output prints them. An engine
// numbers the work its doorbells start (writes, reads, atomics) from 1, and
// puts its node's number in the high bits, so that an id is unique in the
// whole system: id = node << 40 | n. Printed as a number the id of node 1's
// first transfer, 1099511627777, reads like an address; everywhere it is
// printed (the narrated log, the trace's args, the report) it is written
// "node:n" instead: "1:1", node 1's first transfer (docs/trace.md).
#pragma once

#include <cstdint>
#include <string>

namespace vrdmasim {

constexpr unsigned kTransferNodeShift = 40;

constexpr std::uint64_t make_transfer_id(unsigned node, std::uint64_t n) {
    return (static_cast<std::uint64_t>(node) << kTransferNodeShift) | n;
}

// "1:5": node 1's fifth transfer.
inline std::string transfer_name(std::uint64_t id) {
    return std::to_string(id >> kTransferNodeShift) + ":" +
           std::to_string(id & ((std::uint64_t{1} << kTransferNodeShift) - 1));
}

}   // namespace vrdmasim
