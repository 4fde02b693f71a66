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
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "core/context.hpp"

namespace vrdmasim {

struct LinkParams {
    double rate_bps = 16e9;              // per direction, all lanes together (rate per lane x lanes)
    sc_core::sc_time latency;            // head in at one end -> head out at the other
    unsigned buffer_flits = 64;          // input buffer at the far end, per VC
    unsigned vcs = 1;                    // VC buffers at the far end (1: one buffer shared by every VC)
    unsigned lanes = 1;                  // informational: rate_bps already includes them
};

class Link : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<Link> in;
    tlm_utils::simple_initiator_socket<Link> out;

    // Declares section `section` (rate per lane, lanes, latency, buffer)
    // with the given defaults and help texts, so every class of link has its
    // own parameters. `lanes` defaults to 1 lane (rate = the whole link).
    static void declare_params(ParamRegistry& reg, const std::string& section,
                               const std::string& description, const std::string& rate,
                               const std::string& rate_help, const std::string& latency,
                               const std::string& latency_help, const std::string& buffer,
                               const std::string& buffer_help, const std::string& lanes = "1",
                               const std::string& lanes_help = "serial lanes per direction, each at `rate`");
    // Declares the classes of link of an ExaNeSt system, each its own section:
    // link (within a QFDB), mezz-link, board-link and ni (engine <-> router).
    static void declare_classes(ParamRegistry& reg);
    // rate_bps = rate x lanes; vcs = 1 (the builder sets the router's VCs).
    static LinkParams params_from(const Config& cfg, const std::string& section);

    Link(sc_core::sc_module_name name, const SimContext& ctx, const LinkParams& p,
         const std::string& group, const std::string& track);

    sc_core::sc_time flit_time() const { return flit_time_; }
    const LinkParams& params() const { return p_; }
    // Most flits the link has counted in VC `vc`'s far-end buffer (the new
    // packet included): never above params().buffer_flits.
    unsigned buffer_hwm(unsigned vc) const { return vc < vcs_.size() ? vcs_[vc].hwm : 0; }
    // Time spent serialising packets so far (the busy_time statistic), in us.
    double busy_us() const { return busy_us_.value(); }
    // Packets carried so far.
    std::uint64_t packets() const { return packets_.value(); }

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    sc_core::sc_time serialise(unsigned flits) const {
        return sc_core::sc_time::from_value(flit_ps_ * flits);
    }

    LinkParams p_;
    sc_core::sc_time flit_time_;
    sc_dt::uint64 flit_ps_;
    sc_core::sc_time busy_until_;   // one wire: every VC's packets reserve it in call order
    // Per VC: packets in its far-end buffer, (time its space is freed, flits), FIFO.
    struct VcBuffer {
        std::deque<std::pair<sc_core::sc_time, unsigned>> held;
        unsigned held_flits = 0;
        unsigned hwm = 0;
        Scalar* hwm_stat = nullptr;
    };
    std::vector<VcBuffer> vcs_;

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

}  // namespace vrdmasim
