#include "models/interconnect/router.hpp"

#include "models/interconnect/exanet_packet.hpp"

#include <stdexcept>

namespace vrdmasim {

RouterParams::RouterParams()
    : set("router", "ExaNet switch inside each FPGA"),
      latency(set.time("latency", "100ns",
                       "pipeline latency from head in to head out (*estimate*: the ExaNet router's pipeline "
                       "depth and clock are unpublished; 100 ns is 16 cycles of 156.25 MHz)")
                  .range("0ps", "100us")),
      vcs(set.integer("vcs", "2",
                      "virtual channels: each input has one buffer of the link's `buffer` per VC; the torus "
                      "dateline needs 2 (ExaNet VC-based deadlock avoidance; the header's VC field is 5 bits)")
              .range("1", "32")) {}

void Router::declare_params(ParamRegistry& reg) {
    reg.add(params_of<RouterParams>().set);
}

Router::Router(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_module(name),
      in("in"),
      out("out"),
      ctx_(ctx),
      pipeline_(ctx.config[params_of<RouterParams>().latency]),
      packets_(ctx.stats.counter(std::string(this->name()) + ".packets", "", "packets routed")),
      unroutable_(ctx.stats.counter(std::string(this->name()) + ".unroutable", "",
                                    "packets for a destination with no route (dropped with an error)")),
      overflows_(ctx.stats.counter(std::string(this->name()) + ".buffer_overflows", "",
                                   "packets that found their input VC buffer too full (must stay 0)")) {
    in.register_b_transport(this, &Router::b_transport);
}

void Router::set_route(unsigned dst, unsigned port) {
    if (routes_.size() <= dst) routes_.resize(dst + 1, -1);
    routes_[dst] = static_cast<int>(port);
}

void Router::set_input_buffer(unsigned port, unsigned flits, unsigned vcs) {
    if (inputs_.size() <= port) inputs_.resize(port + 1);
    Input& in = inputs_[port];
    in.flits = flits;
    in.vcs = vcs < 1 ? 1 : vcs;
    in.vc.assign(in.vcs, InputVc{});
    while (occ_max_.size() < in.vcs) {
        const unsigned v = static_cast<unsigned>(occ_max_.size());
        occ_max_.push_back(0);
        occ_stats_.push_back(&ctx_.stats.scalar(std::string(name()) + ".vc" + std::to_string(v) + ".occupancy_max",
                                                "flits", "most flits measured in one input buffer of this VC"));
    }
}

void Router::occupy(unsigned port, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed) {
    if (port >= inputs_.size() || inputs_[port].flits == 0) return;
    Input& in = inputs_[port];
    if (in.vcs == 1) vc = 0;
    if (vc >= in.vcs) return;   // refused downstream anyway
    auto& held = in.vc[vc].held;
    // Heads reach one input in order (its link sends one packet after the
    // other), so what is freed by this head is freed for every later one.
    unsigned occ = flits;
    std::size_t kept = 0;   // one pass: keep what is still held, in order
    for (std::size_t i = 0; i < held.size(); ++i) {
        if (held[i].first > head) {
            occ += held[i].second;
            held[kept++] = held[i];
        }
    }
    held.resize(kept);
    held.emplace_back(freed, flits);
    if (occ > in.flits) overflows_.inc();
    if (occ > occ_max_[vc]) {
        occ_max_[vc] = occ;
        occ_stats_[vc]->set(occ);
    }
}

void Router::end_of_elaboration() {
    for (std::size_t dst = 0; dst < routes_.size(); ++dst) {
        if (routes_[dst] >= static_cast<int>(out.size()))
            throw std::logic_error(std::string(name()) + ": route to node " + std::to_string(dst) + " uses port " +
                                   std::to_string(routes_[dst]) + ", but only " + std::to_string(out.size()) +
                                   " are bound");
    }
}

void Router::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* pkt = gp.get_extension<ExanetPacket>();
    Choice c;
    if (pkt) {
        if (route_fn_)
            c = route_fn_(static_cast<unsigned>(id), *pkt);
        else
            c.port = route(pkt->dst_node);
    }
    if (c.port < 0 || c.port >= static_cast<int>(out.size())) {
        unroutable_.inc();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    packets_.inc();
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time head = now + delay;
    const unsigned in_vc = pkt->header.vc;
    if (c.vc >= 0) pkt->header.vc = static_cast<std::uint8_t>(c.vc);
    delay += pipeline_;
    pkt->tail += pipeline_;
    out[c.port]->b_transport(gp, delay);
    occupy(static_cast<unsigned>(id), in_vc, pkt->flits(), head, now + delay);
}

}  // namespace vrdmasim
