// BusPort: a software master's way onto a node bus as a plain forward
// transport interface, for code that is not a module itself (the kernel's
// page-table and page-content accesses by physical address).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

namespace vrdmasim {

class BusPort : public sc_core::sc_module, public tlm::tlm_fw_transport_if<> {
public:
    tlm_utils::simple_initiator_socket<BusPort> socket;
    explicit BusPort(sc_core::sc_module_name name) : sc_module(name), socket("socket") {}

    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) override {
        socket->b_transport(gp, delay);
    }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override {
        return socket->nb_transport_fw(gp, phase, delay);
    }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override { return socket->transport_dbg(gp); }
};

}  // namespace vrdmasim
