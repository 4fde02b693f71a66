// Bus: the AXI interconnect of one node. Initiators bind to `in`, targets to
// `out`; an address map routes each transaction to one target port, with the
// address translated into the target's own offset. Unmapped addresses get
// TLM_ADDRESS_ERROR_RESPONSE. See models/bus/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "models/common/debug_access.hpp"

namespace vrdmasim {

// The parameters of section [bus], declared in bus.cpp.
struct BusParams {
    BusParams();
    ParamSet set;
    TimeParam latency;
};

class Bus : public sc_core::sc_module, public DebugAccess {
public:
    tlm_utils::multi_passthrough_target_socket<Bus> in;
    tlm_utils::multi_passthrough_initiator_socket<Bus> out;

    static void declare_params(ParamRegistry& reg);
    Bus(sc_core::sc_module_name name, const SimContext& ctx);

    struct Window {
        std::uint64_t base, size;
        unsigned port;   // index of the `out` binding
        std::uint64_t target_offset;   // address seen by the target = addr - base + offset
        std::string name;
        DebugAccess* debug = nullptr;   // the target behind out[port], for debug accesses without a payload
    };
    // Map [base, base+size) to out port `port`. Overlapping windows are a
    // programming error (std::logic_error). `debug`, if given, must be the
    // target bound to out[port] (the builder knows it): debug accesses to
    // the window then call it directly (README, "Debug accesses").
    void map(std::uint64_t base, std::uint64_t size, unsigned port, std::uint64_t target_offset,
             const std::string& name, DebugAccess* debug = nullptr);

    // A debug access as transport_dbg through `in` would make it: decoded,
    // then passed to the window's DebugAccess or, without one, to its port
    // as a payload. false: unmapped, or the target served less than `len`.
    bool debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) override;
    // The same for the data pattern (DebugAccess::debug_pattern).
    bool debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at,
                       std::uint64_t& first) override;
    const std::vector<Window>& windows() const { return windows_; }

    // The window holding [addr, addr+len), or nullptr.
    // The last window found is tried first, inline: accesses come in runs
    // to one window (the DRAM, mostly).
    const Window* decode(std::uint64_t addr, std::uint64_t len) const {
        if (last_ && addr - last_->base < last_->size && len <= last_->size - (addr - last_->base)) return last_;
        return decode_search(addr, len);
    }

private:
    void end_of_elaboration() override;   // every window leads to a bound port
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);

    std::vector<Window> windows_;   // sorted by base
    mutable const Window* last_ = nullptr;   // decode()'s last answer
    const Window* decode_search(std::uint64_t addr, std::uint64_t len) const;
    sc_core::sc_time latency_;
    Counter& transactions_;
    Counter& decode_errors_;
};

}   // namespace vrdmasim
