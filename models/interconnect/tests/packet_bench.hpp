// Test modules shared by the interconnect tests (link_test.cpp,
// router_test.cpp): a packet source (an initiator that sends ExaNet packets
// following the transport convention of link.hpp) and a packet sink (a far
// end that records arrival times, returns a configurable credit time and
// checks that its input buffer never holds more flits than it has).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "model_env.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/interconnect/link.hpp"
#include "models/interconnect/router.hpp"

namespace vrdmasim_test {

using namespace vrdmasim;
using sc_core::sc_time;

inline sc_time ns(double v) { return sc_time(v, sc_core::SC_NS); }
inline sc_time us(double v) { return sc_time(v, sc_core::SC_US); }

// The parameters of the interconnect: the router and the classes of link.
inline const ParamDecls kNetParams = {Router::declare_params, Link::declare_params};

// Configuration, statistics and tracer of one bench.
struct NetEnv : ModelEnv {
    NetEnv() : ModelEnv(kNetParams, {{"router.latency", "100ns"}}) {}
};

inline LinkParams link_params(double rate_bps, sc_time latency, unsigned buffer_flits) {
    LinkParams p;
    p.rate_bps = rate_bps;
    p.latency = latency;
    p.buffer_flits = buffer_flits;
    return p;
}

// Flits of a packet with `payload` bytes: header + payload flits + footer.
inline unsigned flits_of(unsigned payload) { return 2 + (payload + kFlitBytes - 1) / kFlitBytes; }

// Deterministic payload bytes for packet `seq` of source `src`.
inline std::vector<unsigned char> payload_bytes(unsigned size, unsigned src, unsigned seq) {
    std::vector<unsigned char> v(size);
    for (unsigned k = 0; k < size; ++k) v[k] = static_cast<unsigned char>(src * 31 + seq * 7 + k);
    return v;
}

// What to send.
struct PacketSpec {
    unsigned size = 256;   // payload bytes
    unsigned src = 0, dst = 1;   // node indices
    std::int64_t dst_coord = -1;   // header coordinates (-1: the node indices)
    std::int64_t src_coord = -1;
    unsigned seq = 0;
    PacketType type = PacketType::RdmaWrite;
    unsigned vc = 0;   // header VC
    sc_time head_delay;   // head available at now + head_delay
    sc_time tail_lag;   // tail available head_lag after the head (0: all at once)
    bool with_extension = true;
};

struct Sent {
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
    sc_time head;   // absolute, as offered
    sc_time credit;   // absolute, as returned: the tail has left this first hop
};

// An initiator sending packets from an SC_THREAD running `script`.
class PacketSource : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<PacketSource> out;
    // Packets leave by `path`: through `out`, or (path.direct) straight to
    // the link `out` is bound to, as a PLDMA sends them.
    PacketOut path{out};
    std::function<void(PacketSource&)> script;
    std::vector<Sent> sent;

    PacketSource(sc_core::sc_module_name n, std::function<void(PacketSource&)> s)
        : sc_module(n), out("out"), script(std::move(s)) {
        SC_HAS_PROCESS(PacketSource);
        SC_THREAD(run);
    }

    Sent send(const PacketSpec& s) {
        std::vector<unsigned char> data = payload_bytes(s.size, s.src, s.seq);
        ExanetPacket pkt;
        pkt.header.type = s.type;
        pkt.header.vc = static_cast<std::uint8_t>(s.vc);
        pkt.header.size = static_cast<std::uint16_t>(s.size);
        pkt.header.dst_va = 0x1000 + 256ull * s.seq;
        pkt.header.dst_coord = static_cast<std::uint32_t>(s.dst_coord < 0 ? s.dst : s.dst_coord);
        pkt.footer.seq = static_cast<std::uint16_t>(s.seq);
        pkt.footer.src_coord = static_cast<std::uint32_t>(s.src_coord < 0 ? s.src : s.src_coord);
        pkt.transfer = 1;
        pkt.src_node = s.src;
        pkt.dst_node = s.dst;
        const sc_time now = sc_core::sc_time_stamp();
        pkt.tail = now + s.head_delay + s.tail_lag;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(pkt.header.dst_va);
        gp.set_data_ptr(data.data());
        gp.set_data_length(s.size);
        gp.set_streaming_width(s.size);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        if (s.with_extension) gp.set_extension(&pkt);
        sc_time d = s.head_delay;
        if (s.with_extension) path.send(gp, pkt, d);
        else out->b_transport(gp, d);
        if (s.with_extension) gp.clear_extension(&pkt);
        Sent r{gp.get_response_status(), now + s.head_delay, now + d};
        sent.push_back(r);
        return r;
    }

private:
    void run() { script(*this); }
};

// The far end of a link (or a router output): records every packet and says
// when its buffer space is free again (`free_at`, default: as its tail
// arrives). With `capacity_flits` set it checks, at every head arrival, that
// the packets still held plus the new one fit in that many flits.
// A PacketTarget too: a Link connected to it (Link::connect(in, sink))
// calls accept() directly, counted in direct_calls.
class PacketSink : public sc_core::sc_module, public PacketTarget {
public:
    tlm_utils::simple_target_socket<PacketSink> in;

    struct Arrival {
        unsigned src, dst, size, seq, flits, hops;
        sc_time head, tail, free;   // absolute
        bool data_ok;   // payload bytes as the source made them
        sc_time called;   // sc_time_stamp() when the packet was handed over
    };
    std::vector<Arrival> arrivals;
    std::function<sc_time(const Arrival&)> free_at = [](const Arrival& a) { return a.tail; };

    unsigned capacity_flits = 0;   // 0: no check
    unsigned max_occupancy = 0;   // flits held, the new packet included
    unsigned violations = 0;
    unsigned direct_calls = 0;   // packets that came by accept(), not the socket
    bool may_wait = true;   // what accept_may_wait() says (it never waits)

    explicit PacketSink(sc_core::sc_module_name n) : sc_module(n), in("in") {
        in.register_b_transport(this, &PacketSink::b_transport);
    }

    void accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay) override {
        ++direct_calls;
        arrive(gp, &pkt, delay);
    }
    bool accept_may_wait() const override { return may_wait; }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
        auto* p = gp.get_extension<ExanetPacket>();
        if (!p) {
            gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
            return;
        }
        arrive(gp, p, delay);
    }
    void arrive(tlm::tlm_generic_payload& gp, ExanetPacket* p, sc_time& delay) {
        const sc_time now = sc_core::sc_time_stamp();
        Arrival a{p->src_node, p->dst_node, p->header.size, p->footer.seq, p->flits(), p->hops,
                  now + delay, p->tail,     sc_time(),      false,         now};
        const auto expect = payload_bytes(a.size, a.src, a.seq);
        a.data_ok = gp.get_data_length() == a.size && std::equal(expect.begin(), expect.end(), gp.get_data_ptr());
        a.free = free_at(a);
        unsigned held = 0;
        for (const auto& b : arrivals)
            if (b.free > a.head) held += b.flits;
        if (held + a.flits > max_occupancy) max_occupancy = held + a.flits;
        if (capacity_flits && held + a.flits > capacity_flits) ++violations;
        arrivals.push_back(a);
        delay = a.free - now;
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

}   // namespace vrdmasim_test
