// DebugAccess: a debug transport without a payload. A target that offers it
// answers exactly as its `transport_dbg` would (same bytes, same effect, no
// time), but the caller fills no tlm_generic_payload and crosses no socket.
// The Bus calls it for a window whose target offers it, and a BusPort offers
// it to software (the OS model's page-table and page-content accesses), so
// that a descriptor read costs a few calls instead of a payload carried
// through two sockets and the bus decode. See models/bus/README.md, "Debug
// accesses".
#pragma once

#include <cstdint>
#include <vector>

#include <tlm>

#include "models/common/data_pattern.hpp"

namespace vrdmasim {

// The data pattern in place of bytes (data_pattern.hpp): a workload's fill
// of a source and check of a destination. Write: the pattern's `len` bytes
// from a place are written. Check: `first` is the offset of the first of
// the `len` bytes that differs from them (`len`: none).
enum class PatternOp : std::uint8_t { Write, Check };

// The same through bytes: made, then written by `access`, or read by it,
// then compared (`access` as debug_access: write, addr, data, len).
template <class Access>
bool debug_pattern_by_bytes(Access&& access, PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at,
                            std::uint64_t& first) {
    std::vector<unsigned char> bytes(len);
    if (op == PatternOp::Write) {
        pattern_bytes(bytes.data(), len, at);
        return access(true, addr, bytes.data(), len);
    }
    if (!access(false, addr, bytes.data(), len)) return false;
    first = pattern_bytes_mismatch(bytes.data(), len, at);
    return true;
}

class DebugAccess {
public:
    // Reads (write == false) or writes `len` bytes at `addr`, as a
    // transport_dbg of that command, address and length would. Returns
    // whether all `len` bytes were served (transport_dbg returned `len`);
    // false: nothing was (an address outside the target).
    virtual bool debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) = 0;
    // The pattern's `len` bytes from `at` written at `addr`, or compared
    // with those there (`op`, `first`: PatternOp): the same bytes and
    // effect as debug_access with them. A target that keeps the pattern by
    // its places (the DRAM's store) does it without making the bytes; by
    // default, through debug_access. True when all `len` bytes were served.
    virtual bool debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at,
                               std::uint64_t& first) {
        return debug_pattern_by_bytes(
            [this](bool w, std::uint64_t a, unsigned char* d, std::uint64_t n) { return debug_access(w, a, d, n); }, op,
            addr, len, at, first);
    }

protected:
    ~DebugAccess() = default;
};

// A debug access to target `t`: through `direct` (t's DebugAccess, found
// once by the caller) when given, else as a payload through t's
// transport_dbg. True when all `len` bytes were served.
inline bool debug_access_to(tlm::tlm_fw_transport_if<>& t, DebugAccess* direct, bool write, std::uint64_t addr,
                            unsigned char* data, std::uint64_t len) {
    if (direct) return direct->debug_access(write, addr, data, len);
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(len));
    gp.set_streaming_width(static_cast<unsigned>(len));
    return t.transport_dbg(gp) == len;
}

// DebugAccess::debug_pattern to target `t`, likewise.
inline bool debug_pattern_to(tlm::tlm_fw_transport_if<>& t, DebugAccess* direct, PatternOp op, std::uint64_t addr,
                             std::uint64_t len, PatternPlace at, std::uint64_t& first) {
    if (direct) return direct->debug_pattern(op, addr, len, at, first);
    return debug_pattern_by_bytes([&t](bool w, std::uint64_t a, unsigned char* d,
                                       std::uint64_t n) { return debug_access_to(t, nullptr, w, a, d, n); },
                                  op, addr, len, at, first);
}

}   // namespace vrdmasim
