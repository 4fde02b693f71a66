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

#include <tlm>

namespace vrdmasim {

class DebugAccess {
public:
    // Reads (write == false) or writes `len` bytes at `addr`, as a
    // transport_dbg of that command, address and length would. Returns
    // whether all `len` bytes were served (transport_dbg returned `len`);
    // false: nothing was (an address outside the target).
    virtual bool debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) = 0;

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

}   // namespace vrdmasim
