#include "models/interconnect/router.hpp"

#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/hop_queue.hpp"
#include "models/interconnect/link.hpp"
#include "src/core/consumed_prefix.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

RouterParams::RouterParams()
    : set("router", "ExaNet switch inside each FPGA"),
      latency(
          set.time("latency", "100ns",
                   "pipeline latency from head in to head out (*estimate*: the ExaNet router's pipeline "
                   "depth and clock are unpublished; 100 ns is 16 cycles of 156.25 MHz; fitted to the prototype's "
                   "published five-hop latency it would be 10 ns: configs/exanest-calibrated.ini, docs/validation.md)")
              .range("0ps", "100us")),
      vcs(set.integer("vcs", "2",
                      "virtual channels: each input has one buffer of the link's `buffer` per VC; the torus "
                      "dateline needs 2 (ExaNet VC-based deadlock avoidance; the header's VC field is 5 bits)")
              .range("1", "32")),
      routing(set.choice("routing", "dimension-order", {"dimension-order", "adaptive"},
                         "dimension-order: z, y, x, the shorter way round, VCs 0/1 by dateline (ExaNet switch "
                         "RTL); adaptive: minimal adaptive routing on the torus's F1 routers, any productive "
                         "dimension on an adaptive VC (2 and up), the dimension-order route on VCs 0/1 as escape "
                         "(Duato's protocol, *this simulator's option*: ExaNet routes by dimension order); needs "
                         "topology.kind = torus and router.vcs >= 3")),
      link_order(set.choice("link-order", "exact", {"exact", "time-approximate", "call-approximate"},
                            "how every link serves its wire and credits (*this simulator's modelling choice*): "
                            "exact = every hop an event at its own time (arrival, credit, the wire free), a link "
                            "serving the first-ready of its waiting packets that has its credits, ties broken by VC, "
                            "sending process and packet, never by call order, so that no order of same-time events "
                            "and no number of MPI ranks moves a figure; credits come back a link latency after the "
                            "space is freed (models/interconnect/README.md, *Exact time order*); "
                            "time-approximate = each packet takes, in its sender's call, the earliest idle interval "
                            "at or after its head on every link of its route: where two want the same interval the "
                            "first to call gets it, so figures move with the order of same-time events (by up to "
                            "4 % on a 256-MPSoC halo) and part from exact's where the torus congests; "
                            "call-approximate = first come first served by b_transport call, wrong wherever senders "
                            "meet (a packet waits behind one that reached the link later, an error that grows with "
                            "the cluster); refused with adaptive routing. The two approximate orders are cheaper: "
                            "their contention figures are not for publication, and every run in one says so")) {}

void Router::declare_params(ParamRegistry& reg) { reg.add(params_of<RouterParams>().set); }

void Router::declare_metrics(MetricRegistry& reg) {
    // Registered at a link's first inversion only: 0 is the true count of a
    // run whose links never served a packet out of time order.
    reg.add("link_order_inversions", "",
            "Packet-hops that waited for a link behind a packet that reached it later in simulated time (sum of "
            "`*.order_inversions`, registered at a link's first): links reserve their wire in call order with "
            "router.link-order = call-approximate, an approximation whose error these measure; always 0 in "
            "the other orders.",
            [](const MetricInputs& in) { return format_metric(double(in.stats.sum_counters("order_inversions"))); });
    reg.add("contention_model", "text",
            "How links served packets where senders meet (router.link-order, board-link.handoff): `exact` "
            "(every hop an event at its own time, the default), `time-approximate (not for publication)` (each "
            "packet's whole route reserved in its sender's call), `time-approximate, cut board links (not for "
            "publication)` (the same with board-link.handoff = message: board links as messages, another model "
            "of their credits), or `call-approximate (not for publication)` (first come, first served by call).",
            [](const MetricInputs& in) {
                const std::string& order = in.config[params_of<RouterParams>().link_order];
                if (order == "exact") return std::string("exact");
                if (order == "call-approximate") return std::string("call-approximate (not for publication)");
                return in.config[params_of<LinkSections>().handoff] == "message"
                           ? std::string("time-approximate, cut board links (not for publication)")
                           : std::string("time-approximate (not for publication)");
            });
    auto adaptive = [](const Config& c) { return c[params_of<RouterParams>().routing] == "adaptive"; };
    reg.sum_counters("adaptive_hops",
                     "Torus hops packets took on an adaptive VC (router.routing = adaptive; sum of "
                     "`*.router.adaptive_hops`).",
                     {"router.adaptive_hops"}, adaptive);
    reg.sum_counters("escape_hops",
                     "Torus hops packets took on the dimension-order escape VC although adaptive ones were offered "
                     "(router.routing = adaptive; sum of `*.router.escape_hops`).",
                     {"router.escape_hops"}, adaptive);
}

std::string Router::contention_warning(const Config& c, const StatRegistry& stats) {
    const std::string& order = c[params_of<RouterParams>().link_order];
    if (order == "exact") return {};
    std::ostringstream os;
    if (order == "time-approximate") {
        os << "vrdmasim: warning: router.link-order = time-approximate: each packet reserved its whole route in its "
              "sender's call, so where packets wanted the same interval of a link the first to call got it; "
              "latencies and throughputs where senders share a link move with the order of same-time events and "
              "are approximate, not for publication; the default, router.link-order = exact, serves every hop at "
              "its own time\n";
        return os.str();
    }
    os << "vrdmasim: warning: router.link-order = call-approximate: links served packets first come, first served "
          "by call, not by simulated time; latencies and throughputs where senders share a link are approximate, "
          "not for publication ("
       << stats.sum_counters("order_inversions") << " packet-hop(s) waited behind a packet that reached the link "
       << "later, " << format_metric(stats.sum_scalars("order_wait"), 4)
       << " us of queueing in all; summary column link_order_inversions); the default, router.link-order = exact, "
          "serves every hop at its own time\n";
    return os.str();
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
    forget_routed();
    if (routes_.size() <= dst) routes_.resize(dst + 1, -1);
    routes_[dst] = static_cast<int>(port);
}

void Router::set_dimension_order(const Topology& topology, unsigned node) {
    forget_routed();
    route_fn_ = nullptr;
    dor_ = true;
    dor_extent_ = {topology.extent(Topology::X), topology.extent(Topology::Y), topology.extent(Topology::Z),
                   topology.fpgas_per_board()};
    const Coord at = topology.coord(node);
    dor_at_ = {at.x, at.y, at.z};
    const unsigned ports = topology.port_count(node);
    in_dim_.assign(ports, Topology::kLocal);
    for (unsigned k = 1; k < ports; ++k) in_dim_[k] = topology.port(node, k).dim;
    dor_base_[Topology::X] = 0;
    dor_base_[Topology::Y] = dor_extent_[0];
    dor_base_[Topology::Z] = dor_extent_[0] + dor_extent_[1];
    dor_base_[3] = dor_extent_[0] + dor_extent_[1] + dor_extent_[2];
    dor_hops_.assign(dor_base_[3] + dor_extent_[3], DorHop{});
    // Each entry is next_hop's answer for a representative destination: this
    // board's coordinates but b in dimension d (FPGA 0: next_hop's route to
    // another board depends only on the first dimension, z, y, x, in which the
    // boards differ, and the coordinate there), or FPGA f of this board.
    // next_hop's VC is (in_dim == dim ? in_vc : 0) + wrap on a ring port,
    // 0 elsewhere: from a local input on VC 0 it is the wrap bit alone.
    auto fill = [&](DorHop& e, const Coord& dst) {
        const Topology::Hop h = topology.next_hop(node, 0, exanet_coord::pack(dst), 0);
        e.port = static_cast<std::int16_t>(h.port);
        if (h.port > 0) {
            e.dim = static_cast<std::int8_t>(topology.port(node, static_cast<unsigned>(h.port)).dim);
            e.wrap = static_cast<std::uint8_t>(h.vc);
        }
    };
    for (int d : {Topology::X, Topology::Y, Topology::Z})
        for (unsigned b = 0; b < dor_extent_[d]; ++b) {
            if (b == dor_at_[d]) continue;   // not a dimension the destination differs in: never looked up
            Coord dst{at.x, at.y, at.z, 0};
            (d == Topology::X ? dst.x : d == Topology::Y ? dst.y : dst.z) = b;
            fill(dor_hops_[dor_base_[d] + b], dst);
        }
    for (unsigned f = 0; f < dor_extent_[3]; ++f) fill(dor_hops_[dor_base_[3] + f], Coord{at.x, at.y, at.z, f});
}

Router::Choice Router::dimension_order_hop(unsigned in_port, std::uint32_t dst_coord, unsigned in_vc) const {
    return dor_hop(in_port, dst_coord, in_vc);
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
                                                "flits", "most flits measured in one input buffer of this VC",
                                                Scalar::Kind::Level));
    }
}

void Router::set_input_link(unsigned port, Link& link) {
    if (inputs_.size() <= port) inputs_.resize(port + 1);
    inputs_[port].link = &link;
}

void Router::set_adaptive(const Topology& topology, unsigned node, unsigned vcs) {
    forget_routed();
    topology_ = &topology;
    node_ = node;
    vcs_ = vcs;
    if (!adaptive_hops_) {
        adaptive_hops_ =
            &ctx_.stats.counter(std::string(name()) + ".adaptive_hops", "",
                                "packets sent on an adaptive VC of a torus link (router.routing = adaptive)");
        escape_hops_ = &ctx_.stats.counter(std::string(name()) + ".escape_hops", "",
                                           "packets sent on a torus link's escape VC (0/1) although adaptive "
                                           "candidates existed (router.routing = adaptive)");
    }
}

void Router::set_output_link(unsigned port, Link* link) {
    forget_routed();
    if (out_links_.size() <= port) out_links_.resize(port + 1, nullptr);
    out_links_[port] = link;
}

Router::Choice Router::choose(const Topology::Options& o, unsigned flits, sc_core::sc_time head, sc_core::sc_time tail,
                              bool& adaptive) const {
    adaptive = false;
    const Choice escape{o.escape.port, static_cast<int>(o.escape.vc)};
    if (o.n_adaptive == 0 || o.escape.port < 0) return escape;
    auto link = [&](int port) -> const Link& {
        if (port < 0 || static_cast<std::size_t>(port) >= out_links_.size() || !out_links_[port])
            throw std::logic_error(std::string(name()) + ": adaptive routing without the link of port " +
                                   std::to_string(port));
        return *out_links_[static_cast<std::size_t>(port)];
    };
    Choice best;
    sc_core::sc_time best_start = max_sim_time();
    for (unsigned i = 0; i < o.n_adaptive; ++i) {
        const Link& l = link(o.adaptive[i].port);
        for (unsigned v = o.adaptive[i].vc; v < vcs_; ++v) {
            const sc_core::sc_time s = l.earliest_start(v, flits, head, tail);
            if (s < best_start) {   // strictly earlier: ties keep the first (z, y, x; lowest VC)
                best_start = s;
                best = Choice{o.adaptive[i].port, static_cast<int>(v)};
            }
        }
    }
    const sc_core::sc_time esc = link(escape.port).earliest_start(static_cast<unsigned>(escape.vc), flits, head, tail);
    // No adaptive candidate can say when it could start (a cut link whose
    // credits are not back yet, board-link.handoff = message): the escape.
    if (esc < best_start || best.port < 0) return escape;
    adaptive = true;
    return best;
}

// Inlined into forward(), its only caller (core/force_inline.hpp).
VRDMASIM_FORCE_INLINE void Router::occupy(unsigned port, unsigned vc, unsigned flits, sc_core::sc_time head,
                                          sc_core::sc_time freed, sc_core::sc_time now) {
    if (port >= inputs_.size() || inputs_[port].flits == 0) return;
    Input& in = inputs_[port];
    if (in.vcs == 1) vc = 0;
    if (vc >= in.vcs) return;   // refused downstream anyway
    if (timed_ || topology_) {
        if (in.shared) occupy_shared(in, vc, flits, head, freed);
        else occupy_timed(in, vc, flits, head, freed, now);
        return;
    }
    InputVc& buf = in.vc[vc];
    auto& held = buf.held;
    // Heads reach one input in order (its link sends one packet after the
    // other), so what is freed by this head is freed for every later one:
    // the packets held are those freed after it, counted by their sum.
    // (Worked on locals: the vector's stores would otherwise make the
    // compiler write them back at every step.)
    std::size_t first = buf.first;
    const std::size_t n = held.size();
    unsigned held_flits = buf.held_flits;
    while (first < n && held[first].first <= head) held_flits -= held[first++].second;
    drop_consumed(held, first);
    const unsigned occ = held_flits + flits;
    // Sorted insertion from the back: usually the latest to be freed.
    if (held.size() == first || held.back().first <= freed) {
        held.emplace_back(freed, flits);
    } else {
        std::size_t at = held.size() - 1;
        while (at > first && held[at - 1].first > freed) --at;
        held.insert(held.begin() + static_cast<std::ptrdiff_t>(at), {freed, flits});
    }
    buf.first = first;
    buf.held_flits = held_flits + flits;
    if (occ > in.flits) overflows_.inc();
    if (occ > occ_max_[vc]) {
        occ_max_[vc] = occ;
        occ_stats_[vc]->set(occ);
    }
}

// The input link's lists: they have every packet this input had before
// this one, freed when this input frees them, and forget nothing this
// input still holds (Link::keep_starts_for_arrivals). Its credits keep what
// is held within the link's buffer, and what is held after the packet's
// start on the link is at most what is freed after it (which the link's
// own query found): when neither could raise the most measured nor
// overflow, there is nothing to measure.
VRDMASIM_FORCE_INLINE void Router::occupy_shared(Input& in, unsigned vc, unsigned flits, sc_core::sc_time head,
                                                 sc_core::sc_time freed) {
    const HeldSpace& held = *in.link->held_space(vc);
    if (in.link_flits <= in.flits &&
        (occ_max_[vc] >= in.link_flits || held.bound_after(head - in.shift) + flits <= occ_max_[vc]))
        return;
    const unsigned occ = held.most_during_shifted(head, freed, in.shift, flits);
    if (occ > in.flits) overflows_.inc();
    if (occ > occ_max_[vc]) {
        occ_max_[vc] = occ;
        occ_stats_[vc]->set(occ);
    }
}

void Router::occupy_timed(Input& in, unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time freed,
                          sc_core::sc_time now) {
    if (in.timed.size() < in.vcs) in.timed.resize(in.vcs);
    HeldSpace& held = in.timed[vc];
    // Nothing can arrive before the time forward() began (the output's call
    // may have waited since: a cut link's credits): what is freed by then is gone.
    held.forget(now);
    // The most flits held at any time while this packet is (from its head
    // to its freeing).
    const unsigned occ = held.most_during(head, freed, flits);
    held.add(head, freed, flits);
    if (occ > in.flits) overflows_.inc();
    if (occ > occ_max_[vc]) {
        occ_max_[vc] = occ;
        occ_stats_[vc]->set(occ);
    }
}

void Router::end_of_elaboration() {
    forget_routed();
    for (std::size_t dst = 0; dst < routes_.size(); ++dst) {
        if (routes_[dst] >= static_cast<int>(out.size()))
            throw std::logic_error(std::string(name()) + ": route to node " + std::to_string(dst) + " uses port " +
                                   std::to_string(routes_[dst]) + ", but only " + std::to_string(out.size()) +
                                   " are bound");
    }
    // Time order: each input fed by a time-ordered link (not a cut link,
    // whose far end calls here, and with this input's VCs) is measured on
    // its lists.
    for (Input& in : inputs_)
        if ((timed_ || topology_) && in.link && in.flits > 0 && in.link->held_space(0) &&
            in.link->params().vcs == in.vcs) {
            in.shared = true;
            in.shift = in.link->arrival_shift();
            in.link_flits = in.link->params().buffer_flits;
            in.link->keep_starts_for_arrivals();
        }
    direct_out_.assign(out.size(), nullptr);
    for (std::size_t p = 0; p < out.size() && p < out_links_.size(); ++p)
        if (out_links_[p] && out[static_cast<int>(p)] == &out_links_[p]->in.get_base_interface())
            direct_out_[p] = out_links_[p];
}

void Router::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    forward(id, gp, gp.get_extension<ExanetPacket>(), delay);
}

Router::Choice Router::route_packet(unsigned in_port, const ExanetPacket& pkt, sc_core::sc_time head,
                                    sc_core::sc_time tail, bool& adaptive, bool& chose) const {
    if (topology_) {
        const Topology::Options o =
            topology_->adaptive_hops(node_, in_port, pkt.header.dst_coord, pkt.footer.src_coord, pkt.header.vc);
        chose = o.n_adaptive > 0 && o.escape.port >= 0;
        return choose(o, pkt.flits(), head, tail, adaptive);
    }
    if (dor_) return dimension_order_hop(in_port, pkt.header.dst_coord, pkt.header.vc);
    if (route_fn_) return route_fn_(in_port, pkt);
    Choice c;
    c.port = route(pkt.dst_node);
    return c;
}

bool Router::routes_asked(unsigned in_port, const ExanetPacket& pkt) const {
    int port;
    if (topology_) {
        port = topology_->adaptive_hops(node_, in_port, pkt.header.dst_coord, pkt.footer.src_coord, pkt.header.vc)
                   .escape.port;
    } else {
        port = dor_        ? dimension_order_hop(in_port, pkt.header.dst_coord, pkt.header.vc).port
               : route_fn_ ? route_fn_(in_port, pkt).port
                           : route(pkt.dst_node);
    }
    const bool ok =
        port >= 0 && port < static_cast<int>(direct_out_.size()) && direct_out_[static_cast<std::size_t>(port)];
    if (ok && !route_fn_) routed_ = Routed{in_port, pkt.dst_node, routed_key(pkt)};
    return ok;
}

void Router::forward(int id, tlm::tlm_generic_payload& gp, ExanetPacket* pkt, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sim_now();
    Choice c;
    bool adaptive = false, chose = false;
    if (pkt && topology_) {
        const Topology::Options o = topology_->adaptive_hops(node_, static_cast<unsigned>(id), pkt->header.dst_coord,
                                                             pkt->footer.src_coord, pkt->header.vc);
        const sc_core::sc_time head = now + delay + pipeline_;
        c = choose(o, pkt->flits(), head, pkt->tail + pipeline_, adaptive);
        chose = o.n_adaptive > 0 && o.escape.port >= 0;
    } else if (pkt) {
        if (dor_) c = dimension_order(static_cast<unsigned>(id), *pkt);
        else if (route_fn_) c = route_fn_(static_cast<unsigned>(id), *pkt);
        else c.port = route(pkt->dst_node);
    }
    // direct_out_ has an entry per bound output (end_of_elaboration): its
    // size, not the socket's size() call.
    if (c.port < 0 || c.port >= static_cast<int>(direct_out_.size())) {
        unroutable_.inc();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    packets_.inc();
    if (chose) (adaptive ? adaptive_hops_ : escape_hops_)->inc();
    const sc_core::sc_time head = now + delay;
    const unsigned in_vc = pkt->header.vc;
    if (c.vc >= 0) pkt->header.vc = static_cast<std::uint8_t>(c.vc);
    delay += pipeline_;
    pkt->tail += pipeline_;
    if (Link* l = direct_out_[static_cast<std::size_t>(c.port)]) l->carry(gp, pkt, delay);
    else out[c.port]->b_transport(gp, delay);
    // `delay` is relative to the call's start, `now` (link.hpp).
    occupy(static_cast<unsigned>(id), in_vc, pkt->flits(), head, now + delay, now);
}

}   // namespace vrdmasim
