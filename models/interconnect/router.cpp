#include "models/interconnect/router.hpp"

#include "models/interconnect/exanet_packet.hpp"

#include <stdexcept>

namespace vrdmasim {

void Router::declare_params(ParamRegistry& reg) {
    reg.section("router", "ExaNet switch inside each FPGA")
        .time("latency", "100ns",
              "pipeline latency from head in to head out (*estimate*; calibrated with the "
              "one-hop latency in the interconnect issue)")
        .range("0ps", "100us");
}

Router::Router(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_module(name),
      in("in"),
      out("out"),
      pipeline_(ctx.config.time("router.latency")),
      packets_(ctx.stats.counter(std::string(this->name()) + ".packets", "", "packets routed")),
      unroutable_(ctx.stats.counter(std::string(this->name()) + ".unroutable", "",
                                    "packets for a destination with no route (dropped with an error)")) {
    in.register_b_transport(this, &Router::b_transport);
}

void Router::set_route(unsigned dst, unsigned port) {
    if (routes_.size() <= dst) routes_.resize(dst + 1, -1);
    routes_[dst] = static_cast<int>(port);
}

void Router::end_of_elaboration() {
    for (std::size_t dst = 0; dst < routes_.size(); ++dst) {
        if (routes_[dst] >= static_cast<int>(out.size()))
            throw std::logic_error(std::string(name()) + ": route to node " + std::to_string(dst) + " uses port " +
                                   std::to_string(routes_[dst]) + ", but only " + std::to_string(out.size()) +
                                   " are bound");
    }
}

void Router::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* pkt = gp.get_extension<ExanetPacket>();
    const int port = pkt ? route(pkt->dst_node) : -1;
    if (port < 0) {
        unroutable_.inc();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    packets_.inc();
    delay += pipeline_;
    pkt->tail += pipeline_;
    out[port]->b_transport(gp, delay);
}

}  // namespace vrdmasim
