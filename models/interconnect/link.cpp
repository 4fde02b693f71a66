#include "models/interconnect/link.hpp"
#include "models/interconnect/hop_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/router.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;

LinkSection::LinkSection(const std::string& section, const std::string& description, const Defaults& d)
    : set(section, description),
      rate(set.rate("rate", d.rate, d.rate_help).range("1Mbps", "10Tbps")),
      lanes(set.integer("lanes", d.lanes, d.lanes_help).range("1", "64")),
      latency(set.time("latency", d.latency, d.latency_help).range("0ps", "1ms")),
      buffer(set.size("buffer", d.buffer, d.buffer_help).range("64B", "16MiB")) {}

// Per-hop latencies from components (docs/references.md, "Links"): the
// serial link as a 64B/66B link layer on the ZynqMP's GTH transceivers, 55
// user_clk cycles from the sender's stream input to the receiver's stream
// output (AMD PG074, Aurora 64B/66B latency on UltraScale+ GTH), user_clk =
// line rate / 66.
LinkSections::LinkSections()
    : link("link", "a link between two FPGAs of one QFDB, one direction",
           {"16Gbps",
            "link rate per direction (*estimate*: one 16 Gb/s lane, as on the "
            "mezzanine's edges; INFN ExaNeSt page)",
            "227ns",
            "head in to head out: 55 cycles of a 64B/66B link layer on GTH transceivers "
            "at 16 Gb/s (user_clk 242.4 MHz; AMD PG074), board traces (< 2 ns) neglected",
            "2KiB",
            "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
            "(*estimate*: the ExaNet switch's own input FIFO holds 40 flits, ExaNet switch "
            "RTL; the link controller's receive buffering is unpublished; 2 KiB covers the "
            "credit round trip at the link rate, docs/references.md)"}),
      mezz_link("mezz-link", "a ring edge between the F1s of two QFDBs of a mezzanine, one direction",
                {"16Gbps", "rate per lane (INFN ExaNeSt page: 16 Gb/s links)", "227ns",
                 "head in to head out: as link.latency, 55 cycles of a 64B/66B link layer at "
                 "16 Gb/s (AMD PG074)",
                 "2KiB",
                 "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
                 "(*estimate*, as link.buffer)",
                 "2", "lanes per edge and direction (INFN ExaNeSt page: 2 links of 16 Gb/s per edge)"}),
      board_link("board-link", "an inter-board torus link between the F1s of two QFDBs, one direction",
                 {"10Gbps", "rate per lane (arXiv 2307.09371: 10 Gb/s links in the built prototype)", "357ns",
                  "head in to head out: 55 cycles of a 64B/66B link layer at 10.3125 Gb/s "
                  "(user_clk 156.25 MHz: 352 ns; AMD PG074) plus 5 ns of cable (*estimate*: 1 m "
                  "at about 5 ns/m)",
                  "2KiB",
                  "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
                  "(*estimate*, as link.buffer)",
                  "1", "lanes per direction (arXiv 2307.09371: one 10 Gb/s link)"}),
      ni("ni", "the network interface path between the PLDMA and its router, one direction",
         {"20Gbps",
          "on-chip datapath: 128 bits at 156.25 MHz (*estimate*: the 64B/66B user clock "
          "at 10 Gb/s, AMD PG074)",
          "20ns", "head in to head out (*estimate*)", "640B",
          "buffer at the receiving side, in bytes of 128-bit flits: 40 flits, the ExaNet "
          "switch's input FIFO per VC, sized for two packets of the largest size, 18 flits "
          "(ExaNet switch RTL)"}),
      handoff(board_link.set.choice(
          "handoff", "call", {"call", "message"},
          "how a packet crosses a link between two QFDBs (`board-link` on a torus, `mezz-link` on a mezzanine; "
          "*this simulator's modelling choice*): call = the link calls the far router inside the sender's call, "
          "and learns at once when the far buffer frees the packet's space (the original model); message = as "
          "a cut link of a partitioned run (docs/scaling.md): the link posts the packet to the far end, whose "
          "thread hands it to the far router at the head's arrival and sends back a credit stamped a latency "
          "after the space is freed (*estimate*: credits take the link's latency back), which the link counts "
          "only from that stamp on; a sender that needs a credit not delivered yet waits for it "
          "(models/interconnect/README.md \"Cut links\")")) {}

void Link::declare_params(ParamRegistry& reg) {
    const LinkSections& s = params_of<LinkSections>();
    for (const LinkSection* l : {&s.link, &s.mezz_link, &s.board_link, &s.ni}) reg.add(l->set);
}

LinkParams Link::params_from(const Config& cfg, const LinkSection& section) {
    LinkParams p;
    p.lanes = static_cast<unsigned>(cfg[section.lanes]);
    p.rate_bps = cfg[section.rate] * p.lanes;
    // Simulated time has a resolution of 1 ps: a flit time that rounds by
    // more than 1 % would make every figure of the link wrong (at 320 Tb/s a
    // flit took 0 ps). Refused up front, naming the rate.
    const double flit_ps = kFlitBytes * 8 * 1e12 / p.rate_bps;
    const double rounded = static_cast<double>(std::llround(flit_ps));
    if (std::abs(rounded - flit_ps) > 0.01 * flit_ps) {
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%s = %g Gb/s (%s x %u lanes): a 128-bit flit takes %.3g ps there, which simulated time "
                      "(1 ps resolution) would round to %.0f ps, %.0f %% off; rates up to 2.56 Tb/s per direction "
                      "(or whose flit time is a whole number of picoseconds, such as 64 Tb/s) are modelled exactly",
                      section.rate.name().c_str(), p.rate_bps / 1e9, section.rate.name().c_str(), p.lanes, flit_ps,
                      rounded, std::abs(rounded - flit_ps) / flit_ps * 100);
        throw ConfigError(buf);
    }
    p.latency = cfg[section.latency];
    p.buffer_flits = static_cast<unsigned>(cfg[section.buffer] / kFlitBytes);
    return p;
}

sc_dt::uint64 Link::flit_ps_of(const LinkParams& p) {
    return static_cast<sc_dt::uint64>(std::llround(kFlitBytes * 8 * 1e12 / p.rate_bps));
}

Link::Link(sc_core::sc_module_name name, const SimContext& ctx, const LinkParams& p, const std::string& group,
           const std::string& track)
    : sc_module(name),
      in("in"),
      out("out"),
      p_(p),
      flit_ps_(flit_ps_of(p)),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, track)),
      packets_(ctx.stats.counter(std::string(this->name()) + ".packets", "", "packets carried")),
      flits_(ctx.stats.counter(std::string(this->name()) + ".flits", "", "flits carried (header, payload and footer)")),
      payload_bytes_(ctx.stats.counter(std::string(this->name()) + ".payload_bytes", "B", "payload bytes carried")),
      transactions_(ctx.stats.counter(std::string(this->name()) + ".transactions", "", "packet hops served")),
      busy_us_(ctx.stats.scalar(std::string(this->name()) + ".busy_time", "us", "time spent serialising flits",
                                Scalar::Kind::Sum)),
      credit_stall_us_(ctx.stats.scalar(std::string(this->name()) + ".credit_stall_time", "us",
                                        "time packets waited for space in the far-end buffer", Scalar::Kind::Sum)),
      queue_ns_(ctx.stats.histogram(std::string(this->name()) + ".queue_delay", "ns", "head ready to first flit sent")),
      vc_errors_(ctx.stats.counter(std::string(this->name()) + ".vc_errors", "",
                                   "packets refused for a VC the far end has no buffer for")) {
    flit_time_ = sc_time::from_value(flit_ps_);
    stats_ = &ctx.stats;
    if (p_.vcs < 1) throw std::invalid_argument(std::string(this->name()) + ": a link needs at least one VC");
    vcs_.resize(p_.vcs);
    if (p_.exact && p_.time_order)
        throw std::invalid_argument(std::string(this->name()) +
                                    ": a link is served in exact time order or in time order");
    // Exact time order: a cut link is only a far end reached by messages
    // (use_hops, cut_hops); no line, no ledger.
    const bool handoff = p_.handoff && !p_.exact;
    if (p_.time_order) (handoff ? cut_timed_.resize(p_.vcs) : timed_.resize(p_.vcs));
    if ((p_.may_wait && !p_.exact) || handoff) {
        // One line, a cut link's one per VC (cut_link.hpp, Turnstile).
        line_stats_ = std::make_unique<LineStats>(this->name(), ctx);
        for (unsigned v = 0; v < (handoff ? p_.vcs : 1u); ++v)
            lines_.push_back(std::make_unique<Turnstile>(*line_stats_));
        lined_ = true;
        // A call that waited may search from before a later call's present:
        // the calendar and the held space forget as each call says.
        wire_.keep_every_reservation();
        for (HeldSpace& h : timed_) h.forget_every_time();
    }
    if (handoff) {
        cut_ = std::make_unique<CutLinkNear>(this->name(), p_.number, ctx, p_.vcs,
                                             [this](const CreditMessage& c) { return record_credit(c); });
        nowhere_ = std::make_unique<tlm_utils::passthrough_target_socket<Link>>("nowhere");
        nowhere_->register_b_transport(this, &Link::nowhere);
        if (!p_.far_elsewhere) {
            cut_far_ = std::make_unique<CutLinkEnd>("far", this->name(), p_.number, ctx, p_.vcs, p_.latency);
            cut_->connect(cut_far_->far());
            cut_far_->far().reply_to(*cut_);
        }
    } else if (p_.far_elsewhere && p_.exact) {
        nowhere_ = std::make_unique<tlm_utils::passthrough_target_socket<Link>>("nowhere");
        nowhere_->register_b_transport(this, &Link::nowhere);
    } else if (p_.far_elsewhere) {
        throw std::invalid_argument(std::string(this->name()) + ": only a cut link can have its far end elsewhere");
    }
    timed_alone_ = p_.time_order && !lined_;
    for (unsigned v = 0; v < p_.vcs; ++v)
        vcs_[v].hwm_stat =
            &ctx.stats.scalar(std::string(this->name()) + ".vc" + std::to_string(v) + ".buffer_hwm", "flits",
                              "most flits held in this VC's far-end buffer (credit count)", Scalar::Kind::Level);
    in.register_b_transport(this, &Link::b_transport);
}

void Link::trace_span(const ExanetPacket& pkt, sc_time ready, sc_time start, sc_time end, bool with_vc) {
    // In exact time order the span is the link's record, not the hop
    // queue's process's, which serves every link of its rank, whichever
    // event's handler served it (its own Serve event, or an arrival that
    // found it free: which one depends on what else a rank's queue holds
    // at that time). Its spans are the only records the queue's handlers make.
    const Tracer::ActingAs as(hop_ ? name() : Tracer::acting());
    std::vector<std::pair<std::string, std::string>> args = {
        // Block I/O packets (remote_block) carry their own request numbers.
        {"transfer", pkt.header.type == PacketType::BlockRequest || pkt.header.type == PacketType::BlockData
                         ? Tracer::json_number(pkt.transfer)
                         : Tracer::json_string(transfer_name(pkt.transfer))},
        {"seq", Tracer::json_number(static_cast<std::uint64_t>(pkt.footer.seq))},
        {"bytes", Tracer::json_number(static_cast<std::uint64_t>(pkt.header.size))},
        {"ready", Tracer::json_us(ready)}};
    if (with_vc) args.emplace_back("vc", Tracer::json_number(static_cast<std::uint64_t>(pkt.header.vc)));
    tracer_.span(track_, pkt.header.type == PacketType::RdmaWrite ? "data" : "ctrl", start, end, args);
}

void Link::connect(Router& router) {
    if (cut_far_) {
        // A cut link: its far end calls the router, by its own socket.
        out.bind(*nowhere_);
        cut_far_->connect(router);
        return;
    }
    out.bind(router.in);
    // The binding just made is the router's last input: the size counts
    // the binder made when the router registered its callback, which the
    // first binding takes.
    far_ = &router;
    far_port_ = static_cast<int>(router.in.size()) - 1;
    router.set_input_link(static_cast<unsigned>(far_port_), *this);
}

void Link::connect_far(PacketPort& far) {
    if (!p_.far_elsewhere)
        throw std::logic_error(std::string(name()) + ": connect_far on a link whose far end is here");
    out.bind(*nowhere_);
    if (p_.exact) hop_cut_ = std::make_unique<HopCutNear>(*this, p_.number, far);
    else cut_->connect(far);
}

CreditPort& Link::cut_near_end() {
    if (hop_cut_) return *hop_cut_;
    if (!cut_) throw std::logic_error(std::string(name()) + ": not a cut link");
    return *cut_;
}

void Link::nowhere(tlm::tlm_generic_payload&, sc_time&) {
    throw std::logic_error(std::string(name()) +
                           ": called through its socket, although its far end is on another rank");
}

void Link::connect(tlm::tlm_target_socket<>& socket, PacketTarget& sink) {
    if (cut_far_) {
        out.bind(*nowhere_);
        cut_far_->connect(socket, sink);
        return;
    }
    out.bind(socket);
    sink_ = &sink;
}

void Link::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    auto* pkt = gp.get_extension<ExanetPacket>();
    if (!pkt) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    carry(gp, pkt, delay);
}

// The packet to the far end, `d` after this call: its router's port, a
// sink, or the socket.
VRDMASIM_FORCE_INLINE void Link::hand_over(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& d) {
    if (far_) far_->forward(far_port_, gp, &pkt, d);
    else if (sink_) sink_->accept(gp, pkt, d);
    else out->b_transport(gp, d);
}

// carry()'s reservation in call order. Lined: a link of a system with cut
// links (lines_), whose calls may wait; otherwise none of that is compiled
// in, and this is the original model's code, inlined into carry().
template <bool Lined>
VRDMASIM_FORCE_INLINE void Link::in_call_order(tlm::tlm_generic_payload& gp, ExanetPacket* pkt, sc_time& delay,
                                               sc_time now, sc_time head_in, unsigned flits, unsigned vc) {
    VcBuffer& buf = vcs_[vc];
    // The link's turn, and on a cut link the credits the loop below uses
    // are delivered first.
    Turnstile* const line = Lined ? line_of(vc) : nullptr;
    if constexpr (Lined) {
        line->enter();
        if (cut_) await_credits(*line, vc, buf, flits);
    }

    // Credits: wait until the VC's far-end buffer has room for the whole
    // packet (virtual cut-through). Entries leave in FIFO order.
    sc_time credit_ok = head_in;
    while (buf.held_flits + flits > p_.buffer_flits) {
        credit_ok = max_time(credit_ok, buf.held.front().freed);
        buf.held_flits -= buf.held.front().flits;
        buf.held.pop_front();
    }
    // Entries already free by the time this packet starts no longer count
    // (a cut link's: those whose credit is delivered).
    const sc_time ready = max_time(head_in, busy_until_);
    if (head_in < last_head_ && busy_until_ > head_in) inverted(busy_until_ - head_in);
    last_head_ = head_in;
    sc_time start = max_time(ready, credit_ok);
    sc_time known = start;
    if constexpr (Lined) {
        if (line->waited()) start = turn_start(*line, start);
        known = cut_ ? std::min(start, sim_now()) : start;
    }
    while (!buf.held.empty() && buf.held.front().freed <= known) {
        buf.held_flits -= buf.held.front().flits;
        buf.held.pop_front();
    }
    buf.raise_hwm(buf.held_flits + flits);

    const sc_time ser = serialise_last(flits);
    // The link cannot send the tail before it has arrived from upstream.
    const sc_time end = max_time(start + ser, pkt->tail + flit_time_);
    busy_until_ = end;

    queue_ns_.add(to_ns(start - head_in));
    if (credit_ok > ready) credit_stall_us_.add(to_us(credit_ok - ready));
    busy_us_.add(to_us(end - start));
    packets_.inc();
    flits_.inc(flits);
    payload_bytes_.inc(pkt->header.size);

    if (tracer_.enabled()) trace_span(*pkt, head_in, start, end, false);

    // Hand the packet to the far end: head after one flit and the wire.
    pkt->tail = end + p_.latency;
    pkt->wire = end - start;
    if (pkt->hops == 0) pkt->injected = start;
    pkt->hops++;
    if constexpr (Lined) {
        if (cut_) {
            post_cut(*line, gp, *pkt, vc, flits, start, false);
            delay = end - now;
            return;
        }
    }
    // The far end's delay is relative to the time of this call (after a
    // wait, later than `now`); the returned one to `now`.
    const sc_time t = Lined ? sim_now() : now;
    sc_time d = (start + flit_time_ + p_.latency) - t;
    hand_over(gp, *pkt, d);
    // The far end says when the packet's space in its buffer is free again.
    if constexpr (Lined) buf.held.insert(buf.held.end(), Held(t + d, flits));
    else buf.held.emplace_back(t + d, flits);   // one instantiation, inlined: the original model's path
    buf.held_flits += flits;
    if constexpr (Lined) line->leave();

    delay = end - now;
}

// carry() in time order, out of its frame (inlined, it would make the
// compiler leave call order's statistics out of line).
template <bool Lined>
VRDMASIM_FORCE_INLINE void Link::transport_timed(tlm::tlm_generic_payload& gp, sc_time& delay, ExanetPacket& pkt,
                                                 unsigned vc) {
    const sc_time now = sim_now();
    const sc_time head_in = now + delay;
    const unsigned flits = pkt.flits();
    // Every later call's head is at or after now: older state is gone.
    wire_.forget(now);
    Turnstile* const line = Lined ? line_of(vc) : nullptr;
    if constexpr (Lined) line->enter();
    sc_time credit_ok;
    HeldSpace::Cursor cursor;
    if (Lined && cut_) {
        std::vector<Timed>& list = cut_timed_[vc];
        std::size_t kept = 0;
        for (std::size_t i = 0; i < list.size(); ++i)
            if (list[i].freed > now) list[kept++] = list[i];
        list.resize(kept);
        credit_ok = credit_delivered(*line, vc, list, flits, head_in);
    } else {
        timed_[vc].forget(now, held_shift_);
        credit_ok = timed_[vc].fits_from(head_in, flits, p_.buffer_flits, cursor);
    }
    // The wire's earliest gap from the head; from the credits' time, if it
    // is later (from any time between the head and that gap it is that
    // gap).
    const sc_time ser = serialise_last(flits), min_end = pkt.tail + flit_time_;
    const sc_time wire_ok = wire_.gap_from(head_in, ser, min_end);
    sc_time start = credit_ok > wire_ok ? wire_.gap_from(credit_ok, ser, min_end) : wire_ok;
    // A call that waited: not before its turn came (it fits then too: a
    // buffer's occupancy from a time on never grows with the time).
    if constexpr (Lined)
        if (line->waited() && start < sim_now()) start = gap_from(turn_start(*line, start), flits, pkt.tail);
    // A cut link counts the packets whose credit is not delivered as held.
    VcBuffer& buf = vcs_[vc];
    if (Lined && cut_) {
        buf.raise_hwm(flits + known_view(cut_timed_[vc], sim_now(), false).most_from(start));
    } else {
        // (Not if it cannot rise: the credits keep the buffer within its
        // size, and what is held from the credits' time on is at most what
        // is freed after it.)
        if (buf.hwm < p_.buffer_flits && cursor.after + flits > buf.hwm)
            buf.raise_hwm(flits + timed_[vc].most_from(start, cursor));
        timed_[vc].leave(cursor);   // the far router's bound (Router::occupy_shared)
    }
    const sc_time end = max_time(start + ser, min_end);
    wire_.reserve(start, end);

    // Credit stall: the wire had a gap from the head on (its own
    // reservation counted) that the credits came after. That is wire_ok
    // unless this packet's reservation took it: it starts before wire_ok's
    // gap ends, and the gap from the head is then after it, after the
    // credits.
    if (credit_ok > wire_ok && start >= max_time(wire_ok + ser, min_end))
        credit_stall_us_.add(to_us(credit_ok - wire_ok));
    served(pkt, flits, head_in, start, end);
    if constexpr (Lined) {
        if (cut_) {
            post_cut(*line, gp, pkt, vc, flits, start, true);
            delay = end - now;
            return;
        }
    }
    const sc_time t = Lined ? sim_now() : now;   // as in_call_order()
    sc_time d = (start + flit_time_ + p_.latency) - t;
    hand_over(gp, pkt, d);
    timed_[vc].add(start, t + d, flits, cursor);
    if constexpr (Lined) line->leave();
    delay = end - now;
}

// carry() in time order on a link without a line: the same checks, then
// transport_timed, in a frame of its own that carry() jumps to first.
__attribute__((noinline)) void Link::carry_timed(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay) {
    transactions_.inc();
    if (pkt.flits() > p_.buffer_flits) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    const unsigned vc = p_.vcs == 1 ? 0u : pkt.header.vc;
    if (vc >= p_.vcs) {
        vc_errors_.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    transport_timed<false>(gp, delay, pkt, vc);
}

void Link::carry_untimed(tlm::tlm_generic_payload& gp, ExanetPacket* pkt, sc_time& delay) {
    if (hop_) {   // exact time order (hop_link.cpp)
        inject(gp, *pkt, delay);
        return;
    }
    transactions_.inc();
    const sc_time now = sim_now();
    const sc_time head_in = now + delay;
    const unsigned flits = pkt->flits();
    if (flits > p_.buffer_flits) {
        // A packet larger than the far-end buffer could never be accepted.
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }

    // One buffer per VC at the far end; a one-VC link shares it among all.
    const unsigned vc = p_.vcs == 1 ? 0u : pkt->header.vc;
    if (vc >= p_.vcs) {
        vc_errors_.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    // A system with cut links: its calls may wait, and take turns (Lined).
    if (p_.time_order) {   // (without a line: carry_timed)
        lined_time_order(gp, delay, *pkt, vc);
        return;
    }
    if (!lined_) in_call_order<false>(gp, pkt, delay, now, head_in, flits, vc);
    else lined_call_order(gp, pkt, delay, now, head_in, flits, vc);
}

__attribute__((noinline)) void Link::inverted(sc_time waited) {
    if (!inversions_) {
        inversions_ = &stats_->counter(std::string(name()) + ".order_inversions", "",
                                       "packets that waited for the wire behind a packet that reached the link later "
                                       "in simulated time (router.link-order = call-approximate)");
        inversion_wait_us_ = &stats_->scalar(std::string(name()) + ".order_wait", "us",
                                             "queueing of those packets for the wire", Scalar::Kind::Sum);
    }
    inversions_->inc();
    inversion_wait_us_->add(to_us(waited));
}

__attribute__((noinline)) void Link::lined_time_order(tlm::tlm_generic_payload& gp, sc_time& delay, ExanetPacket& pkt,
                                                      unsigned vc) {
    transport_timed<true>(gp, delay, pkt, vc);
}

// Out of carry()'s frame: the original model's path stays as it was.
__attribute__((noinline)) void Link::lined_call_order(tlm::tlm_generic_payload& gp, ExanetPacket* pkt, sc_time& delay,
                                                      sc_time now, sc_time head_in, unsigned flits, unsigned vc) {
    in_call_order<true>(gp, pkt, delay, now, head_in, flits, vc);
}

}   // namespace vrdmasim

namespace vrdmasim {

sc_time Link::earliest_start(unsigned vc, unsigned flits, sc_time head, sc_time tail) const {
    if (p_.vcs == 1) vc = 0;
    if (vc >= p_.vcs || flits > p_.buffer_flits) return max_sim_time();
    if (hop_) return earliest_exact(vc, flits, head);
    if (!p_.time_order) {
        // Call order: as b_transport would compute it.
        const VcBuffer& buf = vcs_[vc];
        sc_time credit_ok = head;
        unsigned held = buf.held_flits;
        for (const auto& h : buf.held) {
            if (held + flits <= p_.buffer_flits) break;
            // A cut link's credit not delivered yet: not before it is.
            credit_ok = max_time(credit_ok, cut_ && h.freed > sim_now() ? max_sim_time() : h.freed);
            held -= h.flits;
        }
        return max_time(max_time(head, busy_until_), credit_ok);
    }
    // A cut link's: by the credits delivered (what the near end knows).
    const HeldSpace& held = cut_ ? known_view(cut_timed_[vc], sim_now(), false) : timed_[vc];
    return gap_from(held.fits_from(head, flits, p_.buffer_flits), flits, tail);
}

// ---------------------------------------------------------------- cut links

sc_time Link::turn_start(Turnstile& line, sc_time start) {
    const sc_time t = sim_now();
    if (start >= t) return start;
    line.moved_head();
    return t;
}

void Link::await_credits(Turnstile& line, unsigned vc, VcBuffer& buf, unsigned flits) {
    // The entries carry()'s credit loop pops: until the packet fits.
    unsigned held = buf.held_flits;
    for (std::size_t i = 0; held + flits > p_.buffer_flits; ++i) {
        while (buf.held[i].freed > sim_now()) {
            if (buf.held[i].freed == max_sim_time()) cut_->wait_for_credit(line, vc, buf.held[i].seq);
            else cut_->wait_for(line, vc, buf.held[i].freed, false);
        }
        held -= buf.held[i].flits;
    }
}

const HeldSpace& Link::known_view(const std::vector<Timed>& held, sc_time now, bool lower) const {
    if (!view_) view_ = std::make_unique<HeldSpace>();
    view_->reset();
    for (const Timed& h : held) {
        sc_time freed = h.freed;
        // Not delivered: its stamp is after now, and at least a latency
        // after its tail reached the far end (start + n flits + latency).
        if (freed > now)
            freed = lower ? max_time(now + sc_time::from_value(1), h.in + serialise(h.flits) + p_.latency + p_.latency)
                          : max_sim_time();
        view_->add(h.in, freed, h.flits);
    }
    return *view_;
}

sc_time Link::credit_delivered(Turnstile& line, unsigned vc, const std::vector<Timed>& held, unsigned flits,
                               sc_time head) {
    const auto credit_from = [&](const HeldSpace& v) { return v.fits_from(head, flits, p_.buffer_flits); };
    // credit_from() is monotonic in every packet's freeing time: with the
    // undelivered ones freed never (hi) and as early as they can be (lo),
    // the answer lies in [lo, hi]. Equal: it is the answer.
    for (;;) {
        const sc_time now = sim_now();
        const sc_time hi = credit_from(known_view(held, now, false));
        if (hi == head) return hi;
        sc_time next = max_sim_time();
        bool unknown = false;
        for (const Timed& h : held)
            if (h.freed > now) {
                unknown = true;
                next = std::min(next, h.freed);   // the next posted stamp (sc_max_time: none posted)
            }
        if (!unknown) return hi;
        if (credit_from(known_view(held, now, true)) == hi) return hi;
        cut_->wait_for(line, vc, next, true);
    }
}

void Link::post_cut(Turnstile& line, tlm::tlm_generic_payload& gp, ExanetPacket& pkt, unsigned vc, unsigned flits,
                    sc_time start, bool timed) {
    const std::uint64_t seq = cut_->post(gp, pkt, vc, flits, start + flit_time_ + p_.latency, pkt.tail);
    const auto seq32 = static_cast<std::uint32_t>(seq);
    if (timed) {
        cut_timed_[vc].push_back(Timed{start, max_sim_time(), flits, seq32});
    } else {
        VcBuffer& buf = vcs_[vc];
        buf.held.insert(buf.held.end(), Held{max_sim_time(), flits, seq32});
        buf.held_flits += flits;
    }
    // The link took it; what the far end does with it comes back as a credit.
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    line.leave();
}

bool Link::record_credit(const CreditMessage& c) {
    const auto seq = static_cast<std::uint32_t>(c.seq);
    if (c.vc >= p_.vcs) return false;
    if (p_.time_order) {
        for (Timed& h : cut_timed_[c.vc])
            if (h.seq == seq && h.freed == max_sim_time()) {
                h.freed = c.at;
                return true;
            }
        return false;
    }
    for (auto it = vcs_[c.vc].held.begin(); it != vcs_[c.vc].held.end(); ++it)
        if (it->seq == seq && it->freed == max_sim_time()) {
            it->freed = c.at;
            return true;
        }
    return false;
}

std::size_t Link::credits_outstanding() const {
    if (!cut_) return 0;
    std::size_t n = 0;
    for (const VcBuffer& b : vcs_)
        for (const Held& h : b.held) n += h.freed == max_sim_time();
    for (const auto& t : cut_timed_)
        for (const Timed& h : t) n += h.freed == max_sim_time();
    return n;
}

}   // namespace vrdmasim
