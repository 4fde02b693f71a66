// Router: an ExaNet switch. Input links bind to `in`, output links to `out`;
// a route function (dimension-order routing computed from the header's
// destination coordinate, see topology.hpp) or, without one, a routing table
// maps each destination to an output port and VC. A packet
// leaves after the router's pipeline latency; its input-buffer space is freed
// when its tail has left through the output (returned to the upstream link as
// its credit time, see link.hpp).
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "core/context.hpp"

namespace vrdmasim {

// The parameters of section [router], declared in router.cpp; read
// through params_of<RouterParams>().
struct RouterParams {
    RouterParams();
    ParamSet set;
    TimeParam latency;
    IntParam vcs;
};

class ExanetPacket;

class Router : public sc_core::sc_module {
public:
    struct Choice {
        int port = -1;   // -1: no route
        int vc = -1;     // VC on the output link; -1 keeps the header's
    };
    // (input port, packet) -> output port and VC.
    using RouteFunction = std::function<Choice(unsigned in_port, const ExanetPacket&)>;

    tlm_utils::multi_passthrough_target_socket<Router> in;
    tlm_utils::multi_passthrough_initiator_socket<Router> out;

    static void declare_params(ParamRegistry& reg);
    Router(sc_core::sc_module_name name, const SimContext& ctx);

    // Packets for node `dst` leave through out[port].
    void set_route(unsigned dst, unsigned port);
    int route(unsigned dst) const { return dst < routes_.size() ? routes_[dst] : -1; }
    // Routes by `f` instead of the table.
    void set_route_function(RouteFunction f) { route_fn_ = std::move(f); }
    // Input buffer of input port `port`: `vcs` buffers of `flits` each
    // (vcs = 1: one buffer whatever the VC). Its occupancy is measured on
    // every packet (head arrival to the time its space is freed), per VC,
    // independently of the upstream link's credit count.
    void set_input_buffer(unsigned port, unsigned flits, unsigned vcs);
    // Most flits measured in any of its inputs' buffers of VC `vc`.
    unsigned occupancy_max(unsigned vc) const { return vc < occ_max_.size() ? occ_max_[vc] : 0; }
    std::uint64_t overflows() const { return overflows_.value(); }

private:
    void end_of_elaboration() override;   // every route leads to a bound port
    void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    struct InputVc {
        std::vector<std::pair<sc_core::sc_time, unsigned>> held;   // (space freed at, flits), by head arrival
    };
    struct Input {
        unsigned flits = 0, vcs = 1;   // 0 flits: not declared, not checked
        std::vector<InputVc> vc;
    };
    void occupy(unsigned port, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed);

    const SimContext& ctx_;
    sc_core::sc_time pipeline_;
    std::vector<int> routes_;
    RouteFunction route_fn_;
    std::vector<Input> inputs_;
    std::vector<unsigned> occ_max_;
    std::vector<Scalar*> occ_stats_;
    Counter& packets_;
    Counter& unroutable_;
    Counter& overflows_;
};

}  // namespace vrdmasim
