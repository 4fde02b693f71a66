// BusPort: a software master's way onto a node bus as a plain forward
// transport interface, for code that is not a module itself (the kernel's
// page-table and page-content accesses by physical address).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/bus/bus.hpp"
#include "models/common/debug_access.hpp"

namespace vrdmasim {

class BusPort : public sc_core::sc_module, public tlm::tlm_fw_transport_if<>, public DebugAccess {
public:
    tlm_utils::simple_initiator_socket<BusPort> socket;
    explicit BusPort(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}

    // Binds `socket` to the bus's `in` and keeps the bus for debug_access.
    void connect(Bus& bus) {
        socket.bind(bus.in);
        bus_ = &bus;
    }

    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override { socket->b_transport(gp, delay); }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override {
        return socket->nb_transport_fw(gp, phase, delay);
    }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override { return socket->transport_dbg(gp); }

    // The debug transport without a payload: straight to the bus (connect()),
    // else as transport_dbg through the socket.
    bool debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) override {
        if (bus_) return bus_->debug_access(write, addr, data, len);
        return debug_access_to(*socket.operator->(), nullptr, write, addr, data, len);
    }
    bool debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at,
                       std::uint64_t& first) override {
        if (bus_) return bus_->debug_pattern(op, addr, len, at, first);
        return debug_pattern_to(*socket.operator->(), nullptr, op, addr, len, at, first);
    }

private:
    Bus* bus_ = nullptr;
};

}   // namespace vrdmasim
