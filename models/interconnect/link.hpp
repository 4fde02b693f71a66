// Link: one direction of a serial link, together with the input buffer at its
// far end, whose free space it tracks with credits. See README.md.
//
// Transport convention for packets (Link, Router and network interfaces):
//   on entry, `delay` is when the packet's head is available at this hop
//   (relative to sc_time_stamp()), and the extension's `tail` is when its
//   tail is (absolute);
//   on return, `delay` is when the packet's tail has left this hop's input
//   buffer, freeing its space: the time the upstream hop gets its credit back,
//   relative to the time at the call's start (sc_time_stamp() then: a call
//   that waited inside returns a delay from where it began, so that a caller
//   that read the time once, at its own start, adds it to that).
// With board-link.handoff = call all of this is computed in one nested call
// chain, without wait(): a packet costs one call per hop. A cut link
// (handoff = message, cut_link.hpp) ends the chain: its far end carries on in
// a thread of its own at the head's arrival, and a sender may wait for its
// credits.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "src/core/lazy_deque.hpp"
#include "models/interconnect/cut_link.hpp"
#include "models/interconnect/held_space.hpp"
#include "models/interconnect/hop_cut.hpp"
#include "models/interconnect/hop_queue.hpp"
#include "models/interconnect/wire_calendar.hpp"
#include "models/interconnect/packet_target.hpp"

namespace vrdmasim {

class Router;

struct LinkParams {
    double rate_bps = 16e9;   // per direction, all lanes together (rate per lane x lanes)
    sc_core::sc_time latency;   // head in at one end -> head out at the other
    unsigned buffer_flits = 64;   // input buffer at the far end, per VC
    unsigned vcs = 1;   // VC buffers at the far end (1: one buffer shared by every VC)
    unsigned lanes = 1;   // informational: rate_bps already includes them
    // Reserve the wire in time order (router.routing = adaptive): a packet
    // takes the earliest idle interval at or after its head, even before
    // packets reserved by earlier calls, so packets that took different
    // paths can overtake; credits count every packet held at any time from
    // the new one's start on. false: first come, first served by call order.
    bool time_order = false;
    // A cut link (board-link.handoff = message; cut_link.hpp): the far end
    // is reached by messages, not by a call. `number` names it in them.
    bool handoff = false;
    std::uint32_t number = 0;
    // A cut link whose far end is on another rank of a partitioned run
    // (src/sim/parallel/cut_mail.hpp): the Link is its near end only, and posts its
    // packets to the port connect_far() gives it.
    bool far_elsewhere = false;
    // A call may wait inside (a system with cut links: for a credit further
    // on): callers that come meanwhile wait their turn (cut_link.hpp,
    // Turnstile). A cut link has its line anyway.
    bool may_wait = false;
    // Served in exact time order (use_hops): no line, and a cut link
    // (handoff, far_elsewhere) is a link of its own order whose far end is
    // reached by messages (cut_hops(), hop_cut.hpp), not cut_link.hpp's.
    bool exact = false;
};

// The parameters of one class of link (rate per lane, lanes, latency,
// buffer), each class its own section with its own defaults and sources.
struct LinkSection {
    struct Defaults {
        std::string rate, rate_help, latency, latency_help, buffer, buffer_help;
        std::string lanes = "1", lanes_help = "serial lanes per direction, each at `rate`";
    };
    LinkSection(const std::string& section, const std::string& description, const Defaults& d);
    ParamSet set;
    RateParam rate;
    IntParam lanes;
    TimeParam latency;
    SizeParam buffer;
};

// The classes of link of an ExaNeSt system, declared in link.cpp; read
// through params_of<LinkSections>().
struct LinkSections {
    LinkSections();
    LinkSection link;   // [link]: between two FPGAs of one QFDB
    LinkSection mezz_link;   // [mezz-link]: a mezzanine ring edge
    LinkSection board_link;   // [board-link]: an inter-board torus link
    LinkSection ni;   // [ni]: the PLDMA's path to its router
    // board-link.handoff: call or message (every link between two boards,
    // a mezzanine's ring edges included, is then a cut link).
    EnumParam handoff;
};

class Link : public sc_core::sc_module, public PacketTarget {
public:
    // A passthrough socket, as every b_transport target of the node: a
    // simple_target_socket also makes three sc_events and a payload event
    // queue per socket for nb/b conversions nothing here uses.
    tlm_utils::passthrough_target_socket<Link> in;
    tlm_utils::simple_initiator_socket<Link> out;

    // Declares the sections of LinkSections.
    static void declare_params(ParamRegistry& reg);
    // rate_bps = rate x lanes; vcs = 1 (the builder sets the router's VCs).
    static LinkParams params_from(const Config& cfg, const LinkSection& section);

    Link(sc_core::sc_module_name name, const SimContext& ctx, const LinkParams& p, const std::string& group,
         const std::string& track);
    ~Link() override;

    // Binds `out` to the router's input and calls the router directly (the
    // same call as through the socket, without its indirections) on the
    // input index this binding gets.
    void connect(Router& router);
    // Binds `out` to a network interface's packet input `socket` and calls
    // `sink` (its owner) directly.
    void connect(tlm::tlm_target_socket<>& socket, PacketTarget& sink);

    // A cut link whose far end is elsewhere (far_elsewhere): its packets go
    // to `far`, its credits come to cut_near_end() (CutLinkNear::post).
    // In exact time order the messages are hop_cut.hpp's.
    void connect_far(PacketPort& far);
    CreditPort& cut_near_end();

    // The target of `in`.
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // b_transport for a payload whose ExanetPacket the caller has already
    // found (a router's direct call, set_output_link): the extension is
    // not looked up again.
    void carry(tlm::tlm_generic_payload& gp, class ExanetPacket* pkt, sc_core::sc_time& delay) {
        // Time order without a line (no cut link in the system): a path
        // of its own, called directly.
        if (timed_alone_) carry_timed(gp, *pkt, delay);
        else carry_untimed(gp, pkt, delay);
    }
    // PacketTarget: carry(), for the network interface behind `in`
    // (Pldma::connect).
    void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay) override {
        carry(gp, &pkt, delay);
    }
    // In exact time order a full queue's packet is kept and `src` goes on
    // from the link's context (inject()); else carry().
    bool accept_from(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay,
                     PacketTrain& src) override {
        if (hop_) return inject(gp, pkt, delay, &src);
        carry(gp, &pkt, delay);
        return false;
    }

    // Exact time order (router.link-order = exact; hop_link.cpp, README.md
    // *Exact time order*): every hop an event of `q`. Called once the link
    // is connected, before the simulation starts. A network interface's
    // carry() then copies its packet in and returns at once (see inject()).
    void use_hops(HopQueue& q) { use_hops(q, q.enrol()); }
    // The same, as link `number` of the events' keys (HopQueue::enrol).
    void use_hops(HopQueue& q, std::uint32_t number);
    bool exact() const { return hop_ != nullptr; }
    // Exact, a board link with board-link.handoff = message in one process
    // (after use_hops): its far end here, reached by messages all the same
    // (hop_cut.hpp), as connect_far() reaches one on another rank.
    void cut_hops_here();
    // Exact: a packet its far router routed here, ready to start from
    // hp.ready: now, as it arrives (`arriving`), or later, its arrival made
    // ahead (arrive_ahead: counted there, served by a Serve event).
    void enqueue(HopPacket& hp, bool arriving);
    // Exact: the space VC `vc` of the far buffer held for `flits` is known
    // free here from `at` (its tail's leaving there plus the latency back).
    void give_credit(unsigned vc, unsigned flits, sc_core::sc_time at);
    // The same, inline where a link serves (hop_link.cpp).
    void give_credit_inline(unsigned vc, unsigned flits, sc_core::sc_time at);
    // Its hop events (Hops::handler): arrivals at the far end, serving the wire.
    void on_hop_event(std::uint64_t key, void* what);
    // Exact: packets waiting to start on the link (or kept for a train) or
    // to be taken by the network interface at its far end, a delivery
    // under way, and credits
    // not back (at the end of a run: none).
    std::size_t exact_waiting() const;
    // The run ends at `t`: the far router's input counts the arrivals made
    // ahead that were due by then (Link::settle_ahead).
    void settle_ahead_until(sc_core::sc_time t);
    std::size_t exact_credits_out() const;
    std::uint64_t exact_refused() const;

    sc_core::sc_time flit_time() const { return flit_time_; }
    // The flit time of a link of parameters `p`: 128 bits at its rate,
    // rounded to the picosecond (what flit_time() is).
    static sc_dt::uint64 flit_ps_of(const LinkParams& p);
    const LinkParams& params() const { return p_; }
    // Most flits the link has counted in VC `vc`'s far-end buffer (the new
    // packet included): never above params().buffer_flits.
    unsigned buffer_hwm(unsigned vc) const;
    // Time spent serialising packets so far (the busy_time statistic), in us.
    double busy_us() const { return busy_us_.value(); }
    // When a packet of `flits` on VC `vc` whose head is here at `head` (tail
    // at `tail`, absolute) could start, given the wire's reservations and
    // the VC's credits, without reserving anything (adaptive routing's
    // choice). A VC the far end has no buffer for: sc_max_time().
    sc_core::sc_time earliest_start(unsigned vc, unsigned flits, sc_core::sc_time head, sc_core::sc_time tail) const;
    // Packets carried so far.
    std::uint64_t packets() const { return packets_.value(); }
    // Time order, not a cut link: the space VC `vc`'s far-end buffer holds
    // over time (each packet from its start on the link to its freeing),
    // which the far router's input holds from a flit and the latency
    // later, arrival_shift(), on (Router::set_input_link reads it instead
    // of keeping a copy: keep_starts_for_arrivals() then). nullptr: none.
    // Not on a link whose calls may wait (a system with cut links): a call
    // that waited may count with what a later call's forget left, and the
    // far router's input must not see that.
    const HeldSpace* held_space(unsigned vc) const { return !lined_ && vc < timed_.size() ? &timed_[vc] : nullptr; }
    sc_core::sc_time arrival_shift() const { return flit_time_ + p_.latency; }
    void keep_starts_for_arrivals() { held_shift_ = arrival_shift(); }
    // A cut link's two ends (handoff); nullptr on other links.
    const CutLinkNear* cut_near() const { return cut_.get(); }
    const CutLinkFar* cut_far() const { return cut_far_ ? &cut_far_->far() : nullptr; }
    // Packets a cut link has counted in its far-end buffers whose credit
    // has not been posted back yet (0 on other links).
    std::size_t credits_outstanding() const;

private:
    // flit_time_ x flits, computed inline (sc_time::from_value is a call
    // into the SystemC library on every packet): exact, as the product is
    // far below 2^53 ps.
    sc_core::sc_time serialise(unsigned flits) const { return flit_time_ * static_cast<double>(flits); }
    // The same, remembered for the last packet's length (packets come in
    // runs of one size): a compare instead of the floating-point multiply.
    sc_core::sc_time serialise_last(unsigned flits) {
        if (flits != ser_flits_) {
            ser_time_ = serialise(flits);
            ser_flits_ = flits;
        }
        return ser_time_;
    }
    // A packet of `flits`, ready here at `ready`, served on the wire over
    // [start, end) in time order (either kind): the statistics, the trace's
    // span and the packet's own record of the hop.
    void served(ExanetPacket& pkt, unsigned flits, sc_core::sc_time ready, sc_core::sc_time start,
                sc_core::sc_time end) {
        queue_ns_.add(to_ns(start - ready));
        busy_us_.add(to_us(end - start));
        packets_.inc();
        flits_.inc(flits);
        payload_bytes_.inc(pkt.header.size);
        if (tracer_.enabled()) trace_span(pkt, ready, start, end, true);
        pkt.tail = end + p_.latency;
        pkt.wire = end - start;
        if (pkt.hops == 0) pkt.injected = start;
        pkt.hops++;
    }
    sc_core::sc_time busy_until_;   // one wire: every VC's packets reserve it in call order
    // Call order: the head of the packet that reserved the wire last. A
    // packet whose head is earlier and that waits for the wire waits behind
    // a packet that reached the link after it: an inversion of the call
    // order, counted (registered at the first) in `<name>.order_inversions`
    // and its queueing in `<name>.order_wait`.
    sc_core::sc_time last_head_;
    Counter* inversions_ = nullptr;
    Scalar* inversion_wait_us_ = nullptr;
    StatRegistry* stats_ = nullptr;
    void inverted(sc_core::sc_time waited);
    // Per VC: packets in its far-end buffer, (time its space is freed,
    // flits), FIFO. A cut link's: the time is its credit's stamp
    // (sc_max_time until the credit is posted; the credit is delivered,
    // and may be counted, once the simulation reaches it), and `seq` the low
    // bits of its packet message's sequence number.
    struct Held {
        Held(sc_core::sc_time f, unsigned n, std::uint32_t s = 0) : freed(f), flits(n), seq(s) {}
        sc_core::sc_time freed;
        unsigned flits;
        std::uint32_t seq;
    };
    struct VcBuffer {
        LazyDeque<Held> held;
        unsigned held_flits = 0;
        unsigned hwm = 0;
        Scalar* hwm_stat = nullptr;
        // The buffer's high-water mark: `occ` flits held, if more.
        void raise_hwm(unsigned occ) {
            if (occ > hwm) {
                hwm = occ;
                hwm_stat->set(hwm);
            }
        }
    };
    std::vector<VcBuffer> vcs_;
    // Time order: the wire's reservations and, per VC, the space held in
    // the far-end buffer (each packet from its start on the link to its
    // freeing); a cut link's, as the list of its packets, whose credits may
    // not have come back yet (freed at sc_max_time until they do; `seq` the
    // low bits of the packet message's sequence number, as Held's).
    WireCalendar wire_;
    std::vector<HeldSpace> timed_;
    // The starts timed_ keeps after the present (keep_starts_for_arrivals):
    // those a far router's input still has to count.
    sc_core::sc_time held_shift_;
    struct Timed {
        sc_core::sc_time in, freed;
        unsigned flits;
        std::uint32_t seq;
    };
    std::vector<std::vector<Timed>> cut_timed_;
    // Earliest time >= s at which the wire is idle for the whole packet.
    sc_core::sc_time gap_from(sc_core::sc_time s, unsigned flits, sc_core::sc_time tail) {
        return wire_.gap_from(s, serialise_last(flits), tail + flit_time_);
    }
    sc_core::sc_time gap_from(sc_core::sc_time s, unsigned flits, sc_core::sc_time tail) const {
        return wire_.gap_from(s, serialise(flits), tail + flit_time_);
    }
    // carry() in call order (and exact time order's inject()), and in time order. Lined: a link of a system
    // with cut links (its calls may wait and take turns, lines_).
    template <bool Lined>
    void in_call_order(tlm::tlm_generic_payload& gp, class ExanetPacket* pkt, sc_core::sc_time& delay,
                       sc_core::sc_time now, sc_core::sc_time head_in, unsigned flits, unsigned vc);
    void lined_call_order(tlm::tlm_generic_payload& gp, class ExanetPacket* pkt, sc_core::sc_time& delay,
                          sc_core::sc_time now, sc_core::sc_time head_in, unsigned flits, unsigned vc);
    template <bool Lined>
    void transport_timed(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, class ExanetPacket& pkt, unsigned vc);
    void lined_time_order(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, class ExanetPacket& pkt, unsigned vc);
    // Both orders' last step: the packet to the far end (link.cpp).
    void hand_over(tlm::tlm_generic_payload& gp, class ExanetPacket& pkt, sc_core::sc_time& d);
    void carry_timed(tlm::tlm_generic_payload& gp, class ExanetPacket& pkt, sc_core::sc_time& delay);
    void carry_untimed(tlm::tlm_generic_payload& gp, class ExanetPacket* pkt, sc_core::sc_time& delay);
    bool timed_alone_ = false;   // time order, no line: carry() is carry_timed()

    // Cut links (cut_link.hpp). Every link of a system with them: its line
    // (may_wait), a cut link's one per VC; a cut link: the near end's other
    // half and the far end.
    std::unique_ptr<LineStats> line_stats_;
    std::vector<std::unique_ptr<Turnstile>> lines_;
    bool lined_ = false;   // lines_ is not empty
    Turnstile* line_of(unsigned vc) const {
        return lines_.empty() ? nullptr : lines_[lines_.size() == 1 ? 0 : vc].get();
    }
    std::unique_ptr<CutLinkNear> cut_;
    std::unique_ptr<CutLinkEnd> cut_far_;   // "far", a child module (not with far_elsewhere)
    // A cut link: what `out` is bound to (nothing calls it: the far end,
    // here or on another rank, has its own socket).
    std::unique_ptr<tlm_utils::passthrough_target_socket<Link>> nowhere_;
    void nowhere(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // Call order: waits (in `line`, VC `vc`'s) until the credits the credit
    // loop of carry() pops are delivered.
    void await_credits(Turnstile& line, unsigned vc, VcBuffer& buf, unsigned flits);
    // A call that waited: `start`, or the present if that is later (the
    // packet is not taken as ready before its turn came).
    sc_core::sc_time turn_start(Turnstile& line, sc_core::sc_time start);
    // Time order: the earliest time >= head at which `flits` more fit, as
    // credit_from with every credit known; waits for credits not delivered
    // yet until the answer no longer depends on them.
    sc_core::sc_time credit_delivered(Turnstile& line, unsigned vc, const std::vector<Timed>& held, unsigned flits,
                                      sc_core::sc_time head);
    // The space `held` holds as the near end knows it at `now`: an
    // undelivered credit's space freed at sc_max_time (`lower`: at the
    // earliest it can be).
    const HeldSpace& known_view(const std::vector<Timed>& held, sc_core::sc_time now, bool lower) const;
    mutable std::unique_ptr<HeldSpace> view_;   // made at a cut link's first use
    // Posts the packet to the far end, counts its space held and leaves
    // `line`.
    void post_cut(Turnstile& line, tlm::tlm_generic_payload& gp, ExanetPacket& pkt, unsigned vc, unsigned flits,
                  sc_core::sc_time start, bool timed);
    // A credit message: its packet's entry gets the stamp.
    bool record_credit(const CreditMessage& c);
    // The packet's span on the link's track (tracing on), out of the hot
    // path's frame: its wire time [start, end) and when it was ready to
    // start here (`ready`: each link's service is audited from these,
    // scripts/audit_links.py); with_vc: time order's span names the VC too.
    void trace_span(const class ExanetPacket& pkt, sc_core::sc_time ready, sc_core::sc_time start, sc_core::sc_time end,
                    bool with_vc);

    // Exact time order (hop_link.cpp).
    struct Hops;
    // A network interface's packet: copied into the kernel's pool and queued
    // (its sending process's queue); `delay` on return is when it may
    // present its next (this one's serialisation after its head, or after
    // its queue's last). Waits while that queue is full; with a source
    // (accept_from) keeps the packet instead and returns true once the
    // source has ended (keep(), admit()).
    bool inject(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time& delay, PacketTrain* src = nullptr);
    // A packet taken into its sender's queue `qi` with its head at `head`,
    // `now` the present (inject(), admit()).
    void enter(unsigned qi, HopPacket& hp, sc_core::sc_time head, sc_core::sc_time now);
    // A full queue's packet kept for its source (PacketTrain), and taken
    // in at `at` once its queue has room, its source then going on.
    HopPacket& keep(unsigned qi, tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_core::sc_time head,
                    PacketTrain& src);
    void room_for_kept(unsigned qi, sc_core::sc_time start);
    void admit(unsigned qi, sc_core::sc_time at);
    void queue_packet(unsigned q, HopPacket& hp);
    void take_credits(sc_core::sc_time now);
    // The first time at which VC `vc` has `flits` credits, those on their
    // way counted at their times (0: now; max_sim_time(): not with what is
    // on its way).
    sc_core::sc_time credits_for(unsigned vc, unsigned flits) const;
    // credits_for beyond the credits back now (`c` of them), out of line.
    sc_core::sc_time credits_on_way(unsigned vc, unsigned flits, unsigned c) const;
    // Starts every packet the wire, the credits and the present allow
    // (start_packets), then takes in the kept packets that made room for
    // now (admit_now).
    void serve(sc_core::sc_time now);
    void start_packets(sc_core::sc_time now);
    void start_packets_inline(sc_core::sc_time now);
    void admit_now(sc_core::sc_time now);
    // Serves now if no other event of the present is queued; else posts a
    // Serve event for now (it then sees them all).
    void serve_soon(sc_core::sc_time now);
    void post_serve(sc_core::sc_time at);
    // The packet's head reached the far end.
    void arrive(HopPacket& hp, sc_core::sc_time head);
    // Its arrival at the far router made at its start here
    // (Router::exact_ahead_inline): queued at its output link `out`, ready
    // then, without an Arrival event (README.md, *Arrivals made ahead*).
    void arrive_ahead(HopPacket& hp, sc_core::sc_time head);
    void count_transaction_at(sc_core::sc_time at);   // held for a region of interest (arrive_ahead)
    // The far router's input's count of the packets whose arrival was
    // made ahead, in their order, through `upto` (at its start on its
    // output link: every freeing of the input before its head is known by
    // then); settle_ahead_until: those due by `t` (the run's end).
    void settle_ahead(const HopPacket& upto);
    // A start's freeing of the place its packet waited in (start_packets).
    void free_where_waited(HopPacket& hp, sc_core::sc_time start, sc_core::sc_time end);
    void settle_one(HopPacket& hp);
    void deliver(HopPacket& hp);   // a Deliver event: here, or by the lane's thread
    void deliver_here(HopPacket& hp, sc_core::sc_time head);
    void deliver_run(unsigned vc);
    unsigned vc_of(const HopPacket& hp) const;
    sc_core::sc_time earliest_exact(unsigned vc, unsigned flits, sc_core::sc_time head) const;

    // What every hop reads, together (a Link is some 1.4 KB of SystemC
    // module; on a large torus each line of it a hop touches is a miss of
    // the caches): exact time order's state, the parameters and the
    // statistics a packet's service updates.
    alignas(64) std::unique_ptr<Hops> hop_;
    // A cut link in exact time order: its near end's messages, and its far
    // end when it is here (cut_hops_here).
    std::unique_ptr<HopCutNear> hop_cut_;
    std::unique_ptr<HopCutFar> hop_cut_far_;
    unsigned ser_flits_ = 0;   // serialise_last's packet length (0: none yet)
    sc_core::sc_time ser_time_;

    LinkParams p_;
    Router* far_ = nullptr;   // connect(): the router at the far end, its input far_port_
    PacketTarget* sink_ = nullptr;   // connect(): the network interface at the far end
    int far_port_ = 0;
    sc_core::sc_time flit_time_;
    sc_dt::uint64 flit_ps_;
    Tracer& tracer_;
    Tracer::Track track_;
    Counter& packets_;
    Counter& flits_;
    Counter& payload_bytes_;
    Counter& transactions_;
    Scalar& busy_us_;
    Scalar& credit_stall_us_;
    Histogram& queue_ns_;
    Counter& vc_errors_;
};

}   // namespace vrdmasim
