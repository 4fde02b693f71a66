// Router: an ExaNet switch. Input links bind to `in`, output links to `out`;
// a routing table maps each destination node to an output port. A packet
// leaves after the router's pipeline latency; its input-buffer space is freed
// when its tail has left through the output (returned to the upstream link as
// its credit time, see link.hpp).
#pragma once

#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "core/context.hpp"

namespace vrdmasim {

class Router : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<Router> in;
    tlm_utils::multi_passthrough_initiator_socket<Router> out;

    static void declare_params(ParamRegistry& reg);
    Router(sc_core::sc_module_name name, const SimContext& ctx);

    // Packets for node `dst` leave through out[port].
    void set_route(unsigned dst, unsigned port);
    int route(unsigned dst) const { return dst < routes_.size() ? routes_[dst] : -1; }

private:
    void end_of_elaboration() override;   // every route leads to a bound port
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    sc_core::sc_time pipeline_;
    std::vector<int> routes_;
    Counter& packets_;
    Counter& unroutable_;
};

}  // namespace vrdmasim
