// Link: one direction of a serial link, together with the input buffer at its
// far end, whose free space it tracks with credits. See README.md.
//
// Transport convention for packets (Link, Router and network interfaces):
//   on entry, `delay` is when the packet's head is available at this hop
//   (relative to sc_time_stamp()), and the extension's `tail` is when its
//   tail is (absolute);
//   on return, `delay` is when the packet's tail has left this hop's input
//   buffer, freeing its space: the time the upstream hop gets its credit back.
// All of this is computed in one nested call chain, without wait(): a packet
// costs one call per hop.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "core/context.hpp"

namespace vrdmasim {

struct LinkParams {
    double rate_bps = 16e9;              // per direction, all lanes together
    sc_core::sc_time latency;            // head in at one end -> head out at the other
    unsigned buffer_flits = 64;          // input buffer at the far end
};

class Link : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<Link> in;
    tlm_utils::simple_initiator_socket<Link> out;

    // Declares section `section` (rate, latency, buffer) with the given
    // defaults and help texts, so every class of link has its own parameters.
    static void declare_params(ParamRegistry& reg, const std::string& section,
                               const std::string& description, const std::string& rate,
                               const std::string& rate_help, const std::string& latency,
                               const std::string& latency_help, const std::string& buffer,
                               const std::string& buffer_help);
    static LinkParams params_from(const Config& cfg, const std::string& section);

    Link(sc_core::sc_module_name name, const SimContext& ctx, const LinkParams& p,
         const std::string& group, const std::string& track);

    sc_core::sc_time flit_time() const { return flit_time_; }
    // Time spent serialising packets so far (the busy_time statistic), in us.
    double busy_us() const { return busy_us_.value(); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    sc_core::sc_time serialise(unsigned flits) const {
        return sc_core::sc_time::from_value(flit_ps_ * flits);
    }

    LinkParams p_;
    sc_core::sc_time flit_time_;
    sc_dt::uint64 flit_ps_;
    sc_core::sc_time busy_until_;
    // Packets in the far-end buffer: (time its space is freed, flits), FIFO.
    std::deque<std::pair<sc_core::sc_time, unsigned>> held_;
    unsigned held_flits_ = 0;

    Tracer& tracer_;
    Tracer::Track track_;
    Counter& packets_;
    Counter& flits_;
    Counter& payload_bytes_;
    Counter& transactions_;
    Scalar& busy_us_;
    Scalar& credit_stall_us_;
    Histogram& queue_ns_;
};

}  // namespace vrdmasim
